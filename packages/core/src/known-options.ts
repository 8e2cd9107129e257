// Strict options: a misspelt key is refused, naming the closest one (an ignored `cluster` or `pin` can make two
// services share node IDs).
import { ErrorCode, FlurryError } from './errors.js';

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps each count one. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/**
 * The candidate nearest to `name` when it is close enough to be a likely misspelling: at most `maxDistance` edits
 * (default: a third of the name's length, at least 2), compared case-insensitively.
 */
export function closestName(name: string, candidates: Iterable<string>, maxDistance?: number): string | undefined {
  const lower = name.toLowerCase();
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = editDistance(lower, c.toLowerCase());
    if (d < bestD) [bestD, best] = [d, c];
  }
  const limit = maxDistance ?? Math.max(2, Math.floor(name.length / 3));
  return bestD <= limit ? best : undefined;
}

/** How {@link assertKnownOptions} builds its error; by default a core `FLURRY_E_UNKNOWN_OPTION`. */
export type UnknownOptionError = (
  message: string,
  details: { option: string; suggestion?: string; allowed: string[] },
) => Error;

/**
 * Refuses an options object that has a key outside `known`. `where` names the object in the message (`'Generator
 * options'`, `'openRegistry options'`). `undefined` values count too: a misspelt key is a mistake whatever its value.
 * Anything not a plain object is left to the caller's own checks.
 */
export function assertKnownOptions(
  options: unknown,
  known: readonly string[],
  where: string,
  makeError?: UnknownOptionError,
): void {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) return;
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const suggestion = closestName(key, known);
    const allowed = [...known].sort();
    const message =
      `${where} has the unknown option ${JSON.stringify(key)}` +
      (suggestion !== undefined ? `; did you mean ${JSON.stringify(suggestion)}?` : '.') +
      ` Allowed options: ${allowed.join(', ')}.`;
    const details = { option: key, ...(suggestion !== undefined ? { suggestion } : {}), allowed };
    throw makeError ? makeError(message, details) : new FlurryError(ErrorCode.UNKNOWN_OPTION, message, details);
  }
}

/** Every key of an options type mapped to `true`: as an object literal, the compiler refuses a missing or extra key. */
export type OptionNames<T> = { readonly [K in keyof Required<T> & string]: true };

/** The known keys of an options type, for {@link assertKnownOptions}, from a literal checked against the type. */
export function optionNames<T>(names: OptionNames<T>): readonly string[] {
  return Object.freeze(Object.keys(names));
}
