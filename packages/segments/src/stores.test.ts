/**
 * Segment mode on real engines started by the harness (PostgreSQL, MariaDB, Redis on free loopback ports with
 * temporary data directories): uniqueness under concurrency from several instances, Leaf's own SQL racing ours
 * on one table, restart, store restart, SIGSTOP of the store mid-allocation, a burst with step 1, bad
 * credentials, and Redis's persistence check.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { FlurryError } from '@flurry/core';
import { startDatabase, startEngine, type RunningDatabase, type RunningEngine } from '@flurry/coordination/testing';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { Redis } from 'ioredis';
import { openSequences, type Sequences, type SequencesOptions } from './index.js';

const code = (e: unknown): string => (e instanceof FlurryError ? e.code : String(e));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

type Kind = 'postgres' | 'mariadb' | 'redis';
interface Engine {
  url: string;
  kill(): Promise<void>;
  restart(): Promise<void>;
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
  /** Leaf's allocation, statement for statement, through its own connection; [start, end). */
  leafAllocate?(key: string, customStep?: number): Promise<[bigint, bigint]>;
  closeLeaf?(): Promise<void>;
}

async function redisSafe(url: string): Promise<void> {
  const r = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    await r.config('SET', 'appendonly', 'yes');
    await r.config('SET', 'appendfsync', 'always');
  } finally {
    r.disconnect();
  }
}

async function start(kind: Kind): Promise<Engine> {
  if (kind === 'redis') {
    const e: RunningEngine = await startEngine('redis');
    await redisSafe(e.url);
    return {
      url: e.url,
      kill: () => e.kill(),
      restart: async () => {
        await e.restart();
        await redisSafe(e.url);
      },
      pause: () => e.pause(),
      resume: () => e.resume(),
      stop: () => e.stop(),
    };
  }
  const db: RunningDatabase = await startDatabase(kind);
  let leaf:
    { allocate(key: string, customStep?: number): Promise<[bigint, bigint]>; close(): Promise<void> } | undefined;
  const leafConn = (): NonNullable<typeof leaf> => {
    if (leaf) return leaf;
    if (kind === 'postgres') {
      const pool = new pg.Pool({ ...db.connection, max: 4 });
      pool.on('error', () => undefined); // idle clients when the database stops
      leaf = {
        async allocate(key, customStep) {
          const c = await pool.connect();
          try {
            await c.query('BEGIN');
            if (customStep === undefined)
              await c.query('UPDATE leaf_alloc SET max_id = max_id + step WHERE biz_tag = $1', [key]);
            else await c.query('UPDATE leaf_alloc SET max_id = max_id + $1 WHERE biz_tag = $2', [customStep, key]);
            const r = await c.query<{ max_id: string; step: number }>(
              'SELECT biz_tag, max_id, step FROM leaf_alloc WHERE biz_tag = $1',
              [key],
            );
            await c.query('COMMIT');
            const max = BigInt(r.rows[0].max_id);
            return [max - BigInt(customStep ?? r.rows[0].step), max];
          } finally {
            c.release();
          }
        },
        close: () => pool.end(),
      };
    } else {
      const pool = mysql.createPool({
        ...db.connection,
        connectionLimit: 4,
        supportBigNumbers: true,
        bigNumberStrings: true,
      });
      leaf = {
        async allocate(key, customStep) {
          const c = await pool.getConnection();
          try {
            await c.beginTransaction();
            if (customStep === undefined)
              await c.query('UPDATE leaf_alloc SET max_id = max_id + step WHERE biz_tag = ?', [key]);
            else await c.query('UPDATE leaf_alloc SET max_id = max_id + ? WHERE biz_tag = ?', [customStep, key]);
            const [rows] = await c.query('SELECT biz_tag, max_id, step FROM leaf_alloc WHERE biz_tag = ?', [key]);
            await c.commit();
            const row = (rows as { max_id: string; step: number }[])[0];
            const max = BigInt(row.max_id);
            return [max - BigInt(customStep ?? row.step), max];
          } finally {
            c.release();
          }
        },
        close: () => pool.end(),
      };
    }
    return leaf;
  };
  return {
    url: db.url,
    kill: () => db.kill(),
    restart: () => db.restart(),
    pause: () => {
      db.pause();
      signalTree(db.process.pid, 'SIGSTOP');
    },
    resume: () => {
      signalTree(db.process.pid, 'SIGCONT');
      db.resume();
    },
    stop: async () => {
      await leaf?.close().catch(() => undefined);
      await db.stop();
    },
    leafAllocate: (key, step) => leafConn().allocate(key, step),
    closeLeaf: async () => {
      await leaf?.close();
      leaf = undefined;
    },
  };
}

/** Calls next() until it succeeds (bounded), returning the number and the coded errors seen. */
async function nextEventually(seqs: Sequences, key: string, ms: number): Promise<{ value: bigint; errors: string[] }> {
  const errors: string[] = [];
  const until = Date.now() + ms;
  for (let i = 0; i < 10_000 && Date.now() < until; i++) {
    try {
      return { value: await seqs.get(key).nextBigInt(), errors };
    } catch (e) {
      errors.push(code(e));
      await sleep(50);
    }
  }
  throw new Error(`no number for ${key} within ${ms} ms; errors: ${[...new Set(errors)].join(', ')}`);
}

/**
 * Every descendant of `pid`. PostgreSQL backends call setsid(), so the harness's pause() (SIGSTOP to the
 * postmaster's process group) leaves the backends of open connections running; the test stops each process.
 */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(d)]);
    } catch {
      /* gone */
    }
  }
  const out: number[] = [];
  const stack = [pid];
  while (stack.length && out.length < 10_000) {
    const p = stack.pop()!;
    for (const c of children.get(p) ?? []) {
      out.push(c);
      stack.push(c);
    }
  }
  return out;
}

function signalTree(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  for (const p of [pid, ...descendants(pid)]) {
    try {
      process.kill(p, signal);
    } catch {
      /* gone */
    }
  }
}

const FAST: SequencesOptions = { timeoutMs: 1500, retryMs: 100, waitTimeoutMs: 10_000 };
/** For the tests that are not about faults: a loaded machine (many agents on 2 cores) can stall a commit past 1.5 s. */
const PATIENT: SequencesOptions = { ...FAST, timeoutMs: 15_000, waitTimeoutMs: 60_000 };

for (const kind of ['postgres', 'mariadb', 'redis'] as const) {
  describe(`segments on ${kind}`, { timeout: 240_000 }, () => {
    let engine: Engine;
    before(async () => {
      engine = await start(kind);
    });
    after(async () => {
      await engine?.stop();
    });

    it(`GIVEN three instances racing on three keys with a small step (${kind}) THEN no number repeats and each instance's numbers increase`, async () => {
      const insts = await Promise.all([0, 1, 2].map(() => openSequences(engine.url, { ...PATIENT, maxStep: 40 })));
      for (const k of ['a', 'b', 'c']) await insts[0].create(`race-${k}`, { step: 10 });
      const seen = new Map<string, Set<bigint>>();
      await Promise.all(
        insts.flatMap((inst) =>
          ['a', 'b', 'c'].map(async (k) => {
            const key = `race-${k}`;
            const set = seen.get(key) ?? new Set<bigint>();
            seen.set(key, set);
            const s = inst.get(key);
            let last = 0n;
            for (let i = 0; i < 100; i++) {
              // ten concurrent callers per round, plus a batch
              const got = await Promise.all(Array.from({ length: 10 }, () => Promise.resolve(s.nextBigInt())));
              got.push(...(await s.batchBigInt(5)));
              for (const v of got) {
                assert.ok(v > last, `${key}: ${v} after ${last}`);
                last = v;
                assert.ok(!set.has(v), `${key}: ${v} issued twice`);
                set.add(v);
              }
            }
          }),
        ),
      );
      for (const set of seen.values()) assert.equal(set.size, 3 * 100 * 15);
      await Promise.all(insts.map((i) => i.close()));
    });

    it(`GIVEN a clean restart (${kind}) THEN the unused remainder is handed back and the next instance continues right after the last number issued`, async () => {
      const a = await openSequences(engine.url, { ...PATIENT, maxStep: 100 });
      await a.create('restart', { step: 100 });
      let last = 0n;
      for (let i = 0; i < 42; i++) last = await a.get('restart').nextBigInt();
      await sleep(100);
      const r = await a.close();
      assert.ok(r.handedBack > 0n, 'handed back');
      assert.equal(r.wasted, 0n);
      const b = await openSequences(engine.url, PATIENT);
      assert.equal(await b.get('restart').nextBigInt(), last + 1n);
      await b.close();
    });

    it(`GIVEN the store killed and restarted (${kind}) THEN buffered numbers keep coming, an empty buffer is STORE_UNAVAILABLE, and it recovers by itself with no repeat`, async () => {
      const seqs = await openSequences(engine.url, { ...FAST, maxStep: 50 });
      await seqs.create('crash', { step: 50 });
      const s = seqs.get('crash');
      const seen = new Set<bigint>();
      for (let i = 0; i < 10; i++) seen.add(await s.nextBigInt());
      await sleep(200); // the prefetch lands
      await engine.kill();
      const errors: string[] = [];
      for (let i = 0; i < 200; i++) {
        try {
          const v = await s.nextBigInt();
          assert.ok(!seen.has(v));
          seen.add(v);
        } catch (e) {
          errors.push(code(e));
          break;
        }
      }
      assert.equal(seen.size, 100, 'both segments issued while the store was down');
      assert.deepEqual(errors, ['FLURRY_E_SEQUENCE_STORE_UNAVAILABLE']);
      await engine.restart();
      const { value } = await nextEventually(seqs, 'crash', 60_000);
      assert.ok(!seen.has(value) && value > 100n, `recovered with ${value}`);
      await seqs.close();
    });

    it(`GIVEN the store SIGSTOPped mid-allocation (${kind}) THEN callers get STORE_UNAVAILABLE within the timeout, and after SIGCONT numbers resume with no repeat`, async () => {
      const seqs = await openSequences(engine.url, { ...FAST, maxStep: 20 });
      await seqs.create('stall', { step: 20 });
      const s = seqs.get('stall');
      const seen = new Set<bigint>();
      seen.add(await s.nextBigInt());
      engine.pause();
      let err: unknown;
      const t0 = Date.now();
      try {
        for (let i = 0; i < 100; i++) {
          const v = await s.nextBigInt(); // the prefetch at 10 % is in flight against a stopped store
          assert.ok(!seen.has(v));
          seen.add(v);
        }
      } catch (e) {
        err = e;
      } finally {
        engine.resume();
      }
      assert.equal(code(err), 'FLURRY_E_SEQUENCE_STORE_UNAVAILABLE');
      assert.ok(Date.now() - t0 < 15_000, 'bounded by the store timeout');
      const { value } = await nextEventually(seqs, 'stall', 30_000);
      assert.ok(!seen.has(value));
      for (let i = 0; i < 100; i++) {
        const v = await s.nextBigInt();
        assert.ok(!seen.has(v), `${v} repeated`);
        seen.add(v);
      }
      await seqs.close();
    });

    it(`GIVEN step 1 and a burst of 1,000 concurrent next() (${kind}) THEN none fails and all are distinct`, async () => {
      const seqs = await openSequences(engine.url, PATIENT);
      await seqs.create('burst', { step: 1 });
      const got = await Promise.all(
        Array.from({ length: 1000 }, () => Promise.resolve(seqs.get('burst').nextBigInt())),
      );
      assert.equal(new Set(got).size, 1000);
      await assert.rejects(
        async () => seqs.get('unknown-key').nextBigInt(),
        (e) => code(e) === 'FLURRY_E_SEQUENCE_KEY_UNKNOWN',
      );
      const keys = (await seqs.list()).map((k) => k.key);
      assert.ok(keys.includes('burst') && !keys.includes('unknown-key'));
      const info = await seqs.show('burst');
      assert.equal(info?.step, 1);
      await seqs.close();
    });

    if (kind !== 'redis') {
      it(`GIVEN Leaf's SQL verbatim and Flurry allocating concurrently on one leaf_alloc table (${kind}) THEN no number is in two segments`, async () => {
        const seqs = await openSequences(engine.url, { ...PATIENT, maxStep: 30 });
        await seqs.create('shared', { step: 25 });
        const ours: bigint[] = [];
        const leafRanges: [bigint, bigint][] = [];
        await Promise.all([
          ...[0, 1].map(async () => {
            for (let i = 0; i < 600; i++) ours.push(await seqs.get('shared').nextBigInt());
          }),
          ...[0, 1, 2].map(async (j) => {
            for (let i = 0; i < 40; i++) leafRanges.push(await engine.leafAllocate!('shared', j === 2 ? 7 : undefined));
          }),
        ]);
        assert.equal(new Set(ours).size, ours.length);
        for (const v of ours) {
          for (const [a, b] of leafRanges) assert.ok(v < a || v >= b, `${v} is inside Leaf's segment [${a}, ${b})`);
        }
        const sorted = [...leafRanges].sort((x, y) => (x[0] < y[0] ? -1 : 1));
        for (let i = 1; i < sorted.length; i++) assert.ok(sorted[i][0] >= sorted[i - 1][1], 'Leaf segments overlap');
        await seqs.close();
      });

      it(`GIVEN wrong credentials or a table without Leaf's columns (${kind}) THEN coded errors that never print the password`, async () => {
        const u = new URL(engine.url);
        u.password = 'not-the-password';
        await assert.rejects(
          () => openSequences(u.toString(), FAST),
          (e) => code(e) === 'FLURRY_E_SEQUENCE_AUTH' && !(e as Error).message.includes('not-the-password'),
        );
        const bad = new URL(engine.url);
        bad.searchParams.set('table', 'missing_table');
        await assert.rejects(
          () => openSequences(bad.toString(), { ...FAST, createTable: false }),
          (e) => code(e) === 'FLURRY_E_SEQUENCE_STORE_CORRUPT',
        );
      });
    } else {
      it('GIVEN a Redis with appendfsync everysec THEN open refuses with FLURRY_E_SEQUENCE_STORE_VOLATILE unless allowVolatileStore', async () => {
        const r = new Redis(engine.url);
        try {
          await r.config('SET', 'appendfsync', 'everysec');
          await assert.rejects(
            () => openSequences(engine.url, FAST),
            (e) => code(e) === 'FLURRY_E_SEQUENCE_STORE_VOLATILE' && /appendfsync always/.test((e as Error).message),
          );
          const seqs = await openSequences(engine.url, { ...FAST, allowVolatileStore: true });
          await seqs.close();
        } finally {
          await r.config('SET', 'appendfsync', 'always');
          r.disconnect();
        }
      });
    }
  });
}
