/**
 * `holders()` of the ZooKeeper driver: the children of `<namespace>/slots`, each with its
 * `hw/<slot>` node. Timing (against ZooKeeper's clock): docs/node-ids.md ("Listing holders").
 */
import type { HolderRecord } from '../driver.js';
import { jsonObject, pickHolder, slotNumbers } from './common.js';
import type { ZkSession } from './zookeeper-client.js';
import { parseHighWater, type ZkHoldersQuery } from './zookeeper-common.js';

/** A znode's `mtime` (8 bytes, big-endian Unix ms) as a number. */
export function zkTimeMs(t: Buffer): number {
  return t.length >= 8 ? Number(t.readBigInt64BE(0)) : 0;
}

/** The `updatedAtMs` stamp of a stored record, or null. */
export function updatedStamp(data: Buffer | undefined): number | null {
  const u = jsonObject(data?.toString('utf8')).updatedAtMs;
  return typeof u === 'number' && Number.isFinite(u) ? u : null;
}

/** A number field of stored JSON, or null. */
export const numberOr = (v: unknown): number | null => (typeof v === 'number' ? v : null);

/** Lists the live holders of one namespace (see the module comment for the timing method). */
export async function readZkHolders(session: ZkSession, q: ZkHoldersQuery): Promise<HolderRecord[]> {
  const names = await session.getChildren(`${q.dir}/slots`, q.opTimeoutMs);
  const slots = slotNumbers(names);
  const out = await Promise.all(
    slots.map(async (slot): Promise<HolderRecord | undefined> => {
      const [node, hw] = await Promise.all([
        session.getData(`${q.dir}/slots/${slot}`, q.opTimeoutMs),
        session.getData(`${q.dir}/hw/${slot}`, q.opTimeoutMs),
      ]);
      if (!node) return undefined; // its session ended between the two reads
      const v = jsonObject(node.data.toString('utf8'));
      const mark = hw ? parseHighWater(hw.data, `${q.dir}/hw/${slot}`, q.url) : undefined;
      const since = hw ? Math.max(0, q.now() - zkTimeMs(hw.stat.mtime)) : null;
      const sessionMs = numberOr(v.sessionTimeoutMs);
      return {
        slot,
        holder: pickHolder(v),
        heldSinceMs: numberOr(v.claimedAt),
        renewedAtMs: updatedStamp(hw?.data),
        sinceRenewalMs: since,
        sinceRenewalErrorMs: null,
        expiresInMs: since !== null && sessionMs !== null ? Math.max(0, sessionMs - since) : null,
        ttlMs: numberOr(v.ttlMs),
        highWaterMs: mark?.highWaterMs ?? 0,
      };
    }),
  );
  return out.filter((h): h is HolderRecord => h !== undefined);
}
