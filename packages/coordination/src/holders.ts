/** A cluster's holders on the reader's clock (docs/node-ids.md, "Listing holders"). */
import type { HolderRecord } from './driver.js';
import type { LayoutLike, SlotMap } from './slot-map.js';

/** One live holder of a node ID, on the reader's clock (Unix ms); its fields: docs/node-ids.md ("Listing holders"). */
export type ClusterHolder = Readonly<ReturnType<typeof toClusterHolders>[number]>;

/**
 * What to list: a namespace, or a layout (and pins) whose namespace is listed with node fields; without either,
 * the namespaces of this registry's leases, or the cluster when it holds none.
 */
export interface HoldersQuery {
  readonly namespace?: string;
  readonly layout?: LayoutLike;
  readonly pin?: Record<string, number>;
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

export function toClusterHolders(
  records: readonly HolderRecord[],
  namespace: string,
  readAtMs: number,
  map: SlotMap | undefined,
) {
  return records.map((r) => {
    const engineRenewedAt = r.sinceRenewalMs === null ? null : readAtMs - r.sinceRenewalMs;
    const renewedAtMs = engineRenewedAt ?? r.renewedAtMs;
    const offset = engineRenewedAt !== null && r.renewedAtMs !== null ? r.renewedAtMs - engineRenewedAt : null;
    const h = r.holder;
    return {
      slot: r.slot,
      namespace,
      node: map && r.slot < map.slots ? map.toNode(r.slot) : null,
      id: str(h.id),
      hostname: str(h.hostname),
      pid: typeof h.pid === 'number' ? h.pid : null,
      address: str(h.address),
      version: str(h.version),
      role: str((h as Record<string, unknown>).role),
      heldSinceMs: r.heldSinceMs === null ? null : r.heldSinceMs - (offset ?? 0),
      renewedAtMs,
      renewalStamp: r.renewedAtMs,
      expiresAtMs: r.expiresInMs === null ? null : readAtMs + r.expiresInMs,
      ttlMs: r.ttlMs,
      highWaterMs: r.highWaterMs,
      clockOffsetMs: offset,
      clockOffsetErrorMs: offset === null ? null : r.sinceRenewalErrorMs,
      ageMs: renewedAtMs === null ? null : Math.max(0, readAtMs - renewedAtMs),
      readAtMs,
    };
  });
}
