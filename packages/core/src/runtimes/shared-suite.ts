/**
 * The core suite every runtime runs (docs/runtimes.md): Node.js, Bun and Deno load
 * `@flurry/core` unchanged and run these checks of the generator, layouts, decoding,
 * codecs, public IDs and random tokens, and of a generator whose clock is frozen (as
 * `Date.now()` is inside a Cloudflare Workers request): it borrows ahead within its bound,
 * never repeats, and then throws the coded `FLURRY_E_SEQUENCE_EXHAUSTED` instead of
 * spinning. Platform-neutral: no `node:` import and no test runner of its own; it returns
 * one result per check (the runner of each runtime prints them as JSON).
 *
 * @example
 * ```ts
 * const results = await runSharedSuite();
 * const failed = results.filter((r) => !r.ok); // [] everywhere it works
 * ```
 */
import { FlurryError } from '../errors.js';
import { Generator } from '../generator/generator.js';
import { Layout, PRESETS, type PresetName } from '../layout/index.js';
import { decodeId, encodeId, FORMATS, jsonReplacer, jsonReviver } from '../codecs/index.js';
import { PublicIdCipher, generateKey, parseKeys } from '../public/index.js';
import { randomHex } from '../random.js';
import type { Clock } from '../clock.js';

/**
 * One check's outcome.
 *
 * @example
 * ```ts
 * const r: SuiteResult = { name: 'generator', ok: true };
 * ```
 */
export interface SuiteResult {
  /** The check. */
  readonly name: string;
  /** Whether it held. */
  readonly ok: boolean;
  /** Why not, when it did not. */
  readonly error?: string;
}

function check(cond: boolean, what: string): void {
  if (!cond) throw new Error(what);
}

function increasingUnique(ids: readonly bigint[]): boolean {
  for (let i = 1; i < ids.length; i++) if (ids[i] <= ids[i - 1]) return false;
  return true;
}

/** A clock whose wall and monotonic time never move (a Workers request). */
function frozenClock(atMs: number): Clock {
  return {
    now: () => atMs,
    monotonic: () => 0,
    sleep: () => undefined,
    delay: () => Promise.resolve(),
    monotonicEpoch: 'frozen',
  };
}

const CHECKS: Record<string, () => void> = {
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

/**
 * Runs every check; never throws (a failed check is a result with `ok: false`).
 *
 * @example
 * ```ts
 * console.log(JSON.stringify(await runSharedSuite()));
 * ```
 */
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
