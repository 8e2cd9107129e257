// `@flurry/server`: the Flurry ID service and the `flurry` CLI. Every export is named here.
// The service.
export { startService, CLOCK_SANITY_MS, SERVICE_ON_EXHAUSTED } from './service.js';
export type { RunningService, ServiceLogger } from './service.js';
// Settings (config/).
export { loadServeConfig, serveHelp, unknownEnvWarnings } from './config/index.js';
export type { EnvWarning, LogLevel, ServeConfig, SettingKey, SettingValues } from './config/index.js';
export { chooseLayout, parseNodePins } from './layout-choice.js';
export type { LayoutChoice } from './layout-choice.js';
// Errors.
export { ServerErrorCode, serverError, httpStatusOf, isRetryable } from './errors.js';
export type { ServerErrorCodeValue } from './errors.js';
// HTTP, to embed the handler in another server.
export { createServiceCore, httpContext } from './service-core.js';
export type { ServiceCore } from './service-core.js';
export { leaseGenerator } from './service.js';
export { createRequestHandler } from './http/handler.js';
export { createHttpServer, MAX_HEADER_BYTES } from './http/server.js';
export type { HttpContext, IdSource, Logger } from './http/context.js';
export type { PublicIds } from './public-ids/codec.js';
export { LeasedIssuer } from './issuing.js';
export type { IssuerOptions, EventLogger } from './issuing.js';
export { ServiceMetrics } from './metrics.js';
export type { MetricSources } from './metrics.js';
export { openApiDocument, openApiJson } from './openapi.js';
// Leaf compatibility.
export { leafDate, leafWorkerId, leafDecodeBody } from './http/routes/leaf.js';
// Thrift (Twitter Snowflake compatible).
export { startThriftServer } from './thrift/server.js';
export type { ThriftServer, ThriftServerOptions, ThriftLogger, ThriftNodeSource } from './thrift/server.js';
export {
  SnowflakeProcessor,
  SnowflakeCallError,
  ThriftProtocolViolation,
  USER_AGENT_PATTERN,
} from './thrift/snowflake-processor.js';
export type { SnowflakeHandler } from './thrift/snowflake-processor.js';
// memcached (katsubushi compatible).
export { startMemcachedServer, MEMCACHED_COMMANDS } from './memcached/server.js';
export type { MemcachedServer, MemcachedServerOptions, MemcachedLogger } from './memcached/server.js';
export { ProtocolMetrics } from './protocol-metrics.js';
export type { ProtocolRecorder } from './protocol-metrics.js';
// The CLI.
export { runCli, MAIN_HELP } from './cli/main.js';
