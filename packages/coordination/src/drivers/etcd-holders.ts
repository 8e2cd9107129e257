/**
 * `holders()` of the etcd driver: one range read of the slot keys, one of the high-water
 * records, then one `LeaseTimeToLive` per held slot (timing, ±500 ms: docs/node-ids.md,
 * "Listing holders").
 */
import { EtcdLeaseInvalidError, type Etcd3 } from 'etcd3';
import type { HolderInfo, HolderRecord } from '../driver.js';
import { jsonObject, parseHighWaterRecord, type RecordPlace } from './common.js';

/** Where {@link readEtcdHolders} reads; `deadline`: the Date.now() deadline of each call; `records`: for a corrupt record's message. */
type EtcdHoldersQuery = { prefix: string; namespace: string; deadline: number; records: RecordPlace };

/** Half of etcd's one-second TTL resolution: the error of the time since a renewal. */
const ETCD_TTL_ERROR_MS = 500;

const enc = (s: string): Buffer => Buffer.from(s, 'utf8');

interface SlotValue {
  holder?: Partial<HolderInfo>;
  leaseId?: string;
  ttlMs?: number;
  claimedAtMs?: number;
}

/** Reads every key under `<base>` whose remainder is a slot number (`keysOnly`: without their values). */
export async function rangeBySlot(
  client: Etcd3,
  base: string,
  deadline: number,
  keysOnly = false,
): Promise<Map<number, Buffer>> {
  const range = { key: enc(base), range_end: enc(base.slice(0, -1) + '0'), keys_only: keysOnly };
  const res = await client.kv.range(range, { deadline });
  const out = new Map<number, Buffer>();
  for (const kv of res.kvs) {
    const rest = kv.key.toString('utf8').slice(base.length);
    if (/^(0|[1-9]\d*)$/.test(rest)) out.set(Number(rest), kv.value);
  }
  return out;
}

/** Lists the live holders of one namespace (see the module comment for the timing method). */
export async function readEtcdHolders(client: Etcd3, q: EtcdHoldersQuery): Promise<HolderRecord[]> {
  const [slots, marks] = await Promise.all([
    rangeBySlot(client, `${q.prefix}/${q.namespace}/slots/`, q.deadline),
    rangeBySlot(client, `${q.prefix}/${q.namespace}/hw/`, q.deadline),
  ]);
  const entries = [...slots.entries()].sort((a, b) => a[0] - b[0]);
  const out = await Promise.all(
    entries.map(async ([slot, raw]): Promise<HolderRecord | undefined> => {
      const v = jsonObject<SlotValue>(raw.toString('utf8'));
      if (typeof v.leaseId !== 'string') return undefined;
      let ttl: { TTL: string; grantedTTL: string };
      try {
        ttl = await client.leaseClient.leaseTimeToLive({ ID: v.leaseId }, { deadline: q.deadline });
      } catch (err) {
        if (err instanceof EtcdLeaseInvalidError) return undefined; // expired meanwhile
        throw err;
      }
      // TTL is truncated to whole seconds: 0 means "expires within a second", -1 means gone.
      const remaining = Number(ttl.TTL);
      const granted = Number(ttl.grantedTTL);
      if (!(remaining >= 0) || !(granted > 0)) return undefined;
      const key = `${q.prefix}/${q.namespace}/hw/${slot}`;
      const rec = parseHighWaterRecord(marks.get(slot)?.toString('utf8'), key, q.records);
      const holder = v.holder ?? {};
      const ours = rec !== undefined && rec.holder === holder.id;
      return {
        slot,
        holder,
        heldSinceMs: typeof v.claimedAtMs === 'number' ? v.claimedAtMs : null,
        renewedAtMs: ours ? rec.updatedAtMs : null,
        sinceRenewalMs: Math.max(0, (granted - remaining) * 1000 - ETCD_TTL_ERROR_MS),
        sinceRenewalErrorMs: ETCD_TTL_ERROR_MS,
        expiresInMs: remaining * 1000 + ETCD_TTL_ERROR_MS,
        ttlMs: typeof v.ttlMs === 'number' ? v.ttlMs : granted * 1000,
        highWaterMs: rec?.highWaterMs ?? 0,
      };
    }),
  );
  return out.filter((h): h is HolderRecord => h !== undefined);
}
