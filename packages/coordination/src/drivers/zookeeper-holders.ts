/**
 * `holders()` of the ZooKeeper driver: the children of `<namespace>/slots`, each with its
 * `hw/<slot>` node. Timing (against ZooKeeper's clock): docs/node-ids.md ("Listing holders").
 */
import type { HolderInfo, HolderRecord } from '../driver.js';
import type { ZkSession } from './zookeeper-client.js';
import { parseHighWater } from './zookeeper-common.js';

/** Where {@link readZkHolders} reads. */
export interface ZkHoldersQuery {
  /** The namespace's node (`<path>/<namespace>`). */
  readonly dir: string;
  readonly url: string;
  readonly opTimeoutMs: number;
  /** The reader's wall clock. */
  now(): number;
}

/** A znode's `mtime` (8 bytes, big-endian Unix ms) as a number. */
export function zkTimeMs(t: Buffer): number {
  return t.length >= 8 ? Number(t.readBigInt64BE(0)) : 0;
}

/** Lists the live holders of one namespace (see the module comment for the timing method). */
export async function readZkHolders(session: ZkSession, q: ZkHoldersQuery): Promise<HolderRecord[]> {
  const names = await session.getChildren(`${q.dir}/slots`, q.opTimeoutMs);
  const slots = names
    .filter((n) => /^(0|[1-9]\d*)$/.test(n))
    .map(Number)
    .sort((a, b) => a - b);
  const out = await Promise.all(
    slots.map(async (slot): Promise<HolderRecord | undefined> => {
      const [node, hw] = await Promise.all([
        session.getData(`${q.dir}/slots/${slot}`, q.opTimeoutMs),
        session.getData(`${q.dir}/hw/${slot}`, q.opTimeoutMs),
      ]);
      if (!node) return undefined; // its session ended between the two reads
      let v: Partial<HolderInfo> & { ttlMs?: unknown; sessionTimeoutMs?: unknown; claimedAt?: unknown } = {};
      try {
        v = JSON.parse(node.data.toString('utf8')) as typeof v;
      } catch {
        /* listed by slot only */
      }
      const { ttlMs, sessionTimeoutMs, claimedAt, ...rest } = v;
      const holder: Partial<HolderInfo> = {
        ...(typeof rest.id === 'string' ? { id: rest.id } : {}),
        ...(typeof rest.hostname === 'string' ? { hostname: rest.hostname } : {}),
        ...(typeof rest.pid === 'number' ? { pid: rest.pid } : {}),
        ...(typeof rest.address === 'string' ? { address: rest.address } : {}),
        ...(typeof rest.version === 'string' ? { version: rest.version } : {}),
      };
      const mark = hw ? parseHighWater(hw.data, `${q.dir}/hw/${slot}`, q.url) : undefined;
      let stamp: number | null = null;
      if (hw) {
        try {
          const u = (JSON.parse(hw.data.toString('utf8')) as { updatedAtMs?: unknown }).updatedAtMs;
          if (typeof u === 'number' && Number.isFinite(u)) stamp = u;
        } catch {
          /* parseHighWater already refused bad JSON */
        }
      }
      const since = hw ? Math.max(0, q.now() - zkTimeMs(hw.stat.mtime)) : null;
      const sessionMs = typeof sessionTimeoutMs === 'number' ? sessionTimeoutMs : null;
      return {
        slot,
        holder,
        heldSinceMs: typeof claimedAt === 'number' ? claimedAt : null,
        renewedAtMs: stamp,
        sinceRenewalMs: since,
        sinceRenewalErrorMs: null,
        expiresInMs: since !== null && sessionMs !== null ? Math.max(0, sessionMs - since) : null,
        ttlMs: typeof ttlMs === 'number' ? ttlMs : null,
        highWaterMs: mark?.highWaterMs ?? 0,
      };
    }),
  );
  return out.filter((h): h is HolderRecord => h !== undefined);
}
