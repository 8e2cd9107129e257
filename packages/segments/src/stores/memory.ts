/**
 * The memory store: keys in a process-local table, for tests and documentation examples. `memory://NAME` URLs
 * with the same name share one table within the process (so several `Sequences` can race on it); the numbers
 * are lost with the process, so it is never for production.
 */
import { sequenceError } from '../errors.js';
import { allocationFrom, MAX_ID, type Allocation, type KeyInfo, type SegmentStore } from '../store.js';

interface Row {
  maxId: bigint;
  step: number;
  description: string | null;
  updateTime: Date;
}

const tables = new Map<string, Map<string, Row>>();

/**
 * A {@link SegmentStore} in memory. Pass a name to share the table with other stores of that name.
 *
 * @example
 * ```ts
 * const store = createMemoryStore('t1');
 * await store.create('order', { start: 1n, step: 10, description: null });
 * await store.allocate('order'); // { start: 1n, end: 11n, step: 10 }
 * ```
 */
export function createMemoryStore(name?: string, now: () => number = Date.now): SegmentStore {
  let rows: Map<string, Row>;
  if (name === undefined) rows = new Map();
  else {
    rows = tables.get(name) ?? new Map<string, Row>();
    tables.set(name, rows);
  }
  let closed = false;
  const open = (): void => {
    if (closed) throw sequenceError('CLOSED', 'the memory store was closed');
  };
  const info = (key: string, r: Row): KeyInfo => ({
    key,
    maxId: r.maxId,
    step: r.step,
    description: r.description,
    updateTime: r.updateTime,
  });
  return {
    kind: 'memory',
    description: `memory://${name ?? ''}`,
    allocate(key: string, step?: number): Promise<Allocation> {
      open();
      const r = rows.get(key);
      if (!r) {
        return Promise.reject(
          sequenceError(
            'KEY_UNKNOWN',
            `the sequence key "${key}" does not exist in the memory store; create it first`,
            {
              key,
            },
          ),
        );
      }
      const s = step ?? r.step;
      if (r.maxId + BigInt(s) > MAX_ID) {
        return Promise.reject(
          sequenceError('STORE_CORRUPT', `the key "${key}" would pass 2^63 - 1`, { key, maxId: r.maxId.toString() }),
        );
      }
      r.maxId += BigInt(s);
      r.updateTime = new Date(now());
      return Promise.resolve(allocationFrom(key, r.maxId, s, 'memory'));
    },
    create(key, o) {
      open();
      if (rows.has(key)) {
        return Promise.reject(sequenceError('KEY_EXISTS', `the sequence key "${key}" already exists`, { key }));
      }
      const r: Row = { maxId: o.start, step: o.step, description: o.description, updateTime: new Date(now()) };
      rows.set(key, r);
      return Promise.resolve(info(key, r));
    },
    show(key) {
      open();
      const r = rows.get(key);
      return Promise.resolve(r ? info(key, r) : undefined);
    },
    list() {
      open();
      return Promise.resolve(
        [...rows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, r]) => info(k, r)),
      );
    },
    handBack(key, segmentEnd, firstUnused) {
      open();
      const r = rows.get(key);
      if (!r || r.maxId !== segmentEnd || firstUnused > segmentEnd) return Promise.resolve(false);
      r.maxId = firstUnused;
      return Promise.resolve(true);
    },
    close() {
      closed = true;
      return Promise.resolve();
    },
  };
}
