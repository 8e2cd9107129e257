// What a CLI command gets (arguments, environment, output streams: commands run in-process too) and its helpers.
import { FlurryError } from '@flurry/core/errors';
import { failureKind, serverError } from '../errors.js';
import type { Layout } from '@flurry/core/layout';
import type { EnvWarning } from '../config/help.js';
import { chooseLayout } from '../layout-choice.js';
import { flagsOf, hasFlag, lastString, parseCommandLine, type FlagSpecs, type ParsedCommandLine } from './args.js';
import type { CliOutput } from './fd-output.cjs';

export interface CliIo {
  readonly argv: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly stdout: CliOutput;
  readonly stderr: CliOutput;
  /** The clock (Unix ms) for end-of-life checks; `Date.now` when absent. */
  readonly now?: () => number;
}

/** The flags that name a layout: `--layout PRESET` or `--fields … [--epoch] [--unit]`. */
export const LAYOUT_FLAGS: FlagSpecs = Object.freeze(flagsOf('string', 'layout', 'fields', 'epoch', 'unit'));

/** A command: runs with the arguments after its name and resolves to the exit code. */
export type Command = (io: CliIo) => Promise<number>;
export type Commands = Readonly<Record<string, () => Promise<Command>>>;

/** Parses `io.argv` (`flags`, `--help`), prints `help` or runs `run`; `warnEnv`: warn of unknown `FLURRY_*` first. */
export function command(
  flags: FlagSpecs,
  help: string,
  run: (args: ParsedCommandLine, io: CliIo) => Promise<void>,
  warnEnv = false,
): Command {
  return async (io) => {
    const args = parseCommandLine(io.argv, { ...flags, help: { type: 'boolean', short: 'h' } });
    if (warnEnv) await warnUnknownEnv(io);
    await (hasFlag(args, 'help') ? write(io.stdout, help) : run(args, io));
    return 0;
  };
}

/** The layout the {@link LAYOUT_FLAGS} name (`layout` overrides `--layout`). */
export function layoutOf(args: ParsedCommandLine, layout = lastString(args, 'layout')): Layout {
  return chooseLayout({
    layout,
    fields: lastString(args, 'fields'),
    epoch: lastString(args, 'epoch'),
    unit: lastString(args, 'unit'),
  });
}

/** `--format`'s value when it is one of `allowed`, else `FLURRY_E_USAGE` naming them (`what`: `a format`, `a UUID form`). */
export function formatFlag<T extends string>(value: string, allowed: readonly T[], what: string): T {
  if ((allowed as readonly string[]).includes(value)) return value as T;
  const shown = value.slice(0, 24);
  throw serverError('USAGE', `--format "${shown}" is not ${what}; use one of ${allowed.join(', ')}`, {
    value: shown,
    allowed,
  });
}

/** Writes text to a stream and resolves once it is accepted (honours back-pressure). */
export function write(stream: CliOutput, text: string | Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => {
    const ok = stream.write(text, (err) => (err ? reject(err) : undefined));
    if (ok) resolve();
    else {
      stream.once('drain', () => resolve());
      stream.once('error', reject);
    }
  });
}

/** The exit code for an error: 2 for bad input, 1 otherwise (`failureKind` in ../errors.ts). */
export function exitCodeFor(err: unknown): number {
  return failureKind(err) === 'bad-input' ? 2 : 1;
}

/** The one-line message printed on stderr for an error: `flurry: CODE: message`. */
export function errorLine(err: unknown): string {
  if (err instanceof FlurryError) return `flurry: ${err.code}: ${err.message}\n`;
  return `flurry: FLURRY_E_INTERNAL: ${err instanceof Error ? err.message : String(err)}\n`;
}

/** Warns on stderr about each `FLURRY_*` variable that is no setting, naming the closest; returns the warnings. */
export async function warnUnknownEnv(io: CliIo): Promise<EnvWarning[]> {
  // The settings table is loaded only when there is a FLURRY_* variable to check.
  if (!Object.keys(io.env).some((k) => k.toUpperCase().startsWith('FLURRY_'))) return [];
  const { unknownEnvWarnings } = await import('../config/help.js');
  const warnings = unknownEnvWarnings(io.env);
  for (const w of warnings) await write(io.stderr, `flurry: warning: ${w.message}\n`);
  return warnings;
}

/** Calls `stop` on SIGTERM and SIGINT, hands SIGHUP to `onHup` when given; returns what removes the listeners. */
export function onSignals(stop: (signal: string) => void, onHup?: () => void): () => void {
  const handlers = new Map<NodeJS.Signals, () => void>(
    (['SIGTERM', 'SIGINT'] as const).map((signal) => [signal, () => stop(signal)]),
  );
  if (onHup) handlers.set('SIGHUP', onHup);
  handlers.forEach((handler, signal) => process.on(signal, handler));
  return () => handlers.forEach((handler, signal) => process.off(signal, handler));
}
