import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Layout } from '@flurry/core';
import { leafDate, leafDecodeBody, leafWorkerId } from './http/routes/leaf.js';

/** Leaf's decodeSnowflakeId answer. */
type LeafBody = { timestamp: string; sequenceId: string; workerId: string };

test('GIVEN a twitter ID THEN the Leaf body matches what Leaf computes with its own shifts', () => {
  const layout = Layout.from('twitter');
  const id = layout.compose({
    unixMs: Date.UTC(2024, 10, 22, 8, 0, 0, 123),
    sequence: 77,
    node: { datacenter: 3, worker: 9 },
  });
  // Leaf: timestamp = (id >> 22) + twepoch; workerId = (id >> 12) ^ (id >> 22 << 10); sequence = id ^ (id >> 12 << 12)
  const leafTs = (id >> 22n) + 1288834974657n;
  const leafWorker = (id >> 12n) ^ ((id >> 22n) << 10n);
  const leafSeq = id ^ ((id >> 12n) << 12n);
  const body = JSON.parse(leafDecodeBody(layout.decode(id), layout)) as LeafBody;
  assert.equal(body.workerId, leafWorker.toString());
  assert.equal(body.sequenceId, leafSeq.toString());
  assert.ok(body.timestamp.startsWith(`${leafTs}(`));
  assert.match(body.timestamp, /^\d+\(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\)$/);
});

test('GIVEN a custom epoch and node fields THEN the Leaf body honours them', () => {
  const layout = Layout.parse('timestamp:41,zone:3,machine:7,sequence:12', { epoch: '2020-01-01T00:00:00Z' });
  const unixMs = Date.UTC(2025, 0, 2, 3, 4, 5, 6);
  const id = layout.compose({ unixMs, sequence: 5, node: { zone: 2, machine: 100 } });
  const body = JSON.parse(leafDecodeBody(layout.decode(id), layout)) as LeafBody;
  assert.equal(body.workerId, String((2 << 7) | 100));
  assert.equal(body.sequenceId, '5');
  assert.ok(body.timestamp.startsWith(`${unixMs}(`));
});

test('GIVEN a local time THEN leafDate formats yyyy-MM-dd HH:mm:ss.SSS', () => {
  const d = new Date(2024, 0, 2, 3, 4, 5, 6); // local time: the zone Leaf (Java) also uses
  assert.equal(leafDate(d.getTime()), '2024-01-02 03:04:05.006');
  assert.equal(leafWorkerId({}, Layout.parse('timestamp:52,sequence:12', {})), '0');
});
