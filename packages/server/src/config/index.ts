// The settings of `flurry serve`: the table (settings.ts), loading (load.ts), `--help` (help.ts).
export { loadServeConfig, registryOptionsOf, SERVE_CONFIG_KEYS, type ServeConfig } from './load.js';
export { serveHelp, serveFlagSpecs, unknownEnvWarnings, type EnvWarning } from './help.js';
export type { LogLevel, SettingKey, SettingValues } from './settings.js';
