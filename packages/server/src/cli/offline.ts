/**
 * The commands that need no service: the pure ones (`pure.ts`: `decode`, `layout`, `key`,
 * `public`) and `next`, which leases its node from the registry, then issues. This file is
 * the entry of the CLI's ES module bundle (`dist/cli-bundle/offline.js`, an entry and lazily
 * loaded chunks, one per command and registry driver, built by scripts/bundle-cli.mjs after
 * `tsc`), which the bin (`bin.cts`) runs for `next` when it is at least as new as the
 * compiled packages (`launch.cts`); `main.ts` otherwise.
 *
 * @example
 * ```ts
 * const code = await runOffline({ argv: ['next', '-n', '3'], env: process.env, stdout: process.stdout, stderr: process.stderr });
 * ```
 */
import type { CliIo } from './io.js';
import { PURE_COMMANDS, runCommand, type Command } from './pure.js';

/**
 * The offline commands: the pure ones and `next`, which leases its node from a registry.
 *
 * @example
 * ```ts
 * const next = await OFFLINE_COMMANDS.next();
 * ```
 */
export const OFFLINE_COMMANDS: Readonly<Record<string, () => Promise<Command>>> = {
  next: async () => (await import('./commands/next.js')).nextCommand,
  ...PURE_COMMANDS,
};

/**
 * Runs one of the offline commands (the ES module bundle's entry point).
 *
 * @example
 * ```ts
 * process.exitCode = await runOffline({ argv: ['layout'], env: process.env, stdout: process.stdout, stderr: process.stderr });
 * ```
 */
export function runOffline(io: CliIo): Promise<number> {
  return runCommand(OFFLINE_COMMANDS, io);
}
