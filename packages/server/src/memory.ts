/**
 * The young generation of `flurry serve` stays at V8's start size (1 MiB a semi-space)
 * instead of growing to 16 MiB under load: a server whose live data is a few megabytes
 * pays for a large young generation only in resident memory (see docs/operations.md,
 * "Memory"). A process started with its own young-generation flag (`--max-semi-space-size`,
 * `--min-semi-space-size` or `--semi-space-growth-factor`, on the command line or in
 * `NODE_OPTIONS`) is left as it is.
 */
import v8 from 'node:v8';

const YOUNG_GENERATION_FLAG = /^--(?:max-semi-space-size|min-semi-space-size|semi-space-growth-factor)(?:=|$)/;

/**
 * Keeps V8's new space at its current size (a growth factor of 1, which V8 reads at each
 * growth, unlike the size limits it reads only at start-up). Returns false, changing
 * nothing, where the process was started with a young-generation flag of its own.
 */
export function pinYoungGeneration(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string = process.env.NODE_OPTIONS ?? '',
): boolean {
  const given = [...execArgv, ...nodeOptions.split(/\s+/)].map((f) => f.replace(/_/g, '-'));
  if (given.some((f) => YOUNG_GENERATION_FLAG.test(f))) return false;
  v8.setFlagsFromString('--semi-space-growth-factor=1');
  return true;
}
