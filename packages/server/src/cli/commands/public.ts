/** `flurry public encode|decode`: keyed, reversible obfuscation of IDs (see {@link PUBLIC_HELP}). */
import { FlurryError } from '@flurry/core/errors';
import { parseId } from '@flurry/core/layout';
import { PublicIdCodec, loadKeysFromEnv, parseKeys } from '@flurry/core/public';
import { serverError } from '../../errors.js';
import { hasFlag, lastString, type ParsedCommandLine } from '../args.js';
import { command, layoutOf, LAYOUT_FLAGS, write, type CliIo } from '../io.js';

const FLAGS = { ...LAYOUT_FLAGS, key: { type: 'string' }, json: { type: 'boolean' } } as const;

export const PUBLIC_HELP = `Usage: flurry public encode ID... [--key KEYS] [layout]
       flurry public decode PUBLIC... [--key KEYS] [layout] [--json]

Turns IDs into public IDs (keyed, reversible; no visible order, time or node) and back.
Keys: --key, else FLURRY_PUBLIC_KEY, else the file FLURRY_PUBLIC_KEY_FILE (make one with
"flurry key new"; several comma-separated, the current key first). Prefer the variable:
flags show in ps. The layout (default twitter) fixes the ID width.
Decoding checks the check character (typos: FLURRY_E_PUBLIC_ID_CHECKSUM) and the keyed tag
(a key that did not issue the ID: FLURRY_E_PUBLIC_ID_WRONG_KEY); bad input exits 2.
`;

export const publicCommand = command(FLAGS, PUBLIC_HELP, publicIds, true);

async function publicIds(args: ParsedCommandLine, io: CliIo): Promise<void> {
  const [sub, ...items] = args.positionals;
  if (sub !== 'encode' && sub !== 'decode')
    throw serverError(
      'USAGE',
      `flurry public needs "encode ID..." or "decode PUBLIC..."; got ${sub === undefined ? 'nothing' : `"${sub.slice(0, 24)}"`}. See flurry public --help.`,
    );
  if (items.length === 0)
    throw serverError('USAGE', `flurry public ${sub} needs at least one ${sub === 'encode' ? 'ID' : 'public ID'}`);
  const layout = layoutOf(args);
  const keyFlag = lastString(args, 'key');
  const keys = keyFlag !== undefined ? parseKeys(keyFlag) : loadKeysFromEnv(io.env);
  if (keys.length === 0)
    throw new FlurryError(
      'FLURRY_E_PUBLIC_KEY_INVALID',
      'no public-ID key: pass --key KEY, set FLURRY_PUBLIC_KEY, or set FLURRY_PUBLIC_KEY_FILE to a file holding the keys (make a key with "flurry key new")',
    );
  const codec = PublicIdCodec.create({ keys, bits: layout.totalBits });
  const json = hasFlag(args, 'json');
  const lines =
    sub === 'encode'
      ? items.map((s) => parseId(s, layout)).map((id) => codec.encode(id))
      : items
          .map((p) => codec.decode(p).toString())
          .map((id, i) => (json ? JSON.stringify({ publicId: items[i], id }) : id));
  await write(io.stdout, lines.map((l) => l + '\n').join(''));
}
