/** `flurry key new`: prints a new public-ID key (see {@link KEY_HELP}). */
// The key module alone: not the codec (ciphers, checksums) of the public IDs.
import { generateKey } from '@flurry/core/public/keys';
import { serverError } from '../../errors.js';
import { lastString } from '../args.js';
import { command, write } from '../io.js';

const FLAGS = { id: { type: 'string' } } as const;

export const KEY_HELP = `Usage: flurry key new [--id X]

Prints a new public-ID key (keep it secret; give it to FLURRY_PUBLIC_KEY). --id picks its
one-character key ID (base58: 1-9, A-Z, a-z without 0 O I l); default random. For rotation,
put the new key first: FLURRY_PUBLIC_KEY=NEW,OLD.
`;

export const keyCommand = command(FLAGS, KEY_HELP, async (args, io) => {
  const [sub, ...rest] = args.positionals;
  if (sub !== 'new' || rest.length > 0)
    throw serverError(
      'USAGE',
      `flurry key has one subcommand, "new" (flurry key new [--id X]); got ${sub === undefined ? 'none' : `"${[sub, ...rest].join(' ').slice(0, 40)}"`}`,
    );
  await write(io.stdout, generateKey(lastString(args, 'id')) + '\n');
});
