/**
 * The settings of `flurry serve`: the one table (settings.ts), merging and validation (load.ts),
 * `--help` (help.ts) and warnings about misspelt `FLURRY_*` variables (env-hints.ts). Only what
 * callers use is exported here; the table itself stays internal.
 */
export { loadServeConfig, registryOptionsOf, SERVE_CONFIG_KEYS, type ServeConfig } from './load.js';
export { serveHelp, serveFlagSpecs } from './help.js';
export { unknownEnvWarnings, type EnvWarning } from './env-hints.js';
export type { LogLevel, SettingKey, SettingValues } from './settings.js';
