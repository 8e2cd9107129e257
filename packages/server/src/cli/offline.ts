// The entry of the CLI's `offline.cjs` bundle (scripts/bundle-cli.mjs): the pure commands and `next`.
import type { CliIo, Commands } from './io.js';
import { PURE_COMMANDS, runCommand } from './pure.js';

/** The offline commands: the pure ones and `next`, which leases its node from a registry. */
export const OFFLINE_COMMANDS: Commands = {
  next: async () => (await import('./commands/next.js')).nextCommand,
  ...PURE_COMMANDS,
};

/** Runs one of the offline commands (the `offline.cjs` bundle's entry point). */
export function runOffline(io: CliIo): Promise<number> {
  return runCommand(OFFLINE_COMMANDS, io);
}
