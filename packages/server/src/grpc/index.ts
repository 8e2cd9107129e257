/** gRPC, gRPC-Web and Connect on `flurry serve --grpc-port` (proto/flurry/v1/id_service.proto). */
export { startGrpcServer } from './server.js';
export type { GrpcServer } from './server.js';
export type { IdServiceContext } from './id-service.js';
