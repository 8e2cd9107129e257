/**
 * What a CLI command gets: its arguments, the environment and the two output streams
 * (so commands can be run in-process with captured output as well as from the bin).
 *
 * @example
 * ```ts
 * const io: CliIo = { argv: ['-n', '3'], env: process.env, stdout: process.stdout, stderr: process.stderr };
 * await nextCommand(io);
 * ```
 */
import { FlurryError } from '@flurry/core/errors';
import type { EnvWarning } from '../config/env-hints.js';
import type { FlagSpecs } from './args.js';
import type { CliOutput } from './fd-output.cjs';

/**
 * A command's inputs and outputs.
 *
 * @example
 * ```ts
 * const io: CliIo = { argv: ['layout'], env: process.env, stdout: process.stdout, stderr: process.stderr };
 * ```
 */
export interface CliIo {
  readonly argv: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly stdout: CliOutput;
  readonly stderr: CliOutput;
  /** The clock (Unix ms) for end-of-life checks; `Date.now` when absent. */
  readonly now?: () => number;
}

/**
 * The flags that name a layout: `--layout PRESET` or `--fields … [--epoch] [--unit]`.
 *
 * @example
 * ```ts
 * const spec = { ...LAYOUT_FLAGS, json: { type: 'boolean' } };
 * ```
 */
export const LAYOUT_FLAGS: FlagSpecs = Object.freeze({
  layout: { type: 'string' },
  fields: { type: 'string' },
  epoch: { type: 'string' },
  unit: { type: 'string' },
});

/**
 * Writes text to a stream and resolves once it is accepted (honours back-pressure).
 *
 * @example
 * ```ts
 * await write(io.stdout, 'hello\n');
 * ```
 */
export function write(stream: CliOutput, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const ok = stream.write(text, (err) => (err ? reject(err) : undefined));
    if (ok) resolve();
    else {
      stream.once('drain', () => resolve());
      stream.once('error', reject);
    }
  });
}

/** Error codes that mean "the input was bad": the CLI exits 2 for them, 1 for the rest. */
const BAD_INPUT =
  /^FLURRY_E_(USAGE|CONFIG|RUN_AS_ROOT|LAYOUT_|NODE_OUT_OF_RANGE|ID_|CODEC_UNKNOWN|INVALID_OPTION|TIME_OUT_OF_RANGE|BOUNDS_NOT_CONTIGUOUS|PUBLIC_|REGISTRY_URL|REGISTRY_OPTION|REGISTRY_STATIC_NODE|REGISTRY_VOLATILE|SEQUENCE_(?!EXHAUSTED))/;

/**
 * The exit code for an error: 2 for bad input (usage, settings, layouts, IDs, keys), 1 otherwise.
 *
 * @example
 * ```ts
 * exitCodeFor(new FlurryError('FLURRY_E_ID_NEGATIVE', '…')); // 2
 * ```
 */
export function exitCodeFor(err: unknown): number {
  return err instanceof FlurryError && BAD_INPUT.test(err.code) ? 2 : 1;
}

/**
 * The one-line message printed on stderr for an error: `flurry: CODE: message`.
 *
 * @example
 * ```ts
 * io.stderr.write(errorLine(err));
 * ```
 */
export function errorLine(err: unknown): string {
  if (err instanceof FlurryError) return `flurry: ${err.code}: ${err.message}\n`;
  return `flurry: FLURRY_E_INTERNAL: ${err instanceof Error ? err.message : String(err)}\n`;
}

/**
 * Warns on stderr about each `FLURRY_*` variable in `io.env` that is no setting (a
 * misspelling is otherwise ignored silently), naming the closest one; returns the warnings.
 *
 * @example
 * ```ts
 * await warnUnknownEnv(io); // "flurry: warning: FLURRY_REGSITRY is not a flurry setting and is ignored; did you mean FLURRY_REGISTRY?"
 * ```
 */
export async function warnUnknownEnv(io: CliIo): Promise<EnvWarning[]> {
  // The settings table is loaded only when there is a FLURRY_* variable to check.
  if (!Object.keys(io.env).some((k) => k.toUpperCase().startsWith('FLURRY_'))) return [];
  const { unknownEnvWarnings } = await import('../config/env-hints.js');
  const warnings = unknownEnvWarnings(io.env);
  for (const w of warnings) await write(io.stderr, `flurry: warning: ${w.message}\n`);
  return warnings;
}
