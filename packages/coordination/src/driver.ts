/** The driver contract: a driver only claims, renews and releases integer slots of a namespace in one engine. */

/** Who holds a slot: reported in exhaustion errors and stored beside the claim. */
export interface HolderInfo {
  /** Unique per acquire: `${hostname}:${pid}:${random}`. */
  readonly id: string;
  readonly hostname: string;
  readonly pid: number;
  /** Service address (`ip:port`), for the Leaf-compatible scheme. */
  readonly address?: string;
  /** The holder's Flurry version (absent in records of older holders). */
  readonly version?: string;
}

/**
 * One live holder of a slot as a driver reads it: stamps on the holder's wall clock, durations measured by the
 * engine, null when unknown (docs/node-ids.md, "Listing holders").
 */
export interface HolderRecord {
  readonly slot: number;
  readonly holder: Partial<HolderInfo>;
  readonly heldSinceMs: number | null;
  /** The holder's wall clock at its last renewal (or its claim), as it wrote it. */
  readonly renewedAtMs: number | null;
  /** Ms since that renewal reached the engine, measured by the engine. */
  readonly sinceRenewalMs: number | null;
  /** Bound on the error of `sinceRenewalMs` (e.g. 500 for etcd's whole-second lease TTLs). */
  readonly sinceRenewalErrorMs: number | null;
  /** Ms until the engine frees the slot unless it is renewed; null when it never expires (static IDs). */
  readonly expiresInMs: number | null;
  readonly ttlMs: number | null;
  /** The highest Unix ms the slot's holders have reported (0 if none). */
  readonly highWaterMs: number;
}

/** A request to claim one free slot in `[0, slots)` of `namespace` (`cluster` or `cluster/dc-N`). */
export interface ClaimRequest {
  readonly namespace: string;
  readonly slots: number;
  readonly ttlMs: number;
  readonly holder: HolderInfo;
  /** Slot to try first (the one this host held last), if free. */
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
  /** The engine's URL without its password. */
  readonly url: string;
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
