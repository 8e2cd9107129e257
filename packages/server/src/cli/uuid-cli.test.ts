// `flurry uuid` and `flurry decode` with UUIDs: two concurrent runs on one file registry never share a node at
// once nor a UUID, every form prints and reads back, and a UUID that is not v7 exits 2 with its coded message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { decodeUuid, encodeUuid } from '@flurry/core';
import { runFlurry, tempDir } from '../test-support.js';

test('GIVEN two concurrent `flurry uuid` runs on one file registry THEN different nodes (or one node, one run after the other), disjoint increasing UUIDs, and a third run prints UUIDs above both', async () => {
  const dir = tempDir('uuid');
  try {
    const env = { FLURRY_REGISTRY: `file:${dir}` };
    const [a, b] = await Promise.all([
      runFlurry(['uuid', '-n', '10000'], env),
      runFlurry(['uuid', '-n', '10000'], env),
    ]);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(b.code, 0, b.stderr);
    const ua = a.stdout.trim().split('\n');
    const ub = b.stdout.trim().split('\n');
    for (const list of [ua, ub]) {
      assert.equal(list.length, 10_000);
      for (let i = 1; i < list.length; i++) assert.ok(list[i] > list[i - 1], 'canonical text increases');
    }
    // Two runs hold one node only one after the other: the second one's lease starts above the
    // first one's high-water mark, so all its UUIDs sort above the first run's.
    if (decodeUuid(ua[0]).node === decodeUuid(ub[0]).node) {
      const [first, second] = ua[0] < ub[0] ? [ua, ub] : [ub, ua];
      assert.ok(second[0] > first.at(-1)!, `same node ${decodeUuid(ua[0]).node}, so the runs do not overlap`);
    }
    assert.equal(new Set([...ua, ...ub]).size, 20_000);
    const c = await runFlurry(['uuid', '--format', 'base32', '-n', '3'], env);
    assert.equal(c.code, 0, c.stderr);
    const maxAB = [ua.at(-1)!, ub.at(-1)!].sort().at(-1)!;
    for (const t of c.stdout.trim().split('\n')) assert.ok(decodeUuid(t).uuid > maxAB, `${t} is above ${maxAB}`);
    const bytes = await runFlurry(['uuid', '--format', 'bytes', '-n', '2', '--node-bits', '8'], env);
    assert.equal(bytes.code, 0, bytes.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('GIVEN `flurry decode` with UUIDs THEN canonical UUIDs are read beside Snowflake IDs, --uuid reads every form, and a non-v7 UUID exits 2 with FLURRY_E_UUID_VERSION', async () => {
  const v = '017F22E2-79B0-7CC3-98C4-DC0C0C07398F';
  const r = await runFlurry(['decode', v, '1859214170478923776', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const [u, id] = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(u, {
    uuid: v.toLowerCase(),
    version: 7,
    unixMs: 1645557742000,
    timestamp: '2022-02-22T19:22:22.000Z',
    node: 19904,
    sequence: 3345804,
  });
  assert.equal(id.id, '1859214170478923776');
  for (const form of ['hex', 'base32', 'base58', 'base62'] as const) {
    const t = await runFlurry(['decode', '--uuid', '--format', form, encodeUuid(v, form)]);
    assert.equal(t.code, 0, t.stderr);
    assert.match(
      t.stdout,
      /^017f22e2-79b0-7cc3-98c4-dc0c0c07398f \(UUIDv7, nodeBits 16, sequenceBits 22\)\n {2}timestamp {2}2022-02-22T19:22:22\.000Z/,
    );
  }
  const bad = await runFlurry(['decode', '017f22e2-79b0-4cc3-98c4-dc0c0c07398f']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^flurry: FLURRY_E_UUID_VERSION: .*version 4/);
  const badForm = await runFlurry(['uuid', '--format', 'decimal']);
  assert.equal(badForm.code, 2);
  assert.match(badForm.stderr, /FLURRY_E_USAGE: --format "decimal" is not a UUID form/);
});
