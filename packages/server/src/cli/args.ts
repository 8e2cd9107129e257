/**
 * A small command-line parser for the `flurry` CLI (no dependencies). It knows each
 * command's flags, so an unknown flag, a missing value or a value given to a boolean flag
 * is a coded `FLURRY_E_USAGE` error rather than a guess. Supports `--flag value`,
 * `--flag=value`, short aliases (`-n 5`), repeated flags (`--node a=1 --node b=2`) and `--`.
 * A token that looks like a negative number (`-1`) is a positional, so `flurry decode -1`
 * reaches the ID decoder and gets its coded error.
 *
 * @example
 * ```ts
 * const spec = { n: { type: 'string', short: 'n' }, json: { type: 'boolean' } } as const;
 * parseCommandLine(['-n', '3', '--json', 'x'], spec);
 * // { values: { n: ['3'], json: [true] }, positionals: ['x'] }
 * ```
 */
import { serverError } from '../errors.js';

/**
 * One flag a command accepts.
 *
 * @example
 * ```ts
 * const spec: FlagSpec = { type: 'string', short: 'n' };
 * ```
 */
export interface FlagSpec {
  /** `string` takes a value; `boolean` does not. */
  readonly type: 'string' | 'boolean';
  /** One-letter alias, e.g. `n` for `-n`. */
  readonly short?: string;
}

/**
 * The flags of one command, by long name (without the leading `--`).
 *
 * @example
 * ```ts
 * const specs: FlagSpecs = { json: { type: 'boolean' } };
 * ```
 */
export type FlagSpecs = Readonly<Record<string, FlagSpec>>;

/**
 * The parsed command line: every occurrence of every flag, in order, and the positionals.
 *
 * @example
 * ```ts
 * const { values, positionals }: ParsedCommandLine = parseCommandLine(argv, specs);
 * ```
 */
export interface ParsedCommandLine {
  readonly values: Record<string, Array<string | true>>;
  readonly positionals: string[];
}

/**
 * Parses `argv` against `spec`.
 *
 * @throws FlurryError `FLURRY_E_USAGE` for an unknown flag, a missing value, or a value given
 * to a boolean flag.
 * @example
 * ```ts
 * parseCommandLine(['--port=9000'], { port: { type: 'string' } }).values.port; // ['9000']
 * ```
 */
export function parseCommandLine(argv: readonly string[], spec: FlagSpecs): ParsedCommandLine {
  const values: Record<string, Array<string | true>> = Object.create(null);
  const positionals: string[] = [];
  const byShort = new Map<string, string>();
  for (const [name, s] of Object.entries(spec)) if (s.short) byShort.set(s.short, name);
  const known = Object.keys(spec)
    .map((k) => '--' + k)
    .join(', ');

  for (let i = 0; i < argv.length; i++) {
    const tok = argv[i];
    if (tok === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (tok.length < 2 || tok[0] !== '-' || /^-[0-9.]/.test(tok)) {
      positionals.push(tok);
      continue;
    }
    let name: string;
    let inline: string | undefined;
    if (tok.startsWith('--')) {
      const eq = tok.indexOf('=');
      name = eq === -1 ? tok.slice(2) : tok.slice(2, eq);
      inline = eq === -1 ? undefined : tok.slice(eq + 1);
    } else {
      const long = byShort.get(tok.slice(1, 2));
      if (long === undefined) throw unknownFlag(tok, known);
      name = long;
      inline = tok.length > 2 ? tok.slice(2) : undefined;
    }
    const s = Object.prototype.hasOwnProperty.call(spec, name) ? spec[name] : undefined;
    if (s === undefined) throw unknownFlag(tok, known);
    const list = (values[name] ??= []);
    if (s.type === 'boolean') {
      if (inline !== undefined) {
        throw serverError('USAGE', `the flag --${name} takes no value; got "${inline}". Write just --${name}.`, {
          flag: name,
        });
      }
      list.push(true);
      continue;
    }
    if (inline !== undefined) {
      list.push(inline);
      continue;
    }
    if (i + 1 >= argv.length) {
      throw serverError('USAGE', `the flag --${name} needs a value, e.g. --${name} VALUE`, { flag: name });
    }
    list.push(argv[++i]);
  }
  return { values, positionals };
}

function unknownFlag(tok: string, known: string) {
  const shown = tok.length > 60 ? tok.slice(0, 60) + '…' : tok;
  return serverError('USAGE', `unknown flag "${shown}"; this command accepts: ${known || '(no flags)'}. See --help.`, {
    flag: shown,
  });
}

/**
 * The last value of a string flag (later occurrences override earlier ones), or undefined.
 *
 * @example
 * ```ts
 * lastString(parseCommandLine(['--port', '1', '--port', '2'], { port: { type: 'string' } }), 'port'); // '2'
 * ```
 */
export function lastString(parsed: ParsedCommandLine, name: string): string | undefined {
  const list = parsed.values[name];
  if (!list || list.length === 0) return undefined;
  const v = list[list.length - 1];
  return v === true ? undefined : v;
}

/**
 * Every value of a repeatable string flag, in order.
 *
 * @example
 * ```ts
 * allStrings(parseCommandLine(['--node', 'a=1', '--node', 'b=2'], { node: { type: 'string' } }), 'node'); // ['a=1', 'b=2']
 * ```
 */
export function allStrings(parsed: ParsedCommandLine, name: string): string[] {
  return (parsed.values[name] ?? []).filter((v): v is string => v !== true);
}

/**
 * Whether a boolean flag was given.
 *
 * @example
 * ```ts
 * hasFlag(parseCommandLine(['--json'], { json: { type: 'boolean' } }), 'json'); // true
 * ```
 */
export function hasFlag(parsed: ParsedCommandLine, name: string): boolean {
  return (parsed.values[name]?.length ?? 0) > 0;
}
