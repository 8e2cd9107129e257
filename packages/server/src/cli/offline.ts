/**
 * The commands that need no service: the pure ones (`pure.ts`: `decode`, `layout`, `key`,
 * `public`) and `next`, which leases its node from the registry, then issues. This file is
 * the entry of the CLI's `offline.cjs` bundle (one CommonJS file, built by
 * scripts/bundle-cli.mjs after `tsc`; each registry driver in it is initialised, and its npm
 * client required, only when its registry is opened), which the bin (`bin.cts`) runs for
 * `next` when it is at least as new as the compiled packages (`launch.cts`); `main.ts`
 * otherwise.
 */
import type { CliIo } from './io.js';
import { PURE_COMMANDS, runCommand, type Command } from './pure.js';

/** The offline commands: the pure ones and `next`, which leases its node from a registry. */
export const OFFLINE_COMMANDS: Readonly<Record<string, () => Promise<Command>>> = {
  next: async () => (await import('./commands/next.js')).nextCommand,
  ...PURE_COMMANDS,
};

/** Runs one of the offline commands (the `offline.cjs` bundle's entry point). */
export function runOffline(io: CliIo): Promise<number> {
  return runCommand(OFFLINE_COMMANDS, io);
}
