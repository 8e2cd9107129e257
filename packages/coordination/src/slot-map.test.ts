import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FlurryError, Layout } from '@flurry/core';
import { SlotMap } from './slot-map.js';

test('GIVEN a layout with a datacenter field THEN it is pinned (default 0) into the namespace AND the rest is leased', () => {
  const m = SlotMap.create(Layout.from('twitter'), 'orders');
  assert.equal(m.namespace, 'orders/datacenter-0');
  assert.equal(m.slots, 32);
  assert.deepEqual(m.toNode(31), { datacenter: 0, worker: 31 });
});

test('GIVEN several leased fields THEN slots map to them in mixed radix, the last field fastest, and back', () => {
  const layout = Layout.parse('timestamp:40,rack:2,worker:3,sequence:12');
  const m = SlotMap.create(layout, 'c');
  assert.equal(m.slots, 32);
  assert.deepEqual(m.toNode(0), { rack: 0, worker: 0 });
  assert.deepEqual(m.toNode(9), { rack: 1, worker: 1 });
  // Every slot maps back to itself in mixed radix (rack × 2^3 + worker).
  for (let s = 0; s < m.slots; s++) assert.equal(m.toNode(s).rack * 8 + m.toNode(s).worker, s);
  const pinned = SlotMap.create(layout, 'c', { worker: 5 });
  assert.equal(pinned.namespace, 'c/worker-5');
  assert.equal(pinned.slots, 4);
  assert.deepEqual(pinned.toNode(3), { worker: 5, rack: 3 });
});

test('GIVEN a bad pin or a slot out of range THEN coded errors', () => {
  assert.throws(
    () => SlotMap.create(Layout.from('twitter'), 'c', { rack: 1 }),
    (e: FlurryError) => e.code === 'FLURRY_E_REGISTRY_OPTION' && /datacenter, worker/.test(e.message),
  );
  assert.throws(
    () => SlotMap.create(Layout.from('twitter'), 'c', { datacenter: 1.5 }),
    (e: FlurryError) => e.code === 'FLURRY_E_REGISTRY_OPTION',
  );
  assert.throws(
    () => SlotMap.create(Layout.from('twitter'), 'c').toNode(32),
    (e: FlurryError) => e.code === 'FLURRY_E_REGISTRY_CORRUPT',
  );
});
