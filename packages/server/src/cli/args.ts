// The CLI's strict command-line parsing on `node:util` `parseArgs`: an unknown flag, a missing value or a value
// given to a boolean flag is FLURRY_E_USAGE; a negative number (`-1`) is an argument, so `flurry decode -1`
// reaches the decoder's own error.
import { parseArgs } from 'node:util';
import { closestName as nearestName } from '@flurry/core/known-options';
import { clip, serverError } from '../errors.js';

/** The flags of one command, by long name: `string` takes a value, `short` is a one-letter alias. */
export type FlagSpecs = Readonly<Record<string, { readonly type: 'string' | 'boolean'; readonly short?: string }>>;

/** `names` as flags of one `type`, to spread in the order the unknown-flag message lists them. */
export const flagsOf = (type: 'string' | 'boolean', ...names: string[]): FlagSpecs =>
  Object.fromEntries(names.map((name) => [name, { type }]));

/** The parsed command line: every occurrence of every flag, in order, and the positionals. */
export interface ParsedCommandLine {
  readonly values: Record<string, Array<string | true>>;
  readonly positionals: string[];
}

/** A negative number such as `-1`, `-0.5` or `-.5`: an argument, not a flag. */
const NEGATIVE_NUMBER = /^-(?:[0-9]+\.?[0-9]*|\.[0-9]+)$/;

/** Parses `argv` against `spec`; `FLURRY_E_USAGE` for an unknown flag (naming the closest), a missing value or a value to a boolean. */
export function parseCommandLine(argv: readonly string[], spec: FlagSpecs): ParsedCommandLine {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string; multiple: true }> = {};
  for (const [name, s] of Object.entries(spec)) options[name] = { ...s, multiple: true };
  // Not parseArgs' `strict` mode: each refusal names the flag as typed, and a negative number stays an argument.
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  const values: Record<string, Array<string | true>> = Object.create(null) as Record<string, Array<string | true>>;
  const positionals: string[] = [];
  let negativeAt = -1; // "-0.5" comes back as three short options with one index
  for (const t of tokens) {
    if (t.kind === 'positional') {
      positionals.push(t.value);
      continue;
    }
    if (t.kind === 'option-terminator') continue;
    const typed = argv[t.index];
    if (NEGATIVE_NUMBER.test(typed)) {
      if (negativeAt !== t.index) positionals.push(typed);
      negativeAt = t.index;
      continue;
    }
    const s = Object.prototype.hasOwnProperty.call(spec, t.name) ? spec[t.name] : undefined;
    if (s === undefined) throw unknownFlag(typed, t.rawName, spec);
    if (s.type === 'boolean' && t.value !== undefined)
      throw serverError('USAGE', `the flag --${t.name} takes no value; got "${t.value}". Write just --${t.name}.`, {
        flag: t.name,
      });
    if (s.type === 'string' && t.value === undefined)
      throw serverError('USAGE', `the flag --${t.name} needs a value, e.g. --${t.name} VALUE`, { flag: t.name });
    (values[t.name] ??= []).push(t.value ?? true);
  }
  return { values, positionals };
}

function unknownFlag(typed: string, rawName: string, spec: FlagSpecs) {
  const shown = clip(typed, 60);
  const flags = Object.keys(spec).map((k) => '--' + k);
  const name = rawName.startsWith('--') ? rawName : typed.split('=')[0];
  const near = name.length > 2 ? closestName(name, flags, 2) : undefined;
  const accepts = `this command accepts: ${flags.join(', ') || '(no flags)'}. See --help`;
  return serverError(
    'USAGE',
    near !== undefined
      ? `unknown flag "${shown}"; did you mean ${near}? ${accepts[0].toUpperCase()}${accepts.slice(1)}.`
      : `unknown flag "${shown}"; ${accepts}; an argument that starts with a dash goes after --, e.g. -- ${shown}.`,
    near !== undefined ? { flag: shown, suggestion: near } : { flag: shown },
  );
}

/** The candidate nearest to `name`, if within a third of the part after `prefixLength` (at least 2 edits). */
export function closestName(name: string, candidates: readonly string[], prefixLength = 0): string | undefined {
  return nearestName(name, candidates, Math.max(2, Math.floor((name.length - prefixLength) / 3)));
}

/** The last value of a string flag (later occurrences override earlier ones), or undefined. */
export function lastString(parsed: ParsedCommandLine, name: string): string | undefined {
  const v = parsed.values[name]?.at(-1);
  return v === true ? undefined : v;
}

export function allStrings(parsed: ParsedCommandLine, name: string): string[] {
  return (parsed.values[name] ?? []).filter((v): v is string => v !== true);
}

export function hasFlag(parsed: ParsedCommandLine, name: string): boolean {
  return (parsed.values[name]?.length ?? 0) > 0;
}

/** Throws `FLURRY_E_USAGE` "--FLAG `why`" for the first of `flags` that was given. */
export function refuseFlags(parsed: ParsedCommandLine, flags: readonly string[], why: string): void {
  for (const f of flags) if (parsed.values[f] !== undefined) throw serverError('USAGE', `--${f} ${why}`);
}

/** Refuses positional arguments to `flurry <command>` (`hint` goes before "See flurry <command> --help."). */
export function noArguments(args: ParsedCommandLine, command: string, hint = ''): void {
  if (args.positionals.length > 0)
    throw serverError(
      'USAGE',
      `flurry ${command} takes no arguments; got "${args.positionals[0].slice(0, 40)}". ${hint}See flurry ${command} --help.`,
    );
}
