/** The memory store, for tests and examples: `memory://NAME` stores of one name share a table within the process. */
import { sequenceError } from '../errors.js';
import { allocationFrom, MAX_ID, type KeyInfo, type SegmentStore } from '../store.js';

type Row = { maxId: bigint; step: number; description: string | null; updateTime: Date };

const tables = new Map<string, Map<string, Row>>();

/** A {@link SegmentStore} in memory (lost with the process); stores of one `name` share its table. */
export function createMemoryStore(name?: string, now: () => number = Date.now): SegmentStore {
  const rows = (name !== undefined && tables.get(name)) || new Map<string, Row>();
  if (name !== undefined) tables.set(name, rows);
  let closed = false;
  // A call on a closed store throws at once; anything else settles the promise.
  const op = <T>(f: () => T): Promise<T> => {
    if (closed) throw sequenceError('CLOSED', 'the memory store was closed');
    return new Promise((resolve) => resolve(f()));
  };
  const info = (key: string, r: Row): KeyInfo => ({ key, ...r });
  return {
    kind: 'memory',
    description: `memory://${name ?? ''}`,
    allocate: (key, step) =>
      op(() => {
        const r = rows.get(key);
        if (!r) {
          const message = `the sequence key "${key}" does not exist in the memory store; create it first`;
          throw sequenceError('KEY_UNKNOWN', message, { key });
        }
        const s = step ?? r.step;
        const maxId = r.maxId.toString();
        if (r.maxId + BigInt(s) > MAX_ID)
          throw sequenceError('STORE_CORRUPT', `the key "${key}" would pass 2^63 - 1`, { key, maxId });
        r.maxId += BigInt(s);
        r.updateTime = new Date(now());
        return allocationFrom(key, r.maxId, s, 'memory');
      }),
    create: (key, o) =>
      op(() => {
        if (rows.has(key)) throw sequenceError('KEY_EXISTS', `the sequence key "${key}" already exists`, { key });
        const r: Row = { maxId: o.start, step: o.step, description: o.description, updateTime: new Date(now()) };
        rows.set(key, r);
        return info(key, r);
      }),
    show: (key) => op(() => (rows.has(key) ? info(key, rows.get(key)!) : undefined)),
    list: () => op(() => [...rows.keys()].sort().map((k) => info(k, rows.get(k)!))),
    handBack: (key, segmentEnd, firstUnused) =>
      op(() => {
        const r = rows.get(key);
        if (!r || r.maxId !== segmentEnd || firstUnused > segmentEnd) return false;
        r.maxId = firstUnused;
        return true;
      }),
    close() {
      closed = true;
      return Promise.resolve();
    },
  };
}
