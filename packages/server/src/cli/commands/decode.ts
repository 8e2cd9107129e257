/**
 * `flurry decode ID… [layout] [--format F] [--json]`: prints each ID's fields, Unix ms and
 * ISO time under the given layout (default `twitter`), honouring its epoch and unit. All
 * IDs are checked before anything is printed: one bad ID exits 2 with its coded message.
 *
 * @example
 * ```sh
 * flurry decode 1859214170478923776 --json
 * flurry decode 3TWd8xYzPZq --format base62 --layout discord
 * ```
 */
// Subpath imports: the CLI loads only the parts of the core it uses (see benchmarks/cli-start.mjs).
import { decodeId, FORMATS, isIdFormat } from '@flurry/core/codecs/formats';
import { parseId, type DecodedId, type Layout } from '@flurry/core/layout';
import { serverError } from '../../errors.js';
import { chooseLayout } from '../../layout-choice.js';
import { hasFlag, lastString, parseCommandLine } from '../args.js';
import { LAYOUT_FLAGS, write, type CliIo } from '../io.js';

const FLAGS = {
  ...LAYOUT_FLAGS,
  format: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/**
 * `flurry decode --help`.
 *
 * @example
 * ```ts
 * process.stdout.write(DECODE_HELP);
 * ```
 */
export const DECODE_HELP = `Usage: flurry decode ID... [--layout PRESET | --fields SPEC [--epoch ISO|ms] [--unit U]]
                     [--format ${FORMATS.join('|')}] [--json]

Prints each ID's fields, Unix milliseconds and ISO time under the layout (default twitter).
--format names how the IDs are written (default decimal). --json prints one JSON object a line:
{"id","unixMs","timestamp","fields":{...},"sequence"}.
-- ends the flags: later arguments are IDs even if they start with a dash
(flurry decode -- -1, flurry decode --format base64url -- -0bCFM--lC-).
`;

/**
 * Runs `flurry decode`; resolves to the exit code.
 *
 * @example
 * ```ts
 * await decodeCommand({ argv: ['1859214170478923776'], env: process.env, stdout: process.stdout, stderr: process.stderr });
 * ```
 */
export async function decodeCommand(io: CliIo): Promise<number> {
  const args = parseCommandLine(io.argv, FLAGS);
  if (hasFlag(args, 'help')) {
    await write(io.stdout, DECODE_HELP);
    return 0;
  }
  if (args.positionals.length === 0)
    throw serverError('USAGE', 'flurry decode needs at least one ID, e.g. flurry decode 1859214170478923776');
  const layout = chooseLayout({
    layout: lastString(args, 'layout'),
    fields: lastString(args, 'fields'),
    epoch: lastString(args, 'epoch'),
    unit: lastString(args, 'unit'),
  });
  const format = lastString(args, 'format') ?? 'decimal';
  if (!isIdFormat(format)) {
    throw serverError('USAGE', `--format "${format.slice(0, 24)}" is not a format; use one of ${FORMATS.join(', ')}`, {
      value: format.slice(0, 24),
      allowed: FORMATS,
    });
  }
  const decoded = args.positionals.map((text) => {
    const id = format === 'decimal' ? parseId(text, layout) : decodeId(text, format, { bits: layout.totalBits });
    return layout.decode(id);
  });
  const json = hasFlag(args, 'json');
  await write(io.stdout, decoded.map((d) => (json ? jsonLine(d) : textBlock(d, layout))).join(''));
  return 0;
}

function jsonLine(d: DecodedId): string {
  return (
    JSON.stringify({
      id: d.id.toString(),
      unixMs: d.unixMs,
      timestamp: d.timestamp,
      fields: d.fields,
      sequence: d.sequence,
    }) + '\n'
  );
}

function textBlock(d: DecodedId, layout: Layout): string {
  const rows: Array<[string, string]> = [['timestamp', `${d.timestamp} (Unix ms ${d.unixMs})`]];
  for (const f of layout.nodeFields) rows.push([f.name, String(d.fields[f.name])]);
  rows.push(['sequence', String(d.sequence)]);
  const w = Math.max(...rows.map((r) => r[0].length));
  return `${d.id} (layout ${layout.name})\n` + rows.map(([k, v]) => `  ${k.padEnd(w)}  ${v}\n`).join('');
}
