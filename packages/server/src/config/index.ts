/**
 * The settings of `flurry serve`: one table (settings.ts) names each setting's flag,
 * `FLURRY_*` variable, config-file key, type, default and allowed values; load.ts merges
 * flags > environment > config file (JSON) > defaults and validates every value at start-up;
 * help.ts prints the table for `flurry serve --help`; env-hints.ts warns about misspelt
 * `FLURRY_*` variables. Only what callers use is exported here; the table itself stays internal.
 */
export { loadServeConfig, SERVE_CONFIG_KEYS, type ServeConfig } from './load.js';
export { serveHelp, serveFlagSpecs } from './help.js';
export { unknownEnvWarnings, closestName, type EnvWarning } from './env-hints.js';
export type { LogLevel, SettingKey, SettingValues } from './settings.js';
