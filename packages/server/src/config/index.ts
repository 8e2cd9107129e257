/**
 * The settings of `flurry serve`: the one table (settings.ts), merging and validation (load.ts),
 * `--help` and warnings about misspelt `FLURRY_*` variables (help.ts). The table stays internal.
 */
export { loadServeConfig, registryOptionsOf, SERVE_CONFIG_KEYS, type ServeConfig } from './load.js';
export { serveHelp, serveFlagSpecs, unknownEnvWarnings, type EnvWarning } from './help.js';
export type { LogLevel, SettingKey, SettingValues } from './settings.js';
