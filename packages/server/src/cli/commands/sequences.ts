/** `flurry sequences create|list|show`: the keys of segment mode in its store (see {@link SEQUENCES_HELP}). */
import { openSequences, sequenceError, type KeyInfo } from '@flurry/segments';
import { serverError } from '../../errors.js';
import { flagsOf, hasFlag, lastString } from '../args.js';
import { command, write } from '../io.js';

const FLAGS = {
  ...flagsOf('string', 'store', 'start', 'step', 'description'),
  ...flagsOf('boolean', 'json', 'allow-volatile-store'),
} as const;

export const SEQUENCES_HELP = `Usage: flurry sequences create KEY [--start N] [--step S] [--description TEXT]
       flurry sequences list [--json]
       flurry sequences show KEY [--json]

The keys of segment mode (short, dense, increasing numbers per key; docs/segments.md).
The store is --store URL or FLURRY_SEQUENCES: postgres://user:pass@host:port/db[?table=leaf_alloc],
mysql://… (MySQL/MariaDB; Leaf's leaf_alloc table, shared with Leaf servers), or redis://host:port/db.
A key is 1 to 128 characters from A-Z a-z 0-9 _ . : -.
  --start N            the first number issued (default 1)
  --step S             the stored step: the first segment's size and the smallest (default 1000)
  --description TEXT   up to 256 characters
  --json               JSON output (numbers as decimal strings)
  --allow-volatile-store  accept a Redis without appendonly yes + appendfsync always
Bad input or an unknown key exits with code 2; a store that does not answer exits 1 (retry later).
`;

function intOf(raw: string | undefined, name: string): number | bigint | undefined {
  if (raw === undefined) return undefined;
  if (!/^[0-9]{1,19}$/.test(raw))
    throw serverError('USAGE', `--${name} must be a non-negative integer, got ${JSON.stringify(raw)}`);
  const n = BigInt(raw);
  return n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
}

const view = (k: KeyInfo): Record<string, unknown> => ({
  key: k.key,
  maxId: k.maxId.toString(),
  step: k.step,
  description: k.description,
  updateTime: k.updateTime ? k.updateTime.toISOString() : null,
});

const line = (k: KeyInfo): string =>
  `${k.key}\tnext ${k.maxId}\tstep ${k.step}${k.description !== null ? `\t${k.description}` : ''}\n`;

export const sequencesCommand = command(FLAGS, SEQUENCES_HELP, async (args, io) => {
  const [sub, key, ...rest] = args.positionals;
  const needsKey = sub === 'create' || sub === 'show';
  if (!(needsKey || sub === 'list') || (needsKey ? key === undefined || rest.length > 0 : key !== undefined))
    throw serverError(
      'USAGE',
      'flurry sequences takes create KEY [--start N] [--step S] [--description TEXT], list, or show KEY (see flurry sequences --help)',
    );
  if (sub !== 'create' && ['start', 'step', 'description'].some((f) => lastString(args, f) !== undefined))
    throw serverError('USAGE', '--start, --step and --description belong to flurry sequences create');
  const url = lastString(args, 'store') ?? io.env.FLURRY_SEQUENCES;
  if (!url)
    throw serverError(
      'USAGE',
      'name the store with --store URL or FLURRY_SEQUENCES (postgres://…, mysql://…, redis://…)',
    );
  const json = hasFlag(args, 'json');
  const sequences = await openSequences(url, { allowVolatileStore: hasFlag(args, 'allow-volatile-store') });
  try {
    if (sub === 'list') {
      const keys = await sequences.list();
      return await write(io.stdout, json ? `${JSON.stringify(keys.map(view))}\n` : keys.map(line).join(''));
    }
    if (sub === 'show') {
      const k = await sequences.show(key);
      if (!k)
        throw sequenceError(
          'KEY_UNKNOWN',
          `the sequence key "${key}" does not exist in ${sequences.store.description}; see the keys with flurry sequences list, or create it with flurry sequences create ${key}`,
          { key },
        );
      return await write(io.stdout, json ? `${JSON.stringify(view(k))}\n` : line(k));
    }
    const start = intOf(lastString(args, 'start'), 'start');
    const step = intOf(lastString(args, 'step'), 'step');
    const k = await sequences.create(key, {
      start,
      step: step === undefined ? undefined : Number(step),
      description: lastString(args, 'description'),
    });
    await write(io.stdout, json ? `${JSON.stringify(view(k))}\n` : `created ${line(k)}`);
  } finally {
    await sequences.close();
  }
});
