/**
 * The backend driver contract. A driver knows one engine (file, ZooKeeper, etcd, Redis…)
 * and only claims, renews and releases *slots* (integers `0..slots-1`) in a namespace.
 * Everything generic (mapping slots to a layout's node fields, the renewal loop, the
 * fencing deadline on the monotonic clock, the high-water arithmetic, events, metrics)
 * lives in `registry.ts`, `lease.ts`, `claim.ts` and `floor.ts` and is shared by every backend.
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
 * One live holder of a slot as a driver reads it from its engine ({@link RegistryDriver.holders}).
 *
 * Times written by the holder are on *its* wall clock; the two durations are measured by the
 * engine (key TTLs, lease TTLs, `now()` of the database, file modification times), so the
 * reader can place the last renewal on its own clock and estimate the holder's clock offset:
 * `offset = renewedAtMs − (readerNow − sinceRenewalMs)` with an error of at most
 * `sinceRenewalErrorMs` plus the one-way latency of the holder's renewal (docs/node-ids.md,
 * "Listing holders").
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
  /**
   * Highest Unix ms the slot's previous holders reported (0 if none).
   */
  readonly highWaterMs: number;
  /**
   * True when the previous holder released the slot gracefully after reporting its final
   * mark (nothing can have been issued above it); false when the previous lease expired,
   * so the previous holder may have issued up to one TTL past its last report.
   */
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
  /**
   * Extends the claim by `ttlMs` from now and stores `highWaterMs`. Rejects with
   * FLURRY_E_LEASE_LOST if the slot is no longer ours (expired, taken, session gone),
   * or with FLURRY_E_REGISTRY_UNREACHABLE if the engine cannot be reached.
   */
  renew(claim: Claim, opts: { ttlMs: number; highWaterMs: number }): Promise<void>;
  /** Stores the final `highWaterMs` and frees the slot (only if still ours). */
  release(claim: Claim, opts: { highWaterMs: number }): Promise<void>;
  /**
   * Lists the live holders of a namespace (`cluster` or `cluster/dc-N`), by slot; expired
   * claims are not listed. A read only: it never changes a claim. Rejects with
   * FLURRY_E_REGISTRY_UNREACHABLE when the engine cannot be read.
   */
  holders(namespace: string): Promise<HolderRecord[]>;
  /** Closes connections. Idempotent. */
  close(): Promise<void>;
}
