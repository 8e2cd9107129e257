/**
 * The proof every ORM sample of docs/orm.md passes on real PostgreSQL and MariaDB: 10,000
 * rows inserted with IDs from a leased generator through 4 concurrent connections (one ORM
 * instance each), read back through the time window of the ID bounds: every ID equal to the
 * one issued, in the order issued (time order); 1,000 rows with IDs from the database's
 * `flurry_next_id()` (a column DEFAULT on PostgreSQL, a BEFORE INSERT trigger on MariaDB),
 * unique, increasing per connection, of the node `flurry sql --generate` reserved; and the
 * JSON of the rows carrying each ID as its exact decimal string.
 */
import assert from 'node:assert/strict';
import { Layout } from '@flurry/core';
import type { DatabaseConnection } from '@flurry/coordination/testing';
import type { Engine, IdSource, OrmSample } from './sample.js';

const twitter = Layout.from('twitter');

/** The sizes of the proof. */
export interface ProofSizes {
  connections: number;
  appRows: number;
  dbRows: number;
  batch: number;
}

/** The sizes the issue asks for. */
export const FULL_PROOF: ProofSizes = { connections: 4, appRows: 10_000, dbRows: 1_000, batch: 250 };

/**
 * Runs the proof of one sample on one engine (its tables `events` and `orders` empty).
 * `sqlWorker` is the worker field of the node `flurry sql --generate` reserved.
 */
export async function prove(
  sample: OrmSample,
  engine: Engine,
  connection: DatabaseConnection,
  generator: IdSource,
  opts: { sqlWorker: number; sizes?: ProofSizes },
): Promise<{ appRows: number; dbRows: number; ms: number }> {
  const sizes = opts.sizes ?? FULL_PROOF;
  const t0 = Date.now();
  const from = new Date(t0 - 1);
  const issued: bigint[] = [];
  const ids: IdSource = {
    next() {
      const id = generator.next();
      issued.push(id);
      return id;
    },
  };
  const sessions = await Promise.all(
    Array.from({ length: sizes.connections }, () => sample.open(engine, connection, ids)),
  );
  try {
    const perConn = sizes.appRows / sizes.connections;
    const perConnDb = sizes.dbRows / sizes.connections;
    await Promise.all(
      sessions.map(async (s, w) => {
        for (let i = 0; i < perConn; i += sizes.batch) {
          const n = Math.min(sizes.batch, perConn - i);
          await s.insert(Array.from({ length: n }, (_, k) => `w${w}-${i + k}`));
        }
        for (let i = 0; i < perConnDb; i += sizes.batch) {
          const n = Math.min(sizes.batch, perConnDb - i);
          await s.insertDefault(Array.from({ length: n }, (_, k) => `w${w}-${i + k}`));
        }
      }),
    );
    const to = new Date(Date.now() + 1000);
    const reader = sessions[0];

    // Application IDs: every one read back equal to the one issued, in the order issued.
    const rows = await reader.window(from, to, 'events');
    assert.equal(rows.length, sizes.appRows, `${sample.name}/${engine}: rows read back`);
    assert.equal(issued.length, sizes.appRows);
    for (let i = 1; i < issued.length; i++) assert.ok(issued[i] > issued[i - 1], 'the generator issues increasing IDs');
    const readIds = rows.map((r) => r.id);
    assert.deepEqual(readIds, issued, `${sample.name}/${engine}: IDs read back equal the issued ones, in order`);
    let last = 0;
    for (const r of rows) {
      const ms = twitter.decode(r.id).unixMs;
      assert.ok(ms >= last && ms >= from.getTime() && ms < to.getTime(), `${r.id} in time order, inside the window`);
      last = ms;
    }
    // A narrower window holds exactly the rows of its time span.
    const midMs = twitter.decode(issued[issued.length >> 1]).unixMs;
    const early = await reader.window(from, new Date(midMs), 'events');
    assert.deepEqual(
      early.map((r) => r.id),
      issued.filter((id) => twitter.decode(id).unixMs < midMs),
      `${sample.name}/${engine}: the window [from, mid) holds exactly the IDs issued before mid`,
    );

    // Database IDs: unique, of the reserved node, increasing per connection.
    const dbRows = await reader.window(from, to, 'orders');
    assert.equal(dbRows.length, sizes.dbRows, `${sample.name}/${engine}: database-default rows read back`);
    assert.equal(new Set(dbRows.map((r) => r.id)).size, sizes.dbRows, 'database IDs unique');
    for (let w = 0; w < sizes.connections; w++) {
      const mine = dbRows
        .filter((r) => r.body.startsWith(`w${w}-`))
        .sort((a, b) => Number(a.body.split('-')[1]) - Number(b.body.split('-')[1]));
      assert.equal(mine.length, perConnDb);
      for (let i = 1; i < mine.length; i++)
        assert.ok(mine[i].id > mine[i - 1].id, `${sample.name}/${engine}: per connection increasing`);
    }
    for (const r of dbRows)
      assert.equal(twitter.decode(r.id).fields.worker, opts.sqlWorker, 'an ID of the reserved node');

    // JSON: each ID as its exact decimal string.
    const parsed = JSON.parse(await reader.json(from, to)) as { id: unknown; body: unknown }[];
    assert.equal(parsed.length, sizes.appRows);
    parsed.forEach((r, i) => assert.equal(r.id, issued[i].toString(), `${sample.name}/${engine}: JSON id as a string`));
    return { appRows: rows.length, dbRows: dbRows.length, ms: Date.now() - t0 };
  } finally {
    await Promise.all(sessions.map((s) => s.close()));
  }
}
