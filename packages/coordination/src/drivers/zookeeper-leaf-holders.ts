/**
 * `holders()` of the Leaf-scheme driver: Flurry holders while their `flurry-live` node exists,
 * Leaf (Java) servers while their node was written by someone else within
 * {@link LEAF_JAVA_LIVE_MS}. Timing: docs/node-ids.md ("Listing holders").
 */
import type { HolderInfo, HolderRecord } from '../driver.js';
import type { ZkSession } from './zookeeper-client.js';
import { zkTimeMs } from './zookeeper-holders.js';
import { parseEndpoint, parseLeafNodeName, parseMeta } from './zookeeper-leaf-names.js';

/**
 * How recently a Leaf (Java) server must have written its node to be listed: two of its 3 s
 * reports (Leaf's own ZooKeeper session is 6 s).
 */
export const LEAF_JAVA_LIVE_MS = 6000;

/** Where {@link readLeafHolders} reads. */
export interface LeafHoldersQuery {
  /** `<prefix>/snowflake/<name>`. */
  readonly root: string;
  readonly url: string;
  readonly opTimeoutMs: number;
  /** The reader's wall clock. */
  now(): number;
}

function holderOf(data: Buffer | undefined): Partial<HolderInfo> & { claimedAt?: number; sessionTimeoutMs?: number } {
  if (!data) return {};
  try {
    const v = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
    return {
      ...(typeof v.id === 'string' ? { id: v.id } : {}),
      ...(typeof v.hostname === 'string' ? { hostname: v.hostname } : {}),
      ...(typeof v.pid === 'number' ? { pid: v.pid } : {}),
      ...(typeof v.address === 'string' ? { address: v.address } : {}),
      ...(typeof v.version === 'string' ? { version: v.version } : {}),
      ...(typeof v.claimedAt === 'number' ? { claimedAt: v.claimedAt } : {}),
      ...(typeof v.sessionTimeoutMs === 'number' ? { sessionTimeoutMs: v.sessionTimeoutMs } : {}),
    };
  } catch {
    return {};
  }
}

/** Lists the live holders of one Leaf `name` (see the module comment). */
export async function readLeafHolders(session: ZkSession, q: LeafHoldersQuery): Promise<HolderRecord[]> {
  const [forever, live] = await Promise.all([
    session.getChildren(`${q.root}/forever`, q.opTimeoutMs),
    session.getChildren(`${q.root}/flurry-live`, q.opTimeoutMs),
  ]);
  const liveSet = new Set(live);
  const nodes = forever
    .map(parseLeafNodeName)
    .filter((n): n is NonNullable<typeof n> => n !== null)
    .sort((a, b) => a.workerId - b.workerId);
  const out = await Promise.all(
    nodes.map(async (n): Promise<HolderRecord | undefined> => {
      const flurry = liveSet.has(n.address);
      const nodePath = `${q.root}/forever/${n.name}`;
      const [node, liveNode, meta] = await Promise.all([
        session.getData(nodePath, q.opTimeoutMs),
        flurry ? session.getData(`${q.root}/flurry-live/${n.address}`, q.opTimeoutMs) : Promise.resolve(null),
        session.getData(`${q.root}/flurry-meta/${n.address}`, q.opTimeoutMs),
      ]);
      if (!node) return undefined;
      const since = Math.max(0, q.now() - zkTimeMs(node.stat.mtime));
      if (!flurry && since >= LEAF_JAVA_LIVE_MS) return undefined; // an address not served now
      // Without a Flurry holder, the node's last writer was Flurry (released, or its session
      // ended) when the meta record matches the node's version: not a Leaf server.
      if (!flurry && meta && parseMeta(meta.data)?.foreverVersion === node.stat.version) return undefined;
      if (flurry && !liveNode) return undefined; // its session ended meanwhile
      const stamp = ((): number | null => {
        if (!meta) return null;
        try {
          const u = (JSON.parse(meta.data.toString('utf8')) as { updatedAtMs?: unknown }).updatedAtMs;
          return typeof u === 'number' && Number.isFinite(u) ? u : null;
        } catch {
          return null;
        }
      })();
      const { claimedAt, sessionTimeoutMs, ...holder } = holderOf(liveNode?.data);
      const mark = Math.max(
        parseEndpoint(node.data, nodePath, q.url),
        (meta && parseMeta(meta.data)?.highWaterMs) || 0,
      );
      return {
        slot: n.workerId,
        holder: flurry ? { address: n.address, ...holder } : { address: n.address, version: 'leaf' },
        heldSinceMs: claimedAt ?? null,
        renewedAtMs: stamp,
        sinceRenewalMs: since,
        sinceRenewalErrorMs: null,
        expiresInMs: flurry && sessionTimeoutMs !== undefined ? Math.max(0, sessionTimeoutMs - since) : null,
        ttlMs: null,
        highWaterMs: mark,
      };
    }),
  );
  return out.filter((h): h is HolderRecord => h !== undefined);
}
