// The public-ID feature's state: the codec over the service's IDs, when a key is configured.
import { FlurryError, PublicIdCodec, loadKeysFromFile, parseKeys } from '@flurry/core';
import type { ServeConfig } from '../config/index.js';
import { serverError } from '../errors.js';
import { FeatureSlot } from '../http/context.js';

/** Issues and reads public IDs, when a key is configured; `decode` throws coded `FLURRY_E_PUBLIC_ID_*` errors. */
export interface PublicIds {
  next(): string;
  decode(publicId: string): bigint;
  encode?(id: bigint): string;
}

export const PUBLIC_IDS = new FeatureSlot<PublicIds>('publicIds');

/** `p`, or the `FLURRY_E_PUBLIC_IDS_DISABLED` error when public IDs are off. */
export function requirePublicIds(p: PublicIds | undefined): PublicIds {
  if (p !== undefined) return p;
  throw serverError(
    'PUBLIC_IDS_DISABLED',
    'public IDs are off: start the service with a public-ID key (--public-key or FLURRY_PUBLIC_KEY; make one with "flurry key new")',
  );
}

type PublicIdSettings = Pick<ServeConfig, 'publicKey' | 'publicKeyFile'>;

export function publicIdsOn(s: PublicIdSettings): boolean {
  return s.publicKey !== undefined || s.publicKeyFile !== undefined;
}

/** The public-ID codec over `next` for IDs of `bits` bits (none without a key); `FLURRY_E_CONFIG` for a bad key. */
export function makePublicIds(s: PublicIdSettings, bits: number, next: () => bigint): PublicIds | undefined {
  let keys;
  try {
    if (s.publicKey !== undefined) keys = parseKeys(s.publicKey);
    else if (s.publicKeyFile !== undefined) keys = loadKeysFromFile(s.publicKeyFile);
    else return undefined;
  } catch (err) {
    const setting = s.publicKey !== undefined ? 'publicKey' : 'publicKeyFile';
    throw serverError(
      'CONFIG',
      `invalid setting ${setting}: ${err instanceof FlurryError ? `${err.code}: ${err.message}` : String(err)}`,
      { setting },
    );
  }
  const codec = PublicIdCodec.create({ keys, bits });
  return { next: () => codec.encode(next()), decode: (p) => codec.decode(p), encode: (id) => codec.encode(id) };
}
