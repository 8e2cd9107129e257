/** `flurry uuid`: prints new UUIDv7, the node leased from the registry (see {@link UUID_HELP}). */
import { flagsOf, lastString, noArguments, type ParsedCommandLine } from '../args.js';
import { command, formatFlag, type CliIo } from '../io.js';
import { countOf, MAX_NEXT_COUNT, printLeased, wholeNumber } from './next.js';

const FORMS = ['canonical', 'hex', 'base32', 'base58', 'base62', 'bytes'] as const;

const FLAGS = {
  n: { type: 'string', short: 'n' },
  ...flagsOf('string', 'format', 'node-bits', 'sequence-bits', 'registry', 'cluster'),
} as const;

export const UUID_HELP = `Usage: flurry uuid [-n N] [--format ${FORMS.join('|')}]
                   [--node-bits B] [--sequence-bits S] [--registry URL] [--cluster NAME]

Prints N new UUIDv7 (default 1, at most ${MAX_NEXT_COUNT}), one a line, in increasing order;
--format bytes writes 16 raw bytes each. The node ID (--node-bits wide, default 16) is
leased from --registry (or FLURRY_REGISTRY; default file:) in --cluster (or FLURRY_CLUSTER),
in the cluster's namespace: never the node ID of a live UUID or unpinned Snowflake holder.
Every generator and reader of a cluster must use the same --node-bits and --sequence-bits.
`;

export const uuidCommand = command(FLAGS, UUID_HELP, uuid, true);

async function uuid(args: ParsedCommandLine, io: CliIo): Promise<void> {
  noArguments(args, 'uuid', 'Use -n N for a count. ');
  const n = countOf(args);
  const format = formatFlag(lastString(args, 'format') ?? 'canonical', FORMS, 'a UUID form');
  const bits = (flag: string, min: number, max: number): number | undefined => {
    const raw = lastString(args, flag);
    return raw === undefined ? undefined : wholeNumber(raw, `--${flag}`, min, max, 2);
  };
  const nodeBits = bits('node-bits', 1, 48);
  const sequenceBits = bits('sequence-bits', 12, 42);
  return printLeased(
    io,
    args,
    n,
    (c, registry) => c.leasedUuidGenerator({ registry, nodeBits, sequenceBits }),
    (uuids, k) => {
      if (format !== 'bytes') return uuids.batch(k, format).join('\n') + '\n';
      const buf = new Uint8Array(16 * k);
      uuids.fill(buf);
      return buf;
    },
  );
}
