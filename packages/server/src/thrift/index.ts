/**
 * The Twitter Snowflake-compatible Thrift service of `flurry serve --thrift-port`.
 *
 * @example
 * ```ts
 * import { startThriftServer } from './thrift/index.js';
 * const thriftServer = await startThriftServer({ port: 7609, generator, layout, node: generator.node });
 * ```
 */
export { startThriftServer, THRIFT_SERVER_OPTION_NAMES } from './server.js';
export type { ThriftServer, ThriftServerOptions, ThriftLogger, ThriftNodeSource } from './server.js';
export {
  SnowflakeProcessor,
  SnowflakeCallError,
  ThriftProtocolViolation,
  USER_AGENT_PATTERN,
} from './snowflake-processor.js';
export type { SnowflakeHandler } from './snowflake-processor.js';
