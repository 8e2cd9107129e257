/**
 * `flurry next --registry postgres://…` and `mysql://…` as separate processes on real
 * databases (PostgreSQL 15 and MariaDB, started by the coordination harness on loopback), and
 * `flurry registry init`.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Layout } from '@flurry/core';
import { startDatabase, type DatabaseKind, type RunningDatabase } from '@flurry/coordination/testing';
import { runFlurry, type CliResult } from '../test-support.js';

const SPEC = 'timestamp:41,worker:2,sequence:12'; // 4 node IDs for 12 processes: nodes change hands
const layout = Layout.parse(SPEC);
const PROCESSES = 12;
const IDS = 20_000;

interface Run {
  proc: number;
  node: number;
  first: bigint;
  last: bigint;
  count: number;
}

function runOf(proc: number, stdout: string): Run | undefined {
  const text = stdout.trim();
  if (text === '') return undefined;
  const ids = text.split('\n').map(BigInt);
  const nodes = new Set(ids.map((id) => layout.decode(id).fields.worker));
  assert.equal(nodes.size, 1, `process ${proc} issued under ${nodes.size} node IDs`);
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1], `process ${proc}: IDs not increasing at ${i}`);
  return { proc, node: Number([...nodes][0]), first: ids[0], last: ids[ids.length - 1], count: ids.length };
}

/**
 * One process: `flurry next` until a run prints all its IDs (at most 60 tries, 150 s). A run
 * refused with EXHAUSTED is retried; a run that lost its lease or timed out connecting (a process
 * or the database starved on a loaded machine) is retried too, and the IDs it printed before
 * join the overlap check.
 */
async function nextUntilLeased(url: string, cluster: string, proc: number): Promise<Run[]> {
  const until = Date.now() + 150_000;
  const runs: Run[] = [];
  let last: CliResult | undefined;
  for (let attempt = 0; attempt < 60 && Date.now() < until; attempt++) {
    last = await runFlurry(
      ['next', '-n', String(IDS), '--fields', SPEC, '--registry', url, '--cluster', cluster],
      {},
      90_000,
    );
    const run = runOf(proc, last.stdout);
    if (run) runs.push(run);
    if (last.code === 0) {
      assert.equal(run?.count, IDS);
      return runs;
    }
    // EXHAUSTED: all 4 held, try again; LEASE_LOST or UNREACHABLE: a process or the database
    // starved past the TTL or the 5 s connect timeout on a loaded machine (the IDs printed count).
    assert.match(
      last.stderr,
      /FLURRY_E_REGISTRY_EXHAUSTED|FLURRY_E_LEASE_LOST|FLURRY_E_REGISTRY_UNREACHABLE/,
      `process ${proc} failed: ${last.stderr}`,
    );
    await sleep(50 + Math.floor(Math.random() * 100));
  }
  assert.fail(`process ${proc} never completed a run: ${last?.stderr ?? ''}`);
}

function suite(kind: DatabaseKind, scheme: string): void {
  let db: RunningDatabase | undefined;
  const url = async (table: string): Promise<string> => {
    db ??= await startDatabase(kind);
    return `${db.url.replace(/^[a-z]+:/, `${scheme}:`)}?table=${table}`;
  };
  after(() => db?.stop());

  describe(`flurry with a ${scheme}:// registry (${kind})`, () => {
    test(
      `GIVEN ${PROCESSES} concurrent flurry next processes on 4 node IDs THEN no two hold one node at overlapping times AND all IDs are unique`,
      { timeout: 240_000 },
      async () => {
        const u = await url('flurry_cli');
        const runs = (
          await Promise.all(Array.from({ length: PROCESSES }, (_, i) => nextUntilLeased(u, 'cli12', i)))
        ).flat();
        const byNode = new Map<number, Run[]>();
        for (const r of runs) byNode.set(r.node, [...(byNode.get(r.node) ?? []), r]);
        assert.ok(
          [...byNode.values()].some((rs) => rs.length > 1),
          'some node ID changed hands',
        );
        for (const [node, rs] of byNode) {
          rs.sort((a, b) => (a.first < b.first ? -1 : 1));
          for (let i = 1; i < rs.length; i++) {
            assert.ok(
              rs[i].first > rs[i - 1].last,
              `node ${node}: process ${rs[i].proc} issued from ${rs[i].first} while process ${rs[i - 1].proc} held it up to ${rs[i - 1].last}`,
            );
          }
        }
        assert.equal(
          runs.reduce((s, r) => s + r.count, 0),
          PROCESSES * IDS,
        );
      },
    );

    test('GIVEN flurry registry init THEN the table is created and --print shows its DDL without connecting', async () => {
      const u = await url('flurry_init');
      const printed = await runFlurry(['registry', 'init', '--print', u]);
      assert.equal(printed.code, 0, printed.stderr);
      assert.match(printed.stdout, /^CREATE TABLE IF NOT EXISTS .flurry_init. \(/);
      const r = await runFlurry(['registry', 'init', u]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /registry table flurry_init is ready/);
      assert.ok(!r.stdout.includes(db!.connection.password), 'the password is never printed');
      const again = await runFlurry(['registry', 'init', u]);
      assert.equal(again.code, 0, again.stderr);
    });

    test('GIVEN bad registry URLs THEN coded errors that never show the password', async () => {
      const u = await url('flurry_cli');
      const pw = db!.connection.password;
      // Malformed URLs and refused credentials are bad input (exit 2): restarting will not help.
      const cases: [string, RegExp, number][] = [
        [u.replace(/\?.*$/, '?tabel=x'), /FLURRY_E_REGISTRY_URL: .*unknown parameter "tabel"/, 2],
        [u.replace(/\?.*$/, '?table=x;drop'), /FLURRY_E_REGISTRY_URL/, 2],
        [u.replace(/\/[^/?]+\?/, '?'), /FLURRY_E_REGISTRY_URL: .*database is missing/, 2],
        [u.replace(`:${pw}@`, ':not-the-password@'), /FLURRY_E_REGISTRY_AUTH: .*refused the credentials/, 2],
      ];
      for (const [bad, want, code] of cases) {
        const r = await runFlurry(['next', '--registry', bad]);
        assert.equal(r.code, code, `${bad}: ${r.stderr}`);
        assert.match(r.stderr, want);
        assert.ok(!r.stderr.includes(pw) && !r.stderr.includes('not-the-password'), r.stderr);
      }
      const notSql = await runFlurry(['registry', 'init', 'redis://127.0.0.1:6379/0']);
      assert.equal(notSql.code, 2);
      assert.match(notSql.stderr, /FLURRY_E_REGISTRY_URL: registry init applies to SQL registries only/);
    });
  });
}

suite('postgres', 'postgres');
suite('mariadb', 'mysql');
