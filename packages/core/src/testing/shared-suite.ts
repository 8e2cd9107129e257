/**
 * The core suite every runtime runs (docs/runtimes.md): Node.js, Bun and Deno load
 * `@flurry/core` unchanged, and workerd and Chromium a bundle of it (esbuild, the `default`
 * condition: `platform/web.ts`), and run these checks of the generator, layouts, decoding,
 * codecs, public IDs (with known answers, the same bytes everywhere), UUIDs and random tokens,
 * and of a generator whose clock is frozen (as
 * `Date.now()` is inside a Cloudflare Workers request): it borrows ahead within its bound,
 * never repeats, and then throws the coded `FLURRY_E_SEQUENCE_EXHAUSTED` instead of
 * spinning. Platform-neutral: no `node:` import and no test runner of its own; it returns
 * one result per check (the runner of each runtime prints them as JSON).
 */
import { FlurryError } from '../errors.js';
import { Generator } from '../generator/generator.js';
import { Layout, PRESETS, type PresetName } from '../layout/index.js';
import { decodeId, encodeId, FORMATS, jsonReplacer, jsonReviver } from '../codecs/index.js';
import { PublicIdCipher, generateKey, parseKeys } from '../public/index.js';
import { randomHex } from '../random.js';
import { UuidGenerator } from '../uuid/generator.js';
import { decodeUuid, encodeUuid, isUuidV7 } from '../uuid/forms.js';
import { systemClock } from '../clock.js';
import type { Clock } from '../clock.js';

/** One check's outcome. */
export interface SuiteResult {
  /** The check. */
  readonly name: string;
  /** Whether it held. */
  readonly ok: boolean;
  /** Why not, when it did not. */
  readonly error?: string;
}

/** Whether `Atomics.wait` may block this thread. */
function canWait(): boolean {
  try {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 1, 0);
    return true;
  } catch {
    return false;
  }
}

function check(cond: boolean, what: string): void {
  if (!cond) throw new Error(what);
}

function increasingUnique(ids: readonly bigint[]): boolean {
  for (let i = 1; i < ids.length; i++) if (ids[i] <= ids[i - 1]) return false;
  return true;
}

/** A clock whose wall and monotonic time never move (a Workers request); `nonBlocking` as workerd's. */
function frozenClock(atMs: number, nonBlocking = false): Clock {
  return {
    now: () => atMs,
    monotonic: () => 0,
    sleep: () => undefined,
    delay: () => Promise.resolve(),
    monotonicEpoch: 'frozen',
    ...(nonBlocking ? { nonBlocking: true } : {}),
  };
}

/** The first `FlurryError` code thrown by up to `n` calls of `fn` (pushing what they return), or ''. */
function codeOf(n: number, fn: () => bigint, into: bigint[]): string {
  try {
    for (let i = 0; i < n; i++) into.push(fn());
  } catch (e) {
    return e instanceof FlurryError ? e.code : String(e);
  }
  return '';
}

/** A public-ID key and what Node.js makes of it (any runtime must give the same bytes). */
const KNOWN_KEY = 'fk1_K_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8';

const CHECKS: Record<string, () => void> = {
  platform(): void {
    // Where the thread cannot block (workerd, a browser's main thread) the system clock says so.
    const blocking = typeof SharedArrayBuffer === 'function' && canWait();
    check(
      systemClock.nonBlocking === (blocking ? undefined : true),
      `systemClock.nonBlocking is ${String(systemClock.nonBlocking)}`,
    );
    const a = systemClock.monotonic();
    check(Number.isFinite(a) && systemClock.monotonic() >= a, 'monotonic time');
  },
  generator(): void {
    const gen = new Generator({ layout: 'twitter', node: { datacenter: 3, worker: 9 } });
    try {
      const ids = [...gen.batch(10_000), gen.next()];
      check(increasingUnique(ids), '10,001 IDs unique and increasing');
      const d = Layout.from('twitter').decode(ids[0]);
      check(d.fields.datacenter === 3 && d.fields.worker === 9, 'decoded node fields');
      check(Math.abs(d.unixMs - Date.now()) < 60_000, 'decoded time is now');
      check(BigInt(gen.nextString()) > ids[ids.length - 1], 'nextString continues');
    } finally {
      gen.close();
    }
    // Node claims (in memory where there is no file system): one live generator per node; the next one continues.
    const first = new Generator({ layout: 'twitter', node: { datacenter: 3, worker: 10 }, onExhausted: 'borrow' });
    const last = first.batch(9_000).pop() as bigint;
    let code = '';
    try {
      new Generator({ layout: 'twitter', node: { datacenter: 3, worker: 10 } }).close();
    } catch (e) {
      code = e instanceof FlurryError ? e.code : String(e);
    }
    first.close();
    check(code === 'FLURRY_E_NODE_IN_USE', `a second live generator for a node is refused (got ${code})`);
    const next = new Generator({ layout: 'twitter', node: { datacenter: 3, worker: 10 } });
    try {
      check(next.next() > last, 'the next generator for the node starts after the last ID of the previous one');
    } finally {
      next.close();
    }
  },
  layouts(): void {
    for (const name of Object.keys(PRESETS) as PresetName[]) {
      const layout = Layout.from(name);
      const info = layout.describe();
      check(info.name === name && info.totalBits <= 64, `${name} describes itself`);
      check(layout.expiresAt.getTime() > Date.now(), `${name} is alive`);
      const lo = layout.minIdAt(Date.now());
      check(layout.decode(lo).unixMs <= Date.now(), `${name} minIdAt decodes back`);
    }
    const custom = Layout.parse('timestamp:40,region:3,worker:8,sequence:12', { epoch: 1735689600000 });
    check(
      custom.totalBits === 63 && custom.toFieldsString() === 'timestamp:40,region:3,worker:8,sequence:12',
      'custom',
    );
  },
  codecs(): void {
    const id = 1859214170478923776n;
    for (const f of FORMATS) check(decodeId(encodeId(id, f), f) === id, `${f} round trip`);
    const text = JSON.stringify({ id }, jsonReplacer);
    check(text === '{"id":"1859214170478923776"}', 'JSON keeps every digit');
    const back = JSON.parse(text, jsonReviver(['id'])) as { id: bigint };
    check(back.id === id, 'JSON reviver gives the bigint back');
  },
  publicIds(): void {
    const cipher = PublicIdCipher.create({ keys: parseKeys(generateKey('k')), bits: 63, alphabet: 'base58' });
    const id = 1859214170478923776n;
    const pub = cipher.encode(id);
    check(pub !== encodeId(id, 'base58') && cipher.decode(pub) === id, 'public ID round trip');
  },
  knownAnswers(): void {
    const keys = parseKeys(KNOWN_KEY);
    check(keys[0].export() === KNOWN_KEY, 'a key exports as it was parsed (base64url)');
    check(keys[0].fingerprint === 'b2b2dd228f37', `the key's fingerprint (SHA-256) is Node's: ${keys[0].fingerprint}`);
    const id = 1859214170478923776n;
    const base58 = PublicIdCipher.create({ keys, bits: 63, alphabet: 'base58' });
    check(base58.encode(id) === 'KBXbyC2eqP8zpE3q', `63-bit base58 public ID is Node's: ${base58.encode(id)}`);
    const wide = PublicIdCipher.create({ keys, bits: 64 });
    check(wide.encode(id) === 'KCmUJF4zBACyLOHw', `64-bit public ID is Node's: ${wide.encode(id)}`);
    check(wide.decode('KCmUJF4zBACyLOHw') === id, 'and decodes back (HKDF key schedule and Chaskey tag)');
  },
  uuids(): void {
    const gen = new UuidGenerator({ node: 7 });
    try {
      const text = gen.batch(5_000);
      check(text.every((u) => isUuidV7(u)) && new Set(text).size === 5_000, '5,000 canonical UUIDv7s, unique');
      for (let i = 1; i < text.length; i++) check(text[i] > text[i - 1], 'canonical UUIDs increase');
      const big = gen.batch(1_000, 'bigint');
      check(
        increasingUnique(big) && big[0] > BigInt(`0x${text[text.length - 1].replace(/-/g, '')}`),
        'bigint form continues',
      );
      const d = decodeUuid(text[0]);
      check(d.node === 7 && Math.abs(d.unixMs - Date.now()) < 60_000, 'decoded node and time');
      check(decodeUuid(encodeUuid(text[9], 'base58'), { form: 'base58' }).node === 7, 'base58 form round trip');
    } finally {
      gen.close();
    }
  },
  random(): void {
    const a = randomHex(12);
    const b = randomHex(12);
    check(/^[0-9a-f]{24}$/.test(a) && a !== b, 'random tokens');
  },
  frozenClock(): void {
    // 2 ms of borrowing: 3 ticks of 4,096 IDs, then the coded error, never a spin or a repeat.
    const gen = new Generator({
      layout: 'twitter',
      node: { datacenter: 1, worker: 2 },
      clock: frozenClock(Date.UTC(2026, 0, 1)),
      onExhausted: 'borrow',
      maxBorrowMs: 2,
    });
    try {
      const ids = gen.batch(10_000);
      check(ids.length === 10_000 && increasingUnique(ids), '10,000 IDs unique and increasing with the clock frozen');
      let code = '';
      const started = Date.now();
      try {
        for (let i = 0; i < 10_000; i++) ids.push(gen.next());
      } catch (e) {
        code = e instanceof FlurryError ? e.code : String(e);
      }
      check(code === 'FLURRY_E_SEQUENCE_EXHAUSTED', `the coded error once the borrowing is used up (got ${code})`);
      check(ids.length === 3 * 4096 && increasingUnique(ids), 'every ID before it unique and increasing');
      check(Date.now() - started < 5_000, 'no spinning');
    } finally {
      gen.close();
    }
    // A clock that cannot block (workerd's, a browser's main thread): even under the default 'wait' policy the
    // generator borrows within maxBorrowMs instead of waiting, then throws at once.
    const nonBlocking = new Generator({
      layout: 'twitter',
      node: { datacenter: 1, worker: 4 },
      clock: frozenClock(Date.UTC(2026, 0, 1), true),
      maxBorrowMs: 2,
    });
    try {
      const ids: bigint[] = [];
      const t0 = Date.now();
      const code = codeOf(20_000, () => nonBlocking.next(), ids);
      check(code === 'FLURRY_E_SEQUENCE_EXHAUSTED', `non-blocking: the coded error (got ${code})`);
      check(ids.length === 3 * 4096 && increasingUnique(ids), 'non-blocking: 12,288 IDs unique and increasing first');
      check(Date.now() - t0 < 5_000, 'non-blocking: no waiting');
    } finally {
      nonBlocking.close();
    }
    // The default policy waits for a tick the frozen clock never brings: bounded, then the same error.
    const waiting = new Generator({
      layout: 'twitter',
      node: { datacenter: 1, worker: 3 },
      clock: frozenClock(Date.UTC(2026, 0, 1)),
    });
    try {
      waiting.batch(4096);
      let code = '';
      try {
        waiting.next();
      } catch (e) {
        code = e instanceof FlurryError ? e.code : String(e);
      }
      check(code === 'FLURRY_E_SEQUENCE_EXHAUSTED', `wait: the coded error after the tick (got ${code})`);
    } finally {
      waiting.close();
    }
  },
};

/** Runs every check; never throws (a failed check is a result with `ok: false`). */
export function runSharedSuite(): Promise<SuiteResult[]> {
  const results: SuiteResult[] = [];
  for (const [name, fn] of Object.entries(CHECKS)) {
    try {
      fn();
      results.push({ name, ok: true });
    } catch (e) {
      results.push({ name, ok: false, error: e instanceof Error ? `${e.name}: ${e.message}` : String(e) });
    }
  }
  return Promise.resolve(results);
}
