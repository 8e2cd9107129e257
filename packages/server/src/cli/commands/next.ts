/** `flurry next`: prints new IDs, the node leased from the registry (see {@link NEXT_HELP}). */
import { encodeId, FORMATS } from '@flurry/core/codecs/formats';
import { serverError } from '../../errors.js';
import { assertLayoutLive, parseNodePins } from '../../layout-choice.js';
import type { Registry } from '@flurry/coordination';
import { allStrings, flagsOf, hasFlag, lastString, noArguments, type ParsedCommandLine } from '../args.js';
import { command, formatFlag, layoutOf, LAYOUT_FLAGS, write, type CliIo } from '../io.js';

export const MAX_NEXT_COUNT = 10_000_000;
const CHUNK = 8192;

const FLAGS = {
  ...LAYOUT_FLAGS,
  n: { type: 'string', short: 'n' },
  format: { type: 'string' },
  fixed: { type: 'boolean' },
  ...flagsOf('string', 'node', 'registry', 'cluster'),
} as const;

export const NEXT_HELP = `Usage: flurry next [-n N] [--format ${FORMATS.join('|')}] [--fixed]
                   [--layout PRESET | --fields SPEC [--epoch ISO|ms] [--unit 1ms|10ms|1s]]
                   [--node FIELD=VALUE ...] [--registry URL] [--cluster NAME]

Prints N new IDs (default 1, at most ${MAX_NEXT_COUNT}), one a line, in increasing order.
The node ID is leased from --registry (or FLURRY_REGISTRY; default file:, the embedded
registry for one machine) in --cluster (or FLURRY_CLUSTER; default "default"), so runs at
the same time never share IDs and a later run prints IDs above an earlier one's.
--node pins node fields by hand (the registry still leases the pinned node).
--fixed pads to the layout's fixed width so strings sort like the IDs.
`;

export const nextCommand = command(FLAGS, NEXT_HELP, next, true);

async function next(args: ParsedCommandLine, io: CliIo): Promise<void> {
  noArguments(args, 'next', 'Use -n N for a count. ');
  const layout = layoutOf(args);
  assertLayoutLive(layout, (io.now ?? Date.now)());
  const n = countOf(args);
  const format = formatFlag(lastString(args, 'format') ?? 'decimal', FORMATS, 'a format');
  const fixed = hasFlag(args, 'fixed');
  const pin = parseNodePins(allStrings(args, 'node'), layout);
  const encode =
    format === 'decimal' && !fixed
      ? (id: bigint) => id.toString()
      : (id: bigint) => encodeId(id, format, { fixed, bits: layout.totalBits });
  return printLeased(
    io,
    args,
    n,
    (c, registry) => c.leasedGenerator({ registry, layout, pin }),
    (ids, k) => {
      const batch = ids.batch(k);
      let out = '';
      for (let i = 0; i < batch.length; i++) out += encode(batch[i]) + '\n';
      return out;
    },
  );
}

/** The `-n` count (default 1). */
export const countOf = (args: ParsedCommandLine): number =>
  wholeNumber(lastString(args, 'n') ?? '1', '-n', 1, MAX_NEXT_COUNT);

/** `raw` (at most `digits` digits) as a whole number from `min` to `max`, else `FLURRY_E_USAGE` naming the `flag`. */
export function wholeNumber(raw: string, flag: string, min: number, max: number, digits = 9): number {
  const value = raw.slice(0, 24);
  if (!new RegExp(`^[0-9]{1,${digits}}$`).test(raw) || Number(raw) < min || Number(raw) > max)
    throw serverError('USAGE', `${flag} "${value}" is not allowed; give a whole number from ${min} to ${max}`, {
      value,
      min,
      max,
    });
  return Number(raw);
}

/** Opens the registry (loaded only now, after the arguments are checked), leases `lease` and prints `n` values by `chunk`. */
export async function printLeased<G extends { close(): Promise<void> }>(
  io: CliIo,
  args: ParsedCommandLine,
  n: number,
  lease: (coordination: typeof import('@flurry/coordination'), registry: Registry) => Promise<G>,
  chunk: (generator: G, k: number) => string | Uint8Array,
): Promise<void> {
  const url = lastString(args, 'registry') ?? (io.env.FLURRY_REGISTRY || 'file:');
  const cluster = lastString(args, 'cluster') ?? (io.env.FLURRY_CLUSTER || undefined);
  const coordination = await import('@flurry/coordination');
  // A one-shot process has nothing else to serve: file registry steps run as direct calls (FileDriverOptions.io).
  const registry = await coordination.openRegistry(url, { cluster, fileIo: 'sync' });
  try {
    const generator = await lease(coordination, registry);
    try {
      for (let done = 0; done < n; done += CHUNK) await write(io.stdout, chunk(generator, Math.min(CHUNK, n - done)));
    } finally {
      await generator.close();
    }
  } finally {
    await registry.close();
  }
}
