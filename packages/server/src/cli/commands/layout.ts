/** `flurry layout`: a layout's fields, epoch, end of life and capacity (see {@link LAYOUT_HELP}). */
import type { Layout } from '@flurry/core/layout';
import { serverError } from '../../errors.js';
import { END_OF_LIFE_WARNING_MS, endOfLifeWarning, formatRemaining } from '../../end-of-life.js';
import { layoutExpiredReason } from '../../layout-choice.js';
import { hasFlag, lastString } from '../args.js';
import { command, layoutOf, LAYOUT_FLAGS, write } from '../io.js';

const FLAGS = { ...LAYOUT_FLAGS, json: { type: 'boolean' } } as const;

export const LAYOUT_HELP = `Usage: flurry layout [PRESET | --layout PRESET | --fields SPEC [--epoch ISO|ms] [--unit 1ms|10ms|1s]] [--json]

Prints a layout's fields, epoch, end-of-life date, the time left until it (a warning within
a year of it), node count and IDs per second per node.
Presets: twitter (default), leaf, discord, sonyflake, instagram, js53.
`;

export const layoutCommand = command(FLAGS, LAYOUT_HELP, async (args, io) => {
  if (args.positionals.length > 1)
    throw serverError('USAGE', `flurry layout takes at most one preset name; got ${args.positionals.length} arguments`);
  const positional = args.positionals[0];
  const flag = lastString(args, 'layout');
  if (positional !== undefined && flag !== undefined && positional !== flag)
    throw serverError(
      'USAGE',
      `two layouts named ("${positional.slice(0, 24)}" and --layout ${flag.slice(0, 24)}); name one`,
    );
  const layout = layoutOf(args, positional ?? flag);
  const nowMs = (io.now ?? Date.now)();
  const expired = layoutExpiredReason(layout, nowMs);
  await write(
    io.stdout,
    hasFlag(args, 'json')
      ? JSON.stringify(layout.describe(), null, 2) + '\n'
      : layoutTable(layout, expired !== undefined, nowMs),
  );
  // Loud, on stderr (so --json stays parseable): flurry next and serve refuse this layout.
  if (expired !== undefined)
    await write(io.stderr, `flurry: warning: ${expired}; flurry next and serve refuse it (FLURRY_E_LAYOUT_EXPIRED).\n`);
  // Within a year of the end: the same warning flurry serve logs at start.
  const soon = endOfLifeWarning(layout, nowMs);
  if (soon !== undefined) await write(io.stderr, `flurry: warning: ${soon}.\n`);
});

export function layoutTable(layout: Layout, expired = false, nowMs?: number): string {
  const info = layout.describe();
  const rows = [
    ['field', 'bits', 'shift', 'max'],
    ...info.fields.map((f) => [f.name, String(f.bits), String(f.shift), f.max]),
  ];
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  const line = (r: string[]) =>
    '  ' + r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ') + '\n';
  // Digits grouped by hand: toLocaleString would start ICU, about 10 ms of a cold start.
  const n = (x: number) =>
    Number.isSafeInteger(x) ? String(x).replace(/\B(?=(\d{3})+(?!\d))/g, ',') : x.toLocaleString('en-US');
  let out = `Layout ${info.name}: ${info.totalBits} bits (${info.spec})\n`;
  out += `Epoch: ${info.epoch} (Unix ms ${info.epochMs}), unit ${info.unit}\n\n`;
  out += rows.map(line).join('') + '\n';
  out += `End of life:          ${info.expiresAt}${expired ? '   ** ALREADY PAST: this layout cannot issue IDs **' : ''}\n`;
  if (nowMs !== undefined) {
    const left = layout.expiresAt.getTime() - nowMs;
    out += `Time left:            ${left <= 0 ? 'none' : formatRemaining(left)}${left > 0 && left < END_OF_LIFE_WARNING_MS ? '   ** LESS THAN A YEAR: plan a move to a new layout **' : ''}\n`;
  }
  out += `Signed 64-bit until:  ${info.signedOverflowAt ?? `always (${info.totalBits} bits)`}\n`;
  out += `Nodes:                ${n(info.nodeCount)}\n`;
  out += `IDs/s per node:       ${n(info.maxIdsPerSecondPerNode)}\n`;
  out += `Largest ID:           ${info.maxId}${info.safeInteger ? ' (a safe JavaScript integer)' : ''}\n`;
  return out;
}
