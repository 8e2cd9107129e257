/**
 * The backend driver contract: a driver knows one engine and only claims, renews and releases
 * integer slots in a namespace; everything generic lives in the registry and lease modules.
 */

/** Who holds a slot: reported in exhaustion errors and stored beside the claim. */
export interface HolderInfo {
  /** Unique per acquire: e.g. `${hostname}:${pid}:${random}`. */
  readonly id: string;
  readonly hostname: string;
  readonly pid: number;
  /** Optional service address (`ip:port`), used by the Leaf-compatible scheme. */
  readonly address?: string;
  /** The Flurry version of the holder (filled by `makeHolder`; absent in records of older holders). */
  readonly version?: string;
}

/**
 * One live holder of a slot as a driver reads it: stamps on the holder's wall clock, durations
 * measured by the engine (docs/node-ids.md, "Listing holders").
 */
export interface HolderRecord {
  readonly slot: number;
  /** What the holder stored about itself; fields it did not store are absent. */
  readonly holder: Partial<HolderInfo>;
  /** The holder's wall clock when it claimed the slot (null when the engine does not keep it). */
  readonly heldSinceMs: number | null;
  /** The holder's wall clock at its last renewal (or its claim), as it wrote it; null when unknown. */
  readonly renewedAtMs: number | null;
  /** Ms since that renewal reached the engine, measured by the engine; null when it cannot tell. */
  readonly sinceRenewalMs: number | null;
  /** Bound on the error of `sinceRenewalMs` (e.g. 500 for etcd's whole-second lease TTLs); null with it. */
  readonly sinceRenewalErrorMs: number | null;
  /** Ms until the engine frees the slot unless it is renewed; null when it never expires (static IDs). */
  readonly expiresInMs: number | null;
  /** The holder's lease TTL when known. */
  readonly ttlMs: number | null;
  /** The highest Unix ms the slot's holders have reported (0 if none). */
  readonly highWaterMs: number;
}

/** A request to claim one free slot. */
export interface ClaimRequest {
  /** Cluster and (optionally) datacenter: `cluster` or `cluster/dc-N`. Safe characters only. */
  readonly namespace: string;
  /** Number of slots; a claim is an integer in `[0, slots)`. */
  readonly slots: number;
  /** Lease time-to-live in ms. */
  readonly ttlMs: number;
  readonly holder: HolderInfo;
  /** Slot to try first (e.g. the one this host held last), if free. */
  readonly preferredSlot?: number;
}

/** A successful claim. */
export interface Claim {
  readonly slot: number;
  /** Opaque token proving ownership (a random string, a ZooKeeper path, an etcd lease ID…). */
  readonly token: string;
  /** Highest Unix ms the slot's previous holders reported (0 if none). */
  readonly highWaterMs: number;
  /** True after a graceful release with the final mark; false when the previous holder may have issued one TTL past it. */
  readonly releasedCleanly: boolean;
}

/** A driver for one engine. Methods reject with coded `FlurryError`s (see errors.ts). */
export interface RegistryDriver {
  /** The engine's URL with any password removed. */
  readonly url: string;
  /** Human name: 'file', 'zookeeper', 'zookeeper+leaf', 'etcd', 'redis', 'static', 'k8s'. */
  readonly kind: string;
  /** Claims one free slot, or rejects with FLURRY_E_REGISTRY_EXHAUSTED listing holders. */
  claim(req: ClaimRequest): Promise<Claim>;
  /** Extends the claim by `ttlMs` and stores `highWaterMs`; `FLURRY_E_LEASE_LOST` if no longer ours. */
  renew(claim: Claim, opts: { ttlMs: number; highWaterMs: number }): Promise<void>;
  /** Stores the final `highWaterMs` and frees the slot (only if still ours). */
  release(claim: Claim, opts: { highWaterMs: number }): Promise<void>;
  /** Lists the live holders of a namespace, by slot (a read only). */
  holders(namespace: string): Promise<HolderRecord[]>;
  /** Closes connections. Idempotent. */
  close(): Promise<void>;
}
