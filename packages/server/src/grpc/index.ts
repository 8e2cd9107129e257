/** gRPC, gRPC-Web and Connect on `flurry serve --grpc-port` (proto/flurry/v1/id_service.proto). */
export { startGrpcServer, GRPC_SERVER_OPTION_NAMES } from './server.js';
export type { GrpcServer, GrpcServerOptions, GrpcLogger } from './server.js';
export type { IdServiceContext } from './id-service.js';
export { ERROR_CODE_KEY, grpcCodeOf, toConnectError, codeName, protocolOf } from './status.js';
export type { CallRecorder } from './status.js';
