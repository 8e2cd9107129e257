/**
 * The in-database generator (`flurry sql --generate`) on real PostgreSQL 15 and MariaDB:
 * 16 concurrent sessions never collide and each sees increasing IDs; a clock stepped back
 * keeps IDs increasing (borrowing the last tick) and then refuses; sequence exhaustion
 * waits for the next tick; the registry token fences next_id (takeover, release); two
 * generators of one cluster hold different slots; each session keeps its lane (a sub-range of
 * the sequence field) across a rolled-back transaction, a freed lane continues above its last
 * ID, sessions beyond the lanes share the last lane.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { GENERATOR_RESERVE_MS, Layout, generatorLanes } from '@flurry/core';
import { leasedGenerator, openRegistry } from '@flurry/coordination';
import { startDatabase, type RunningDatabase } from '@flurry/coordination/testing';
import { httpGet, jsonBody, runFlurry, startFlurry, tempDir } from '../test-support.js';
import { calls, codeOf, laneFree, mySession, pgSession } from '../testing/generate-sessions.js';

const SESSIONS = 16;
const CALLS = Number(process.env.FLURRY_SQL_GEN_CALLS ?? 10_000);
const twitter = Layout.from('twitter');
const small = Layout.parse('timestamp:41,worker:10,sequence:2', { epoch: '2024-01-01T00:00:00Z' });
const six = Layout.parse('timestamp:41,worker:10,sequence:6', { epoch: '2024-01-01T00:00:00Z' });
/** IDs of one lane per tick (twitter: 16 lanes of 256). */
const LANE = (twitter.maxSequence + 1) / generatorLanes(twitter);

/**
 * Registers the in-database generator's tests for one database (one test file per database,
 * so each gets the test runner's whole per-file time budget).
 */
export function runGeneratorTests(kind: 'postgres' | 'mariadb'): void {
  describe(`flurry_next_id() on ${kind === 'postgres' ? 'PostgreSQL 15' : 'MariaDB'}`, () => {
    let db: RunningDatabase;
    let url: string;
    const open = () => (kind === 'postgres' ? pgSession(db) : mySession(db));
    const setNow = (ms: number | null) =>
      kind === 'postgres'
        ? ms === null
          ? 'RESET flurry.now_ms'
          : `SET flurry.now_ms = '${ms}'`
        : `SET @flurry_now_ms = ${ms === null ? 'NULL' : ms}`;
    before(async () => {
      db = await startDatabase(kind);
      url = `${db.url}?table=flurry_nodes`;
    });
    after(async () => {
      await db?.stop();
    });
    /** Installs a generator of `layout` (epoch 2024) for cluster `name` with the prefix `name_`. */
    const install = (name: string, layout: Layout) =>
      runFlurry([
        'sql',
        '--generate',
        '--registry',
        url,
        '--cluster',
        name,
        '--prefix',
        `${name}_`,
        '--fields',
        layout.toFieldsString(),
        '--epoch',
        '2024-01-01T00:00:00Z',
        '--apply',
      ]);
    /** `n` sessions each calling `call` 1,000 times at once: each session's IDs in order. */
    const callsFrom = async (n: number, call: string): Promise<bigint[][]> => {
      const sessions = await Promise.all(Array.from({ length: n }, open));
      try {
        return await Promise.all(
          sessions.map(async (s) => {
            const out: bigint[] = [];
            for (let i = 0; i < 1000; i++) out.push(BigInt(await s.one(call)));
            return out;
          }),
        );
      } finally {
        await Promise.all(sessions.map((x) => x.close()));
      }
    };

    test('GIVEN flurry sql --generate --apply THEN the registry row shows the sql generator holding a slot of the cluster, far in the future, and a second generator of the cluster gets another slot', async () => {
      const r = await runFlurry([
        'sql',
        '--generate',
        '--registry',
        url,
        '--cluster',
        'orders',
        '--max-wait-ms',
        '300',
        '--apply',
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /Reserved slot 0 of orders\/datacenter-0 \(node \{"datacenter":0,"worker":0\}\)/);
      const s = await open();
      try {
        const holder = JSON.parse(
          await s.one("SELECT holder FROM flurry_nodes WHERE namespace = 'orders/datacenter-0' AND slot = 0"),
        ) as {
          role: string;
        };
        assert.equal(holder.role, 'sql generator');
        const year = await s.one(
          kind === 'postgres'
            ? "SELECT extract(year FROM expires_at)::int FROM flurry_nodes WHERE namespace = 'orders/datacenter-0' AND slot = 0"
            : "SELECT YEAR(expires_at) FROM flurry_nodes WHERE namespace = 'orders/datacenter-0' AND slot = 0",
        );
        assert.ok(Number(year) >= 2038, year);
        // a second generator (another prefix) in the same cluster: the next slot
        const r2 = await runFlurry([
          'sql',
          '--generate',
          '--registry',
          url,
          '--cluster',
          'orders',
          '--prefix',
          'second_',
          '--apply',
        ]);
        assert.equal(r2.code, 0, r2.stderr);
        assert.match(r2.stdout, /Reserved slot 1 of orders\/datacenter-0/);
        const id0 = BigInt(await s.one('SELECT flurry_next_id()'));
        const id1 = BigInt(await s.one('SELECT second_next_id()'));
        assert.equal(twitter.decode(id0).fields.worker, 0);
        assert.equal(twitter.decode(id1).fields.worker, 1);
        // setting up again over a live generator is refused
        const again = await runFlurry(['sql', '--generate', '--registry', url, '--cluster', 'orders', '--apply']);
        assert.equal(again.code, 1);
        assert.match(again.stderr, /FLURRY_E_SQL_GENERATOR: .*already has an in-database generator/);
        assert.doesNotMatch(again.stderr + r.stdout, new RegExp(db.connection.password));
      } finally {
        await s.close();
      }
    });

    test(`GIVEN ${SESSIONS} concurrent sessions x ${CALLS.toLocaleString('en-US')} calls and a flurry serve of the same cluster on the same registry THEN every ID is unique, each session's IDs increase, and no ID of the service collides`, async () => {
      const svc = await startFlurry({ registry: url, args: ['--cluster', 'orders'], timeoutMs: 60_000 });
      const sessions = await Promise.all(Array.from({ length: SESSIONS }, open));
      const t0 = performance.now();
      try {
        let done = false;
        const fromService: bigint[] = [];
        const served = (async () => {
          while (!done) {
            const r = await httpGet(svc.port, '/v1/ids?count=100');
            assert.equal(r.status, 200, r.body);
            for (const id of jsonBody<{ ids: string[] }>(r.body).ids) fromService.push(BigInt(id));
            await new Promise((r2) => setTimeout(r2, 50)); // a steady service (about 2,000 IDs/s), not a CPU hog
          }
        })();
        // Rounds of one call alone (a statement of its own) and 99 in one statement (no round trip each).
        const per = await Promise.all(
          sessions.map(async (s) => {
            const out: bigint[] = [];
            while (out.length < CALLS) {
              out.push(BigInt(await s.one('SELECT flurry_next_id()')));
              const more = Math.min(99, CALLS - out.length);
              if (more > 0) for (const id of await s.column(calls('flurry_next_id()', more))) out.push(BigInt(id));
            }
            return out;
          }),
        );
        done = true;
        await served;
        const secs = (performance.now() - t0) / 1000;
        const all = new Set<bigint>();
        const lanes = new Set<number>();
        for (const ids of per) {
          for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1], `decrease at ${i}`);
          for (const id of ids) all.add(id);
          lanes.add(Math.floor(twitter.decode(ids[0]).sequence / LANE));
        }
        assert.equal(all.size, SESSIONS * CALLS, 'duplicates');
        for (const id of [...all].slice(0, 1000))
          assert.deepEqual(twitter.decode(id).fields, { datacenter: 0, worker: 0 });
        const svcWorker = twitter.decode(fromService[0]).fields.worker;
        assert.ok(svcWorker !== 0 && svcWorker !== 1, `the service took worker ${svcWorker}, held by an sql generator`);
        for (const id of fromService)
          assert.ok(!all.has(id), `the service issued ${id}, also issued by flurry_next_id()`);
        assert.equal(new Set(fromService).size, fromService.length, 'the service issued an ID twice');
        console.log(
          `# ${kind}: ${SESSIONS} sessions x ${CALLS} flurry_next_id() calls: ${all.size} unique IDs in ${secs.toFixed(1)} s (${Math.round(all.size / secs)} calls/s) over ${lanes.size} lanes; ` +
            `flurry serve (worker ${svcWorker}, same registry) issued ${fromService.length} IDs meanwhile: no collision`,
        );
      } finally {
        await Promise.all(sessions.map((s) => s.close()));
        await svc.stop('SIGTERM');
      }
    });

    test("GIVEN a Generator leased from the same registry table and cluster THEN it skips the sql generator's slots and no ID of either collides", async () => {
      const registry = await openRegistry(url, { cluster: 'orders', stateDir: tempDir('sqlgen-state') });
      const ids = await leasedGenerator({ registry, layout: twitter });
      const sessions = await Promise.all(Array.from({ length: 4 }, open));
      try {
        const libWorker = twitter.decode(ids.next()).fields.worker;
        assert.ok(libWorker !== 0 && libWorker !== 1, `the library took worker ${libWorker}, held by an sql generator`);
        const lib: bigint[] = [];
        const stop = Date.now() + 60_000;
        const sqlIds = Promise.all(
          sessions.map(async (s) => {
            const out: bigint[] = [];
            for (let i = 0; i < 2000 && Date.now() < stop; i++) {
              out.push(BigInt(await s.one('SELECT flurry_next_id()')));
              for (let k = 0; k < 5; k++) lib.push(ids.next());
            }
            return out;
          }),
        );
        const fromSql = (await sqlIds).flat();
        const all = new Set([...fromSql, ...lib]);
        assert.equal(all.size, fromSql.length + lib.length, 'an ID issued twice');
        console.log(
          `# ${kind}: ${fromSql.length} flurry_next_id() IDs (worker 0) and ${lib.length} library IDs (worker ${libWorker}) from one registry table: no collision`,
        );
      } finally {
        await Promise.all(sessions.map((x) => x.close()));
        await ids.close();
        await registry.close();
      }
    });

    if (kind === 'postgres') {
      test('GIVEN a session on a lane of its own (PostgreSQL) THEN its calls count in its cursor: a row write only once per reservation, and an ID of a rolled-back transaction is not handed out again', async () => {
        const s = await open();
        try {
          await s.one('SELECT flurry_next_id()'); // takes the lane and makes the cursor
          // txid_current_if_assigned() is NULL in a transaction that wrote nothing.
          const call = "SELECT flurry_next_id()::text || ':' || COALESCE(txid_current_if_assigned()::text, '')";
          const N = 3000;
          const t0 = Date.now();
          let writes = 0;
          let last = 0n;
          for (let i = 0; i < N; i++) {
            const [id, xid] = (await s.one(call)).split(':');
            assert.ok(BigInt(id) > last, 'increasing');
            last = BigInt(id);
            if (xid !== '') writes++;
          }
          const ms = Date.now() - t0;
          // One reservation per GENERATOR_RESERVE_MS of the clock at most, plus the first.
          const bound = Math.ceil(ms / GENERATOR_RESERVE_MS) + 2;
          console.log(
            `# postgres: ${N} calls in ${ms} ms wrote the lane row in ${writes} transactions (bound ${bound} = ${ms} ms / ${GENERATOR_RESERVE_MS} ms + 2)`,
          );
          assert.ok(writes <= bound, `${writes} of ${N} calls wrote a row, bound ${bound}`);
          await s.exec('BEGIN');
          const undone = BigInt(await s.one('SELECT flurry_next_id()'));
          await s.exec('ROLLBACK');
          const after = BigInt(await s.one('SELECT flurry_next_id()'));
          assert.ok(after > undone, `the cursor is not rolled back (${after} > ${undone})`);
        } finally {
          await s.close();
        }
      });
    }

    if (kind === 'postgres') {
      test('GIVEN a session ends right after an ID (PostgreSQL) THEN the next session on its lane starts after the reservation without waiting, at most GENERATOR_RESERVE_MS ahead of the clock', async () => {
        // A fixed clock just past the earlier tests' reservations (real clock + 100 ms at most),
        // and not so far ahead that the next tests' sessions would wait for this one's.
        const at = Date.now() + 200;
        const a = await open();
        let last: bigint;
        try {
          await a.exec(setNow(at));
          last = BigInt(await a.one('SELECT flurry_next_id()'));
          assert.equal(twitter.decode(last).unixMs, at);
        } finally {
          await a.close();
        }
        const b = await open();
        try {
          await laneFree(b, kind);
          await b.exec(setNow(at)); // the clock has not moved: a wait would end in CLOCK_BACKWARDS
          const first = BigInt(await b.one('SELECT flurry_next_id()'));
          const second = BigInt(await b.one('SELECT flurry_next_id()'));
          assert.equal(
            Math.floor(twitter.decode(first).sequence / LANE),
            Math.floor(twitter.decode(last).sequence / LANE),
            'the same lane',
          );
          assert.ok(first > last && second > first, 'above the last session, increasing');
          assert.equal(
            twitter.decode(first).unixMs,
            at + GENERATOR_RESERVE_MS,
            'the tick after the reservation, one reservation ahead',
          );
          assert.equal(twitter.decode(second).unixMs, at + GENERATOR_RESERVE_MS, 'then on in that tick');
        } finally {
          await b.close();
        }
      });
    }

    test('GIVEN the database clock stepped back THEN IDs keep increasing in the last tick, and once its sequence is used up next_id waits maxWaitMs and raises FLURRY_E_CLOCK_BACKWARDS', async () => {
      const s = await open();
      try {
        const ahead = Date.now() + 1500;
        await s.exec(setNow(ahead));
        const first = BigInt(await s.one('SELECT flurry_next_id()'));
        assert.equal(twitter.decode(first).unixMs, ahead);
        await s.exec(setNow(ahead - 1000)); // stepped back one second
        let last = first;
        let error: unknown;
        const t0 = Date.now();
        for (let i = 0; i < LANE + 1; i++) {
          try {
            const id = BigInt(await s.one('SELECT flurry_next_id()'));
            assert.ok(id > last, 'increasing while the clock is behind');
            assert.equal(twitter.decode(id).unixMs, ahead, 'borrowed from the last tick');
            last = id;
          } catch (e) {
            error = e;
            break;
          }
        }
        assert.equal(codeOf(error), 'FLURRY_E_CLOCK_BACKWARDS', String(error));
        assert.ok(Date.now() - t0 >= 300, 'waited maxWaitMs');
        assert.equal(twitter.decode(last).sequence % LANE, LANE - 1, "the lane's share of the tick used up");
        await s.exec(setNow(null));
        while (Date.now() <= ahead + 5) await new Promise((r) => setTimeout(r, 50));
        assert.ok(BigInt(await s.one('SELECT flurry_next_id()')) > last, 'resumes past the borrowed tick');
      } finally {
        await s.close();
      }
    });

    test('GIVEN a 2-bit sequence (4 IDs per ms) and 4 sessions THEN exhaustion waits for the next tick and no ID repeats', async () => {
      const r = await install('small', small);
      assert.equal(r.code, 0, r.stderr);
      const per = await callsFrom(4, 'SELECT small_next_id()');
      const all = new Set(per.flat());
      assert.equal(all.size, 4000);
      const ticks = new Set([...all].map((id) => small.decode(id).unixMs));
      assert.ok(ticks.size >= 1000, `${ticks.size} ticks for 4,000 IDs at 4 per tick`);
      for (const ids of per) for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1]);
    });

    test('GIVEN a session whose transaction rolls back THEN it keeps its lane; GIVEN it ends THEN the next session takes the lane and continues above its last ID (PostgreSQL: after its reservation, refusing while the clock is behind it)', async () => {
      const s1 = await open();
      let last: bigint;
      const ahead = Date.now() + 2000;
      try {
        // the first call inside a transaction that rolls back: the lane stays this session's
        await s1.exec(kind === 'postgres' ? 'BEGIN' : 'START TRANSACTION');
        const b = BigInt(await s1.one('SELECT flurry_next_id()'));
        await s1.exec('ROLLBACK');
        const c = BigInt(await s1.one('SELECT flurry_next_id()'));
        const d = BigInt(await s1.one('SELECT flurry_next_id()'));
        assert.equal(Math.floor(twitter.decode(c).sequence / LANE), Math.floor(twitter.decode(b).sequence / LANE));
        assert.equal(Math.floor(twitter.decode(d).sequence / LANE), Math.floor(twitter.decode(b).sequence / LANE));
        assert.ok(d > c);
        await s1.exec(setNow(ahead));
        last = BigInt(await s1.one('SELECT flurry_next_id()'));
        assert.equal(twitter.decode(last).unixMs, ahead);
      } finally {
        await s1.close();
      }
      const s2 = await open();
      try {
        await laneFree(s2, kind);
        await s2.exec(setNow(ahead - 1000)); // a second behind the lane's last tick
        if (kind === 'postgres') {
          // PostgreSQL: the lane's row holds its last session's reservation (up to GENERATOR_RESERVE_MS
          // past its last ID), and the next holder starts after it: with the clock a second
          // behind, it waits maxWaitMs for the clock and refuses rather than go back.
          let error: unknown;
          try {
            await s2.one('SELECT flurry_next_id()');
          } catch (e) {
            error = e;
          }
          assert.equal(codeOf(error), 'FLURRY_E_CLOCK_BACKWARDS', String(error));
          await s2.exec(setNow(ahead + GENERATOR_RESERVE_MS));
          const next = BigInt(await s2.one('SELECT flurry_next_id()'));
          assert.ok(next > last, `the lane continues above its last ID (${next} > ${last})`);
          assert.equal(
            twitter.decode(next).unixMs,
            ahead + GENERATOR_RESERVE_MS,
            'in the first tick after the reservation',
          );
          assert.equal(
            Math.floor(twitter.decode(next).sequence / LANE),
            Math.floor(twitter.decode(last).sequence / LANE),
          );
          return;
        }
        const first = BigInt(await s2.one('SELECT flurry_next_id()'));
        assert.equal(
          Math.floor(twitter.decode(first).sequence / LANE),
          Math.floor(twitter.decode(last).sequence / LANE),
          'the freed lane is taken again',
        );
        assert.ok(first > last, `the lane continues above its last ID (${first} > ${last})`);
        assert.equal(twitter.decode(first).unixMs, ahead, "in the lane's last tick");
      } finally {
        await s2.close();
      }
    });

    test('GIVEN a 6-bit sequence (4 lanes of 16 IDs per tick) and 8 sessions THEN 3 sessions hold lanes of their own, 5 share the last, exhaustion waits, and no ID repeats', async () => {
      const r = await install('six', six);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /4 lane\(s\) of 16 IDs per tick/);
      const per = await callsFrom(8, 'SELECT six_next_id()');
      const all = new Set(per.flat());
      assert.equal(all.size, 8000, 'duplicates');
      for (const ids of per) for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1]);
      const laneOf = (ids: bigint[]) => Math.floor(six.decode(ids[0]).sequence / 16);
      const lanes = per.map(laneOf).sort();
      assert.deepEqual(lanes, [0, 1, 2, 3, 3, 3, 3, 3]);
      for (const ids of per) for (const id of ids) assert.equal(Math.floor(six.decode(id).sequence / 16), laneOf(ids));
      const perTick = new Map<number, number>();
      for (const id of all) {
        const d = six.decode(id);
        if (Math.floor(d.sequence / 16) === 3) perTick.set(d.unixMs, (perTick.get(d.unixMs) ?? 0) + 1);
      }
      assert.ok(Math.max(...perTick.values()) <= 16, 'the shared lane never issues more than 16 IDs per tick');
    });

    test('GIVEN the registry token taken over, then restored, then the node released THEN next_id is fenced, resumes, and after release raises FLURRY_E_SQL_NODE_RELEASED with the high-water mark written', async () => {
      const s = await open();
      try {
        if (kind === 'postgres') {
          // Earlier tests moved session clocks up to about 2 s ahead, and a session taking a lane
          // starts after the lane's reservation: let the real clock pass every reservation first.
          const tick = Number(await s.one('SELECT max(last_tick) + 1 FROM flurry_lanes'));
          const until = twitter.epochMs + tick * twitter.unitMs;
          for (let i = 0; i < 200 && Date.now() <= until + 5; i++) await new Promise((r) => setTimeout(r, 50));
        }
        const before = BigInt(await s.one('SELECT flurry_next_id()'));
        const token = await s.one(
          "SELECT token FROM flurry_nodes WHERE namespace = 'orders/datacenter-0' AND slot = 0",
        );
        await s.exec("UPDATE flurry_nodes SET token = 'intruder' WHERE namespace = 'orders/datacenter-0' AND slot = 0");
        await assert.rejects(
          () => s.one('SELECT flurry_next_id()'),
          (e) => codeOf(e) === 'FLURRY_E_LEASE_LOST',
        );
        await s.exec(`UPDATE flurry_nodes SET token = '${token}' WHERE namespace = 'orders/datacenter-0' AND slot = 0`);
        const lastId = BigInt(await s.one('SELECT flurry_next_id()'));
        assert.ok(lastId > before);
        const hw = Number(await s.one('SELECT flurry_release_node()'));
        assert.ok(hw >= twitter.decode(lastId).unixMs, `high water ${hw}`);
        const row = await s.one(
          `SELECT ${kind === 'postgres' ? "concat_ws(',', coalesce(token, 'null'), high_water_ms, released_cleanly)" : "CONCAT_WS(',', COALESCE(token, 'null'), high_water_ms, released_cleanly)"} FROM flurry_nodes WHERE namespace = 'orders/datacenter-0' AND slot = 0`,
        );
        assert.equal(row, `null,${hw},${kind === 'postgres' ? 't' : '1'}`);
        await assert.rejects(
          () => s.one('SELECT flurry_next_id()'),
          (e) => codeOf(e) === 'FLURRY_E_SQL_NODE_RELEASED',
        );
        // a new generator on the freed slot starts after the high-water mark
        const r = await runFlurry(['sql', '--generate', '--registry', url, '--cluster', 'orders', '--apply']);
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stdout, /Reserved slot 0 .* IDs start after Unix ms (\d+)/);
        assert.ok(BigInt(await s.one('SELECT flurry_next_id()')) > lastId);
      } finally {
        await s.close();
      }
    });
  });
}
