// Public-ID keys and keyrings (docs/public-ids.md#keys): a key never shows its secret; only export() does.
import { randomBelow, randomFill } from '../random.js';
import { fromBase64url, readTextFile, sha256Hex, toBase64url } from '#platform';
import { BASE58_ALPHABET } from '../codecs/formats.js';
import { ErrorCode, FlurryError } from '../errors.js';

const KEY_PREFIX = 'fk1_';
const KEY_PATTERN = /^fk1_([1-9A-HJ-NP-Za-km-z])_([A-Za-z0-9_-]{43})$/;
const INSPECT = Symbol.for('nodejs.util.inspect.custom');

/** Key material held out of reach of enumeration, JSON and inspection. */
const secrets = new WeakMap<PublicIdKey, Uint8Array>();
const fingerprints = new WeakMap<PublicIdKey, string>();

function invalid(message: string, details: Record<string, unknown> = {}): FlurryError {
  return new FlurryError(ErrorCode.PUBLIC_KEY_INVALID, message, details);
}

/** One public-ID key: its one-character `id` and a 256-bit secret that is never printed. */
export class PublicIdKey {
  /** The key ID: one base58 character, the first character of every public ID made with it. */
  readonly id: string;
  private constructor(id: string, secret: Uint8Array) {
    this.id = id;
    secrets.set(this, secret);
    Object.freeze(this);
  }

  /**
   * A non-secret 12-hex-digit fingerprint (SHA-256 of a label and the secret) to tell keys apart in logs; computed when
   * first read (the first SHA-256 of a process costs a CLI start about 0.5 ms).
   */
  get fingerprint(): string {
    let fp = fingerprints.get(this);
    if (fp === undefined)
      fingerprints.set(this, (fp = sha256Hex(['flurry/public-key-fingerprint/v1', secrets.get(this)!]).slice(0, 12)));
    return fp;
  }

  /**
   * Parses `fk1_<keyId>_<base64url>`; surrounding whitespace is ignored. Errors are `FLURRY_E_PUBLIC_KEY_INVALID` and
   * never echo the secret.
   */
  static parse(text: string): PublicIdKey {
    if (typeof text !== 'string')
      throw invalid(
        `A public-ID key must be a string of the form fk1_<keyId>_<43 base64url characters>, got a ${typeof text}.`,
      );
    const t = text.trim();
    const m = KEY_PATTERN.exec(t);
    if (!m) {
      const why = !t.startsWith(KEY_PREFIX)
        ? 'it does not start with "fk1_"'
        : t.length !== 49
          ? `it is ${t.length} characters long, a key is 49`
          : 'its key ID must be one base58 character and its secret 43 base64url characters';
      throw invalid(
        `A public-ID key must look like fk1_<keyId>_<43 base64url characters> (from "flurry key new"), but ${why}. The key is not shown here because it is a secret.`,
        { length: t.length },
      );
    }
    const secret = fromBase64url(m[2]);
    if (secret.length !== 32 || toBase64url(secret) !== m[2]) {
      throw invalid(
        'A public-ID key secret must be exactly 32 bytes in canonical base64url (43 characters); regenerate it with "flurry key new".',
      );
    }
    return new PublicIdKey(m[1], secret);
  }

  /**
   * A new random key (256 bits from the kernel's random source, see `randomFill`). Without `id`, a random base58
   * character; pass one that differs from the keys still in your keyring when rotating.
   */
  static generate(id?: string): PublicIdKey {
    if (id !== undefined && !(typeof id === 'string' && id.length === 1 && BASE58_ALPHABET.includes(id))) {
      throw invalid(
        `A key ID must be one character of the base58 alphabet ${BASE58_ALPHABET} (no 0, O, I, l), got ${JSON.stringify(String(id))}.`,
        { keyId: String(id) },
      );
    }
    return new PublicIdKey(id ?? BASE58_ALPHABET[randomBelow(BASE58_ALPHABET.length)], randomFill(new Uint8Array(32)));
  }

  /** The full secret string `fk1_<keyId>_<base64url>`, for storing the key: treat it as a secret. */
  export(): string {
    return `${KEY_PREFIX}${this.id}_${toBase64url(this.secretBytes())}`;
  }

  /** The raw 32 secret bytes (a copy), for the cipher. */
  secretBytes(): Uint8Array {
    return new Uint8Array(secrets.get(this) as Uint8Array);
  }

  toString(): string {
    return `PublicIdKey(${this.id}, fingerprint ${this.fingerprint}, secret redacted)`;
  }

  toJSON(): { id: string; fingerprint: string; secret: string } {
    return { id: this.id, fingerprint: this.fingerprint, secret: '[redacted]' };
  }

  [INSPECT](): string {
    return this.toString();
  }
}

/** Generates a new key and returns its secret string `fk1_<keyId>_<base64url>` (what `flurry key new` prints). */
export function generateKey(keyId?: string): string {
  return PublicIdKey.generate(keyId).export();
}

/**
 * Parses a keyring: one or more keys separated by commas, whitespace or new lines (lines starting with `#` are
 * comments). Accepts strings, arrays of strings and key objects. Empty rings and duplicate key IDs are
 * `FLURRY_E_PUBLIC_KEY_INVALID`. The first key is the current one.
 */
export function parseKeys(input: string | PublicIdKey | readonly (string | PublicIdKey)[]): PublicIdKey[] {
  const items = Array.isArray(input) ? input : [input as string | PublicIdKey];
  const keys: PublicIdKey[] = [];
  for (const item of items) {
    if (item instanceof PublicIdKey) keys.push(item);
    else if (typeof item === 'string') {
      const tokens = item
        .replace(/^\s*#.*$/gm, '')
        .split(/[\s,]+/)
        .filter(Boolean);
      tokens.forEach((tok, i) => {
        try {
          keys.push(PublicIdKey.parse(tok));
        } catch (e) {
          // PublicIdKey.parse throws only its FlurryErrors.
          const { code, message, details } = e as FlurryError;
          throw new FlurryError(code, `Keyring entry ${keys.length + 1}: ${message}`, {
            ...details,
            entry: keys.length + 1,
            token: i + 1,
          });
        }
      });
    } else throw invalid(`A keyring must be a string, a PublicIdKey or an array of them, got a ${typeof item}.`);
  }
  if (keys.length === 0) {
    throw invalid(
      'The public-ID keyring is empty; set FLURRY_PUBLIC_KEY (or pass keys) to keys made with "flurry key new", the current key first.',
    );
  }
  keys.forEach((k, i) => {
    const prev = keys.findIndex((o) => o.id === k.id);
    if (prev < i) {
      throw invalid(
        `Keyring entries ${prev + 1} and ${i + 1} share the key ID "${k.id}"; a public ID names its key by this one character, so IDs must differ. Generate the new key with another ID (flurry key new --id X).`,
        { keyId: k.id },
      );
    }
  });
  return keys;
}

/** Reads a keyring from a file (as {@link parseKeys} reads text); a missing file is `FLURRY_E_PUBLIC_KEY_INVALID`. */
export function loadKeysFromFile(path: string): PublicIdKey[] {
  let text: string;
  try {
    text = readTextFile(path);
  } catch (e) {
    throw invalid(
      `Cannot read the public-ID key file ${JSON.stringify(path)}: ${(e as NodeJS.ErrnoException).code ?? String(e)}.`,
      { path },
    );
  }
  return parseKeys(text);
}

/**
 * Loads the keyring from the environment: `FLURRY_PUBLIC_KEY` (comma-separated, current key first) or else the file
 * named by `FLURRY_PUBLIC_KEY_FILE`. Returns `[]` when neither is set (public IDs disabled); a set but malformed value
 * is an error.
 */
export function loadKeysFromEnv(
  env: Record<string, string | undefined> = (globalThis as { process?: { env: Record<string, string | undefined> } })
    .process?.env ?? {},
): PublicIdKey[] {
  if (env.FLURRY_PUBLIC_KEY?.trim()) return parseKeys(env.FLURRY_PUBLIC_KEY);
  const file = env.FLURRY_PUBLIC_KEY_FILE?.trim();
  return file ? loadKeysFromFile(file) : [];
}
