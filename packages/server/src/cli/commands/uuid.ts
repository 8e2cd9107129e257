/**
 * `flurry uuid [-n N] [--format canonical|hex|base32|base58|base62|bytes] [--node-bits B]
 * [--sequence-bits S] [--registry URL] [--cluster NAME]`: prints N new UUIDv7 (docs/uuids.md),
 * one a line, in increasing order (`bytes`: 16 raw bytes each, no separator). The node ID
 * is leased from the registry (default `file:`) as `leasedUuidGenerator` leases it, so
 * runs at the same time never print the same UUID and a later run prints UUIDs above an
 * earlier one's.
 */
import { serverError } from '../../errors.js';
import { hasFlag, lastString, parseCommandLine } from '../args.js';
import { warnUnknownEnv, write, type CliIo } from '../io.js';
import { MAX_NEXT_COUNT } from './next.js';

const FORMS = ['canonical', 'hex', 'base32', 'base58', 'base62', 'bytes'] as const;
type CliForm = (typeof FORMS)[number];
const CHUNK = 8192;

const FLAGS = {
  n: { type: 'string', short: 'n' },
  format: { type: 'string' },
  'node-bits': { type: 'string' },
  'sequence-bits': { type: 'string' },
  registry: { type: 'string' },
  cluster: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** `flurry uuid --help`. */
export const UUID_HELP = `Usage: flurry uuid [-n N] [--format ${FORMS.join('|')}]
                   [--node-bits B] [--sequence-bits S] [--registry URL] [--cluster NAME]

Prints N new UUIDv7 (default 1, at most ${MAX_NEXT_COUNT}), one a line, in increasing order;
--format bytes writes 16 raw bytes each. The node ID (--node-bits wide, default 16) is
leased from --registry (or FLURRY_REGISTRY; default file:) in --cluster (or FLURRY_CLUSTER),
in the cluster's namespace: never the node ID of a live UUID or unpinned Snowflake holder.
Every generator and reader of a cluster must use the same --node-bits and --sequence-bits.
`;

function bits(raw: string | undefined, flag: string, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^[0-9]{1,2}$/.test(raw) || Number(raw) < min || Number(raw) > max)
    throw serverError(
      'USAGE',
      `--${flag} "${raw.slice(0, 24)}" is not allowed; give a whole number from ${min} to ${max}`,
      {
        value: raw.slice(0, 24),
        min,
        max,
      },
    );
  return Number(raw);
}

/** Runs `flurry uuid`; resolves to the exit code. */
export async function uuidCommand(io: CliIo): Promise<number> {
  const args = parseCommandLine(io.argv, FLAGS);
  await warnUnknownEnv(io);
  if (hasFlag(args, 'help')) {
    await write(io.stdout, UUID_HELP);
    return 0;
  }
  if (args.positionals.length > 0) {
    throw serverError(
      'USAGE',
      `flurry uuid takes no arguments; got "${args.positionals[0].slice(0, 40)}". Use -n N for a count. See flurry uuid --help.`,
    );
  }
  const rawN = lastString(args, 'n') ?? '1';
  if (!/^[0-9]{1,9}$/.test(rawN) || Number(rawN) < 1 || Number(rawN) > MAX_NEXT_COUNT) {
    throw serverError(
      'USAGE',
      `-n "${rawN.slice(0, 24)}" is not allowed; give a whole number from 1 to ${MAX_NEXT_COUNT}`,
      { value: rawN.slice(0, 24), min: 1, max: MAX_NEXT_COUNT },
    );
  }
  const n = Number(rawN);
  const format = (lastString(args, 'format') ?? 'canonical') as CliForm;
  if (!FORMS.includes(format)) {
    throw serverError('USAGE', `--format "${format.slice(0, 24)}" is not a UUID form; use one of ${FORMS.join(', ')}`, {
      value: format.slice(0, 24),
      allowed: [...FORMS],
    });
  }
  const nodeBits = bits(lastString(args, 'node-bits'), 'node-bits', 1, 48);
  const sequenceBits = bits(lastString(args, 'sequence-bits'), 'sequence-bits', 12, 42);
  const url = lastString(args, 'registry') ?? (io.env.FLURRY_REGISTRY || 'file:');
  const cluster = lastString(args, 'cluster') ?? (io.env.FLURRY_CLUSTER || undefined);

  const { leasedUuidGenerator, openRegistry } = await import('@flurry/coordination');
  const registry = await openRegistry(url, cluster === undefined ? { fileIo: 'sync' } : { cluster, fileIo: 'sync' });
  try {
    const uuids = await leasedUuidGenerator({ registry, nodeBits, sequenceBits });
    try {
      for (let done = 0; done < n;) {
        const k = Math.min(CHUNK, n - done);
        if (format === 'bytes') {
          const buf = new Uint8Array(16 * k);
          uuids.fill(buf);
          await write(io.stdout, buf);
        } else {
          await write(io.stdout, uuids.batch(k, format).join('\n') + '\n');
        }
        done += k;
      }
    } finally {
      await uuids.close();
    }
  } finally {
    await registry.close();
  }
  return 0;
}
