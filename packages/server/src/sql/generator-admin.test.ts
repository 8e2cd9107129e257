/**
 * Setting up and freeing the in-database generator on real PostgreSQL 15 and MariaDB (started
 * by the coordination harness): the key hint `flurry sql --generate` prints runs as printed on
 * each engine (a column DEFAULT on PostgreSQL, a BEFORE INSERT trigger on MySQL/MariaDB); a
 * preview reserves nothing; `flurry sql --release` and `<prefix>release_node()` refuse while
 * another session holds a lane (its own or the shared one), then free the node; `--release
 * --slot` frees a reservation whose generator is not installed; `flurry status` shows the
 * reservation as reserved, never stale.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Layout } from '@flurry/core';
import { startDatabase, type RunningDatabase } from '@flurry/coordination/testing';
import { runFlurry } from '../test-support.js';
import { codeOf, mySession, pgSession } from '../testing/generate-sessions.js';

const twitter = Layout.from('twitter');

test('GIVEN flurry sql --generate --registry file:… (not a database URL) THEN it is bad input: exit 2, FLURRY_E_USAGE', async () => {
  for (const url of ['file:/tmp/flurry-registry', 'not a url']) {
    const r = await runFlurry(['sql', '--generate', '--registry', url]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /FLURRY_E_USAGE: .*(not a database URL|not a URL)/);
    const rel = await runFlurry(['sql', '--release', '--registry', url]);
    assert.equal(rel.code, 2, rel.stderr);
  }
});

for (const kind of ['postgres', 'mariadb'] as const) {
  describe(`the in-database generator's set-up and release on ${kind === 'postgres' ? 'PostgreSQL 15' : 'MariaDB'}`, () => {
    let db: RunningDatabase;
    let url: string;
    const open = () => (kind === 'postgres' ? pgSession(db) : mySession(db));
    const live = async (cluster: string): Promise<number> => {
      const s = await open();
      try {
        return Number(
          await s.one(
            `SELECT COUNT(*) FROM flurry_nodes WHERE namespace = '${cluster}/datacenter-0' AND token IS NOT NULL`,
          ),
        );
      } finally {
        await s.close();
      }
    };
    before(async () => {
      db = await startDatabase(kind);
      url = `${db.url}?table=flurry_nodes`;
    });
    after(async () => {
      await db?.stop();
    });

    test('GIVEN three previews (no --apply) THEN nothing is reserved, not even the table created, and --apply then takes slot 0', async () => {
      for (let i = 0; i < 3; i++) {
        const r = await runFlurry(['sql', '--generate', '--registry', url, '--cluster', 'pre']);
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stdout, /^-- Preview: nothing was reserved\. Slot 0 of pre\/datacenter-0 /m);
        assert.match(r.stdout, /next_id/);
      }
      const s = await open();
      try {
        const tables = await s.one(
          kind === 'postgres'
            ? "SELECT count(*) FROM information_schema.tables WHERE table_name IN ('flurry_nodes', 'flurry_generator')"
            : "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name IN ('flurry_nodes', 'flurry_generator')",
        );
        assert.equal(tables, '0', 'a preview creates no table');
      } finally {
        await s.close();
      }
      const r = await runFlurry([
        'sql',
        '--generate',
        '--registry',
        url,
        '--cluster',
        'pre',
        '--prefix',
        'pre_',
        '--apply',
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^-- Reserved slot 0 of pre\/datacenter-0/m);
      // With the table there, a preview still reserves nothing and names the next free slot.
      const p = await runFlurry(['sql', '--generate', '--registry', url, '--cluster', 'pre', '--prefix', 'other_']);
      assert.equal(p.code, 0, p.stderr);
      assert.match(p.stdout, /Slot 1 of pre\/datacenter-0/);
      assert.equal(await live('pre'), 1);
    });

    test('GIVEN the key hint flurry sql --generate --apply prints THEN its statements run as printed and an insert gets an ID of the reserved node (an explicit ID is kept)', async () => {
      const r = await runFlurry(['sql', '--generate', '--registry', url, '--cluster', 'hint', '--apply']);
      assert.equal(r.code, 0, r.stderr);
      const slot = Number(/Reserved slot (\d+) of hint/.exec(r.stdout)?.[1]);
      const statements = [...r.stdout.matchAll(/^-- {3}(.+);$/gm)].map((m) => m[1]);
      assert.ok(statements.length >= 1, r.stdout);
      if (kind === 'mariadb') assert.match(statements.join('\n'), /BEFORE INSERT/);
      else assert.match(statements.join('\n'), /DEFAULT flurry_next_id\(\)/);
      const s = await open();
      try {
        for (const st of statements) await s.exec(st);
        await s.exec("INSERT INTO t (body) VALUES ('a')");
        await s.exec("INSERT INTO t (body) VALUES ('b')");
        await s.exec("INSERT INTO t (id, body) VALUES (7, 'c')");
        const ids = (await s.one("SELECT CONCAT(MIN(id), ',', MAX(id)) FROM t WHERE body <> 'c'")).split(',');
        const [a, b] = ids.map(BigInt);
        assert.ok(b > a, `${a} < ${b}`);
        for (const id of [a, b]) assert.equal(twitter.decode(id).fields.worker, slot);
        assert.equal(await s.one("SELECT id FROM t WHERE body = 'c'"), '7');
      } finally {
        await s.close();
      }
    });

    test('GIVEN another session holding a lane (its own, or the shared one) THEN flurry sql --release and release_node() refuse with FLURRY_E_SQL_NODE_IN_USE; once it ends the node is freed and next_id is fenced', async () => {
      const r = await runFlurry([
        'sql',
        '--generate',
        '--registry',
        url,
        '--cluster',
        'rel',
        '--prefix',
        'rel_',
        '--apply',
      ]);
      assert.equal(r.code, 0, r.stderr);
      const one = await runFlurry([
        'sql',
        '--generate',
        '--registry',
        url,
        '--cluster',
        'rel',
        '--prefix',
        'one_',
        '--lanes',
        '1',
        '--apply',
      ]);
      assert.equal(one.code, 0, one.stderr);
      assert.equal(await live('rel'), 2);
      for (const prefix of ['rel_', 'one_']) {
        // one_ has a single lane, the shared one: its users are found all the same.
        const user = await open();
        const caller = await open();
        let userOpen = true;
        try {
          const id = BigInt(await user.one(`SELECT ${prefix}next_id()`));
          const cli = await runFlurry(['sql', '--release', '--registry', url, '--prefix', prefix]);
          assert.equal(cli.code, 1, cli.stderr);
          assert.match(cli.stderr, /FLURRY_E_SQL_NODE_IN_USE: 1 other session\(s\)/);
          let error: unknown;
          try {
            await caller.one(`SELECT ${prefix}release_node()`);
          } catch (e) {
            error = e;
          }
          assert.equal(codeOf(error), 'FLURRY_E_SQL_NODE_IN_USE', String(error));
          // The caller's own lane does not count, and the refused release changed nothing.
          assert.ok(BigInt(await user.one(`SELECT ${prefix}next_id()`)) > id);
          await user.close();
          userOpen = false;
          let done: { code: number | null; stdout: string; stderr: string } | undefined;
          for (let i = 0; i < 50; i++) {
            // the server frees the ended session's locks asynchronously
            done = await runFlurry(['sql', '--release', '--registry', url, '--prefix', prefix]);
            if (done.code === 0) break;
            await new Promise((res) => setTimeout(res, 100));
          }
          assert.equal(done?.code, 0, done?.stderr);
          assert.match(
            done?.stdout ?? '',
            /^-- Released slot \d of rel\/datacenter-0; its high-water mark is Unix ms \d+\.$/m,
          );
          let fenced: unknown;
          try {
            await caller.one(`SELECT ${prefix}next_id()`);
          } catch (e) {
            fenced = e;
          }
          assert.equal(codeOf(fenced), 'FLURRY_E_SQL_NODE_RELEASED', String(fenced));
        } finally {
          if (userOpen) await user.close();
          await caller.close();
        }
      }
      assert.equal(await live('rel'), 0);
      const again = await runFlurry(['sql', '--release', '--registry', url, '--prefix', 'rel_']);
      assert.equal(again.code, 1);
      assert.match(again.stderr, /FLURRY_E_SQL_GENERATOR: this database has no in-database generator/);
    });

    test('GIVEN a reservation whose generator is not installed THEN flurry sql --release --slot frees its row, keeping the floor as the high-water mark; a free slot is refused', async () => {
      const r = await runFlurry([
        'sql',
        '--generate',
        '--registry',
        url,
        '--cluster',
        'gone',
        '--prefix',
        'gone_',
        '--apply',
      ]);
      assert.equal(r.code, 0, r.stderr);
      const floor = Number(/IDs start after Unix ms (\d+)/.exec(r.stdout)?.[1]);
      const s = await open();
      try {
        await s.exec('DROP TABLE gone_generator'); // as if its DDL had never run
        const rel = await runFlurry(['sql', '--release', '--registry', url, '--slot', '0', '--cluster', 'gone']);
        assert.equal(rel.code, 0, rel.stderr);
        assert.match(rel.stdout, /Released slot 0 of gone\/datacenter-0; .* never installed/);
        assert.equal(await live('gone'), 0);
        const hw = Number(
          await s.one("SELECT high_water_ms FROM flurry_nodes WHERE namespace = 'gone/datacenter-0' AND slot = 0"),
        );
        assert.equal(hw, floor);
        const free = await runFlurry(['sql', '--release', '--registry', url, '--slot', '0', '--cluster', 'gone']);
        assert.equal(free.code, 1);
        assert.match(
          free.stderr,
          /FLURRY_E_SQL_GENERATOR: slot 0 of gone\/datacenter-0 .* holds no SQL generator's reservation/,
        );
      } finally {
        await s.close();
      }
    });

    test('GIVEN a generator holding a node THEN flurry status --cluster shows it as reserved (for in-database generation, since when, by whom), never stale', async () => {
      const r = await runFlurry([
        'sql',
        '--generate',
        '--registry',
        url,
        '--cluster',
        'stat',
        '--prefix',
        'stat_',
        '--apply',
      ]);
      assert.equal(r.code, 0, r.stderr);
      const table = await runFlurry(['status', '--registry', url, '--cluster', 'stat']);
      assert.equal(table.code, 0, table.stderr);
      assert.match(table.stdout, /reserved: a node reserved for in-database generation/);
      assert.match(table.stdout, /^datacenter=0,worker=0 .* \d{4}-\d\d-\d\dT[^ ]+ +- .* reserved \(sql generator\)$/m);
      assert.doesNotMatch(table.stdout, /stale/);
      const json = await runFlurry(['status', '--registry', url, '--cluster', 'stat', '--json']);
      const body = JSON.parse(json.stdout) as {
        holders: { state: string; role: string; hostname: string; pid: number; heldSinceMs: number }[];
      };
      assert.equal(body.holders.length, 1);
      const [h] = body.holders;
      assert.equal(h.state, 'reserved');
      assert.equal(h.role, 'sql generator');
      assert.ok(h.hostname && h.pid > 0 && h.heldSinceMs > 0, JSON.stringify(h));
    });
  });
}
