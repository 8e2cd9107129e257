/** The Twitter Snowflake-compatible Thrift service of `flurry serve --thrift-port`. */
export { startThriftServer, THRIFT_SERVER_OPTION_NAMES } from './server.js';
export type { ThriftServer, ThriftServerOptions, ThriftLogger, ThriftNodeSource } from './server.js';
export {
  SnowflakeProcessor,
  SnowflakeCallError,
  ThriftProtocolViolation,
  USER_AGENT_PATTERN,
} from './snowflake-processor.js';
export type { SnowflakeHandler } from './snowflake-processor.js';
