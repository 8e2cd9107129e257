/**
 * `@flurry/server`: the Flurry ID service (HTTP JSON, Leaf-compatible HTTP, Twitter-compatible
 * Thrift) and the `flurry` CLI.
 *
 * @example
 * ```ts
 * import { loadServeConfig, startService } from '@flurry/server';
 * import { pino } from 'pino';
 * const service = await startService(loadServeConfig(['--port', '0'], process.env), pino());
 * console.log(`listening on ${service.port}`);
 * await service.close();
 * ```
 */
export * from './errors.js';
export {
  loadServeConfig,
  serveHelp,
  unknownEnvWarnings,
  type EnvWarning,
  type LogLevel,
  type ServeConfig,
  type SettingKey,
  type SettingValues,
} from './config/index.js';
export * from './layout-choice.js';
export * from './leaf.js';
export * from './metrics.js';
export * from './openapi.js';
export * from './service.js';
/** The service as the HTTP routes see it (see http/context.ts). @example `const ctx: HttpContext = …;` */
export type { HttpContext, PublicIds, Logger } from './http/context.js';
export { createRequestHandler } from './http/handler.js';
export { createHttpServer, MAX_HEADER_BYTES } from './http/server.js';
export { runCli, MAIN_HELP } from './cli/main.js';
export * from './thrift/index.js';
