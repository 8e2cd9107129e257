/** The store contract: per key, `maxId` (Leaf's `max_id`); allocating raises it by `step`, the segment is below it. */
import { sequenceError } from './errors.js';

/** One allocated segment: the numbers `start … end - 1` (`end`: the key's `maxId` right after it). */
export interface Allocation {
  readonly start: bigint;
  readonly end: bigint;
  readonly step: number;
}

/** A key as the store holds it (a row of `leaf_alloc`). */
export interface KeyInfo {
  readonly key: string;
  /** Every number below it has been handed out; the next segment starts here. */
  readonly maxId: bigint;
  /** The stored step: the first segment's size and the smallest step the adaptation uses (like Leaf). */
  readonly step: number;
  readonly description: string | null;
  readonly updateTime: Date | null;
}

/** How to create a key. */
export interface CreateKeyOptions {
  /** The first number the key issues (default 1, like Leaf's `max_id` default). At least 0. */
  start?: bigint | number;
  /** The stored step (default 1000): the first segment's size and the smallest the adaptation goes. 1 … 2^31 - 1. */
  step?: number;
  /** Up to 256 characters (Leaf's `description varchar(256)`). */
  description?: string;
}

/** A store; any method may reject with `…_STORE_UNAVAILABLE` (`details.outcomeUnknown`: a write may have happened). */
export interface SegmentStore {
  readonly kind: string;
  /** The URL without its password. */
  readonly description: string;
  /** Raises `maxId` by `step` (by the stored step when omitted) atomically; `FLURRY_E_SEQUENCE_KEY_UNKNOWN` when the key is missing. */
  allocate(key: string, step?: number): Promise<Allocation>;
  /** Creates a key; `FLURRY_E_SEQUENCE_KEY_EXISTS` when it exists. */
  create(
    key: string,
    options: Required<Pick<CreateKeyOptions, 'step'>> & { start: bigint; description: string | null },
  ): Promise<KeyInfo>;
  show(key: string): Promise<KeyInfo | undefined>;
  /** Every key, sorted by name. */
  list(): Promise<KeyInfo[]>;
  /** Sets `maxId` back to `firstUnused` only if it is still `segmentEnd` (nobody allocated since); true when it did. */
  handBack(key: string, segmentEnd: bigint, firstUnused: bigint): Promise<boolean>;
  close(): Promise<void>;
}

/** Leaf's `biz_tag varchar(128)`, `step int` and a signed 64-bit `max_id`. */
export const MAX_KEY_LENGTH = 128;
export const MAX_STEP = 2 ** 31 - 1;
export const MAX_ID = 2n ** 63n - 1n;

const KEY_RE = /^[A-Za-z0-9_.:-]+$/;

/** The key's characters fit a URL path segment, a shell argument and a Redis key unquoted. */
export function assertKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_KEY_LENGTH || !KEY_RE.test(key)) {
    const shown =
      typeof key === 'string' ? JSON.stringify(key.length > 140 ? `${key.slice(0, 140)}…` : key) : typeof key;
    const allowed = 'A-Z a-z 0-9 _ . : -';
    const message =
      `the sequence key ${shown} is not valid: a key is 1 to ${MAX_KEY_LENGTH} characters from ${allowed} ` +
      `(Leaf's biz_tag varchar(${MAX_KEY_LENGTH})); rename it, e.g. "order" or "order:eu-1"`;
    const details = {
      key: typeof key === 'string' ? key.slice(0, 200) : String(key),
      maxLength: MAX_KEY_LENGTH,
      allowed,
    };
    throw sequenceError('KEY_INVALID', message, details);
  }
}

export function assertStep(step: unknown, name: string): asserts step is number {
  if (typeof step !== 'number' || !Number.isInteger(step) || step < 1 || step > MAX_STEP) {
    const message = `${name} must be an integer from 1 to ${MAX_STEP} (Leaf's step int), got ${String(step)}`;
    throw sequenceError('OPTION', message, { option: name, value: String(step), min: 1, max: MAX_STEP });
  }
}

export function normaliseCreate(options: CreateKeyOptions = {}): Parameters<SegmentStore['create']>[1] {
  const start = options.start ?? 1n;
  const integer = typeof start === 'bigint' || (typeof start === 'number' && Number.isSafeInteger(start));
  if (!integer || BigInt(start) < 0n || BigInt(start) >= MAX_ID) {
    const message = `start must be an integer from 0 to ${MAX_ID - 1n}, got ${String(start)}`;
    throw sequenceError('OPTION', message, { option: 'start', value: String(start) });
  }
  const step = options.step ?? 1000;
  assertStep(step, 'step');
  const description = options.description ?? null;
  if (description !== null && (typeof description !== 'string' || description.length > 256)) {
    const message = `description must be a string of at most 256 characters (Leaf's description varchar(256))`;
    throw sequenceError('OPTION', message, { option: 'description' });
  }
  return { start: BigInt(start), step, description };
}

export function allocationFrom(key: string, maxId: bigint, step: number, store: string): Allocation {
  if (maxId < BigInt(step) || maxId > MAX_ID || step < 1) {
    throw sequenceError(
      'STORE_CORRUPT',
      `the ${store} store answered max_id ${maxId} with step ${step} for key "${key}": out of range (max_id must be at least the step and at most 2^63 - 1)`,
      { key, maxId: maxId.toString(), step },
    );
  }
  return { start: maxId - BigInt(step), end: maxId, step };
}
