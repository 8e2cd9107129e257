/** `flurry decode` (see {@link DECODE_HELP}): every ID is checked before anything is printed. */
// Subpath imports: the CLI loads only what it uses (benchmarks/cli-start.mjs).
import { decodeId, FORMATS } from '@flurry/core/codecs/formats';
import { parseId, type DecodedId, type Layout } from '@flurry/core/layout';
import { decodeUuid, type DecodedUuid, type UuidTextForm } from '@flurry/core/uuid/forms';
import { serverError } from '../../errors.js';
import { flagsOf, hasFlag, lastString } from '../args.js';
import { command, formatFlag, layoutOf, LAYOUT_FLAGS, write } from '../io.js';

const FLAGS = {
  ...LAYOUT_FLAGS,
  format: { type: 'string' },
  ...flagsOf('boolean', 'json', 'uuid'),
  ...flagsOf('string', 'node-bits', 'sequence-bits'),
} as const;

export const DECODE_HELP = `Usage: flurry decode ID... [--layout PRESET | --fields SPEC [--epoch ISO|ms] [--unit U]]
                     [--format ${FORMATS.join('|')}] [--json]
       flurry decode [--uuid [--format canonical|hex|base32|base58|base62]]
                     [--node-bits B] [--sequence-bits S] UUID...

Prints each ID's fields, Unix milliseconds and ISO time under the layout (default twitter).
--format names how the IDs are written (default decimal). --json prints one JSON object a line:
{"id","unixMs","timestamp","fields":{...},"sequence"}.
A canonical UUID (8-4-4-4-12 hex digits) is read as a UUIDv7: its Unix ms, time, node and
sequence under --node-bits (default 16) and --sequence-bits (default 22); --uuid reads every
argument as a UUID of any form. --json: {"uuid","version","unixMs","timestamp","node","sequence"}.
-- ends the flags: later arguments are IDs even if they start with a dash
(flurry decode -- -1, flurry decode --format base64url -- -0bCFM--lC-).
`;

export const decodeCommand = command(FLAGS, DECODE_HELP, async (args, io) => {
  if (args.positionals.length === 0)
    throw serverError('USAGE', 'flurry decode needs at least one ID, e.g. flurry decode 1859214170478923776');
  const layout = layoutOf(args);
  const json = hasFlag(args, 'json');
  const givenFormat = lastString(args, 'format');
  const asUuid = hasFlag(args, 'uuid');
  const uuidOpts = {
    nodeBits: intFlag(lastString(args, 'node-bits'), 'node-bits'),
    sequenceBits: intFlag(lastString(args, 'sequence-bits'), 'sequence-bits'),
    form: asUuid && givenFormat !== undefined ? formatFlag(givenFormat, UUID_FORMS, 'a UUID form') : undefined,
  };
  const format = formatFlag((asUuid ? undefined : givenFormat) ?? 'decimal', FORMATS, 'a format');
  // A canonical UUID is never a Snowflake ID of the default (decimal) form: its dashes tell them apart.
  const isUuid = (text: string) => asUuid || (givenFormat === undefined && CANONICAL_UUID.test(text));
  const blocks = args.positionals.map((text) => {
    if (isUuid(text)) {
      const d = decodeUuid(text, uuidOpts);
      const { uuid, version, unixMs, timestamp, node, sequence } = d;
      return json ? JSON.stringify({ uuid, version, unixMs, timestamp, node, sequence }) + '\n' : uuidTextBlock(d);
    }
    const id = format === 'decimal' ? parseId(text, layout) : decodeId(text, format, { bits: layout.totalBits });
    const d = layout.decode(id);
    const { unixMs, timestamp, fields, sequence } = d;
    return json
      ? JSON.stringify({ id: d.id.toString(), unixMs, timestamp, fields, sequence }) + '\n'
      : textBlock(d, layout);
  });
  await write(io.stdout, blocks.join(''));
});

const CANONICAL_UUID = /^(urn:uuid:)?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const UUID_FORMS: readonly UuidTextForm[] = ['canonical', 'hex', 'base32', 'base58', 'base62'];

function intFlag(raw: string | undefined, flag: string): number | undefined {
  if (raw === undefined) return undefined;
  const value = raw.slice(0, 24);
  if (!/^[0-9]{1,2}$/.test(raw))
    throw serverError('USAGE', `--${flag} "${value}" is not a whole number of bits`, { value });
  return Number(raw);
}

function uuidTextBlock(d: DecodedUuid): string {
  return (
    `${d.uuid} (UUIDv7, nodeBits ${d.nodeBits}, sequenceBits ${d.sequenceBits})\n` +
    `  timestamp  ${d.timestamp} (Unix ms ${d.unixMs})\n` +
    `  node       ${d.node}\n` +
    `  sequence   ${d.sequence}\n`
  );
}

function textBlock(d: DecodedId, layout: Layout): string {
  const rows: Array<[string, string]> = [['timestamp', `${d.timestamp} (Unix ms ${d.unixMs})`]];
  for (const f of layout.nodeFields) rows.push([f.name, String(d.fields[f.name])]);
  rows.push(['sequence', String(d.sequence)]);
  const w = Math.max(...rows.map((r) => r[0].length));
  return `${d.id} (layout ${layout.name})\n` + rows.map(([k, v]) => `  ${k.padEnd(w)}  ${v}\n`).join('');
}
