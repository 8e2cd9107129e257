/**
 * The commands that need no service: `decode`, `layout`, `key`, `public` and `next` (which
 * leases its node from the registry, then issues). They are also the entry of the CLI's
 * bundle (`dist/cli-bundle/offline.js`, built by scripts/bundle-cli.mjs after `tsc`): one
 * file and a few chunks instead of 20 to 70 modules, which is most of a cold start on Node 20
 * (see benchmarks/cli-start.mjs). `bin.ts` loads the bundle for these commands when it is at
 * least as new as the compiled packages (`launch.ts`), and `main.ts` otherwise.
 *
 * @example
 * ```ts
 * const code = await runOffline({ argv: ['decode', '1859214170478923776'], env: process.env, stdout: process.stdout, stderr: process.stderr });
 * ```
 */
import { serverError } from '../errors.js';
import { errorLine, exitCodeFor, type CliIo } from './io.js';

/**
 * A command: runs with the arguments after its name and resolves to the exit code.
 *
 * @example
 * ```ts
 * const layout: Command = async (io) => (await import('./commands/layout.js')).layoutCommand(io);
 * ```
 */
export type Command = (io: CliIo) => Promise<number>;

/**
 * The offline commands' modules, each loaded only when it runs.
 *
 * @example
 * ```ts
 * const decode = await OFFLINE_COMMANDS.decode();
 * ```
 */
export const OFFLINE_COMMANDS: Readonly<Record<string, () => Promise<Command>>> = {
  next: async () => (await import('./commands/next.js')).nextCommand,
  decode: async () => (await import('./commands/decode.js')).decodeCommand,
  layout: async () => (await import('./commands/layout.js')).layoutCommand,
  key: async () => (await import('./commands/key.js')).keyCommand,
  public: async () => (await import('./commands/public.js')).publicCommand,
};

/**
 * Runs `argv[0]` from `commands` with the rest of `argv`; resolves to the exit code and never
 * throws: an error is printed on `io.stderr` (`flurry: FLURRY_E_…: message`), exit 2 for bad
 * input and 1 otherwise.
 *
 * @example
 * ```ts
 * const code = await runCommand(OFFLINE_COMMANDS, { ...io, argv: ['layout', 'leaf'] });
 * ```
 */
export async function runCommand(
  commands: Readonly<Record<string, () => Promise<Command>>>,
  io: CliIo,
): Promise<number> {
  const [command = '', ...rest] = io.argv;
  try {
    const load = Object.prototype.hasOwnProperty.call(commands, command) ? commands[command] : undefined;
    if (load === undefined) {
      throw serverError(
        'USAGE',
        `unknown command "${command.slice(0, 40)}"; commands: ${Object.keys(commands).join(', ')}. See flurry --help.`,
      );
    }
    const run = await load();
    return await run({ ...io, argv: rest });
  } catch (err) {
    io.stderr.write(errorLine(err));
    return exitCodeFor(err);
  }
}

/**
 * Runs one of the offline commands (the bundle's entry point).
 *
 * @example
 * ```ts
 * process.exitCode = await runOffline({ argv: ['layout'], env: process.env, stdout: process.stdout, stderr: process.stderr });
 * ```
 */
export function runOffline(io: CliIo): Promise<number> {
  return runCommand(OFFLINE_COMMANDS, io);
}
