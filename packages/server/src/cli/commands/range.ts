/** `flurry range`: the half-open ID interval of a time range (see {@link RANGE_HELP}). */
import { parseTime, uuidMaxAt, uuidMinAt } from '@flurry/core';
import { serverError } from '../../errors.js';
import { rangeJson } from '../../http/routes/range.js';
import { flagsOf, hasFlag, lastString, refuseFlags, type ParsedCommandLine } from '../args.js';
import { command, layoutOf, LAYOUT_FLAGS, write } from '../io.js';

const FLAGS = {
  ...LAYOUT_FLAGS,
  ...flagsOf('string', 'from', 'to'),
  ...flagsOf('boolean', 'json', 'uuid'),
} as const;

export const RANGE_HELP = `Usage: flurry range --from TIME --to TIME [--layout PRESET | --fields SPEC [--epoch ISO|ms] [--unit 1ms|10ms|1s]] [--json]

Prints the half-open ID interval [min, maxExclusive) holding exactly the IDs whose time,
rounded down to the layout's unit, is in [from, to):

  SELECT … WHERE id >= min AND id < maxExclusive

TIME is an ISO 8601 date (2026-11-01, 2026-11-01T12:00:00Z; no zone means UTC) or Unix
milliseconds. from must be in the layout's life (epoch up to its end of life); to may equal
the end of life. A time outside is FLURRY_E_TIME_OUT_OF_RANGE (exit 2).

  flurry range --uuid --from TIME --to TIME [--json]
prints the same for a UUIDv7 column (any node and sequence widths): [min, maxExclusive) are
the smallest UUIDv7 of from and of to, maxInclusive the largest of the last millisecond
before to: WHERE id >= 'min' AND id < 'maxExclusive' (PostgreSQL uuid; MySQL
BINARY(16) with UNHEX of the hex without dashes, or CHAR(36) lowercase). See docs/sql.md.
`;

export const rangeCommand = command(FLAGS, RANGE_HELP, async (args, io) => {
  if (args.positionals.length > 0)
    throw serverError(
      'USAGE',
      `flurry range takes no positional arguments (got "${args.positionals[0].slice(0, 24)}"); give --from TIME --to TIME`,
    );
  const fromText = lastString(args, 'from');
  const toText = lastString(args, 'to');
  if (fromText === undefined || toText === undefined)
    throw serverError(
      'USAGE',
      `flurry range needs --from and --to (ISO 8601 dates or Unix ms), e.g. flurry range --from 2026-11-01 --to 2026-12-01`,
    );
  const layout = hasFlag(args, 'uuid') ? undefined : layoutOf(args);
  const from = parseTime(fromText, 'from');
  const to = parseTime(toText, 'to');
  const r = layout ? rangeJson(layout, from, to) : uuidRange(from, to, args);
  const q = layout ? '' : "'"; // a UUID bound is quoted in SQL
  await write(
    io.stdout,
    hasFlag(args, 'json')
      ? JSON.stringify(r) + '\n'
      : `${layout ? `Layout ${layout.name}: IDs` : 'UUIDv7'} from ${r.from} (inclusive) to ${r.to} (exclusive)\n` +
          `  min           ${r.min}\n` +
          `  maxExclusive  ${r.maxExclusive}\n` +
          `  maxInclusive  ${r.maxInclusive ?? '(none: the range is empty)'}\n` +
          `SQL: WHERE id >= ${q}${r.min}${q} AND id < ${q}${r.maxExclusive}${q}\n`,
  );
});

/** `flurry range --uuid`: the UUIDv7 bounds of [from, to). */
function uuidRange(from: number, to: number, args: ParsedCommandLine) {
  refuseFlags(args, Object.keys(LAYOUT_FLAGS), "does not go with --uuid: a UUIDv7's time is Unix ms under any widths");
  if (to < from)
    throw serverError(
      'USAGE',
      `--to (${new Date(to).toISOString()}) is before --from (${new Date(from).toISOString()})`,
    );
  return {
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
    min: uuidMinAt(from, 'from'),
    maxExclusive: uuidMinAt(to, 'to'),
    maxInclusive: to > from ? uuidMaxAt(to - 1, 'to') : null,
  };
}
