// The entry of the CLI's `pure.cjs` bundle (scripts/bundle-cli.mjs): commands that need neither service nor registry.
import { serverError } from '../errors.js';
import { errorLine, exitCodeFor, type CliIo, type Commands } from './io.js';

/** The commands that need neither the service nor a registry, each loaded only when it runs. */
export const PURE_COMMANDS: Commands = {
  decode: async () => (await import('./commands/decode.js')).decodeCommand,
  layout: async () => (await import('./commands/layout.js')).layoutCommand,
  key: async () => (await import('./commands/key.js')).keyCommand,
  public: async () => (await import('./commands/public.js')).publicCommand,
};

/** Runs `argv[0]` from `commands`; resolves to the exit code, an error printed on stderr. */
export async function runCommand(commands: Commands, io: CliIo): Promise<number> {
  const [command = '', ...rest] = io.argv;
  try {
    const load = Object.prototype.hasOwnProperty.call(commands, command) ? commands[command] : undefined;
    if (load === undefined)
      throw serverError(
        'USAGE',
        `unknown command "${command.slice(0, 40)}"; commands: ${Object.keys(commands).join(', ')}. See flurry --help.`,
      );
    const run = await load();
    return await run({ ...io, argv: rest });
  } catch (err) {
    io.stderr.write(errorLine(err));
    return exitCodeFor(err);
  }
}

/** Runs one of the pure commands (the CommonJS bundle's entry point). */
export function runPure(io: CliIo): Promise<number> {
  return runCommand(PURE_COMMANDS, io);
}
