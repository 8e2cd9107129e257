/**
 * What the `zookeeper://` and `zookeeper+leaf://` drivers share beyond the client: claim
 * request checks, the stored high-water record, the session pool of a driver and the time
 * limit of a renewal's operations.
 */
import type { ClaimRequest, HolderRecord } from '../driver.js';
import { registryError } from '../errors.js';
import { zkFailure, type ZkSession, type ZkSessionPool } from './zookeeper-client.js';
import { jsonObject, type EngineDriverOptions } from './common.js';

/** The session timeout of the start-up session (reused by claims with the registry's default TTL). */
export const DEFAULT_ZK_SESSION_TIMEOUT_MS = 10_000;

/** Where the ZooKeeper holder readers read: `dir` (or a Leaf `root`), with the reader's wall clock. */
export type ZkHoldersQuery = { dir: string; url: string; opTimeoutMs: number; now(): number };

const NAMESPACE = /^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/;

/** Stored high-water mark of a slot (the JSON of `<path>/<namespace>/hw/<slot>`). */
export interface HighWaterRecord {
  readonly highWaterMs: number;
  readonly releasedCleanly: boolean;
}

/**
 * Checks a claim request's namespace, slot count, TTL and preferred slot; throws
 * `FLURRY_E_REGISTRY_OPTION`.
 */
export function validateClaimRequest(req: ClaimRequest, url: string): void {
  if (
    typeof req.namespace !== 'string' ||
    !NAMESPACE.test(req.namespace) ||
    req.namespace.split('/').some((s) => s === '.' || s === '..')
  ) {
    throw registryError(
      'OPTION',
      `namespace "${String(req.namespace)}" is not usable as a ZooKeeper path: use cluster[/dc-N] with letters, digits, "_", "." and "-"`,
      { url, namespace: req.namespace },
    );
  }
  if (!Number.isSafeInteger(req.slots) || req.slots < 1 || req.slots > 2 ** 31) {
    throw registryError('OPTION', `slots must be an integer from 1 to 2^31, got ${String(req.slots)}`, {
      url,
      slots: req.slots,
    });
  }
  if (!Number.isSafeInteger(req.ttlMs) || req.ttlMs < 1 || req.ttlMs > 2 ** 31 - 1) {
    throw registryError(
      'OPTION',
      `ttlMs must be a positive integer of milliseconds (ZooKeeper session timeouts are 32-bit), got ${String(req.ttlMs)}`,
      { url, ttlMs: req.ttlMs },
    );
  }
  if (
    req.preferredSlot !== undefined &&
    (!Number.isSafeInteger(req.preferredSlot) || req.preferredSlot < 0 || req.preferredSlot >= req.slots)
  ) {
    throw registryError(
      'OPTION',
      `preferredSlot must be an integer in [0, ${req.slots}), got ${String(req.preferredSlot)}`,
      { url, preferredSlot: req.preferredSlot },
    );
  }
  if (!req.holder || typeof req.holder.id !== 'string') {
    throw registryError('OPTION', 'holder.id must be a string', { url });
  }
}

/**
 * Parses a stored high-water record (`{"highWaterMs":…,"releasedCleanly":…}`); throws
 * `FLURRY_E_REGISTRY_CORRUPT` naming the node and how to repair it.
 */
export function parseHighWater(data: Buffer, path: string, url: string): HighWaterRecord {
  const r = jsonObject(data.toString('utf8'));
  if (
    typeof r.highWaterMs !== 'number' ||
    !Number.isFinite(r.highWaterMs) ||
    r.highWaterMs < 0 ||
    typeof r.releasedCleanly !== 'boolean'
  ) {
    throw registryError(
      'CORRUPT',
      `the high-water node ${path} at ${url} holds ${JSON.stringify(data.toString('utf8').slice(0, 200))}, not {"highWaterMs":<Unix ms>,"releasedCleanly":<bool>}; set it to a mark at or above the last ID issued under this slot, with releasedCleanly false`,
      { url, path },
    );
  }
  return { highWaterMs: r.highWaterMs, releasedCleanly: r.releasedCleanly };
}

/**
 * The time limit of each ZooKeeper operation of a renewal with `ttlMs`: a third of the TTL,
 * within 500 ms .. `connectTimeoutMs`. Throws `FLURRY_E_REGISTRY_OPTION` when the session's
 * timeout is shorter than the TTL (the slot could be freed before the holder's deadline).
 */
export function renewOpTimeout(
  session: ZkSession,
  ttlMs: number,
  connectTimeoutMs: number,
  doing: string,
  url: string,
): number {
  if (session.timeoutMs < ttlMs) {
    throw registryError(
      'OPTION',
      `${doing}: the ZooKeeper session timeout is ${session.timeoutMs} ms, shorter than the requested TTL of ${ttlMs} ms; set ttlMs ≤ ${session.timeoutMs}`,
      { url, ttlMs, sessionTimeoutMs: session.timeoutMs },
    );
  }
  return Math.max(500, Math.min(connectTimeoutMs, Math.floor(ttlMs / 3)));
}

/** What the `zookeeper://` and `zookeeper+leaf://` drivers share: claims, sessions, closing. */
export abstract class ZkDriverBase<S extends { readonly session?: ZkSession | null }> {
  readonly claims = new Map<string, S>();
  private readonly readyDirs = new WeakMap<ZkSession, Set<string>>();
  protected closed = false;

  constructor(
    protected readonly pool: ZkSessionPool,
    readonly opts: EngineDriverOptions,
    readonly url: string,
  ) {}

  protected assertOpen(): void {
    this.pool.assertOpen();
  }

  /** Creates `dirs` once per session (`key` names them). */
  async ensureDirs(session: ZkSession, key: string, dirs: string[], opT: number): Promise<void> {
    let ready = this.readyDirs.get(session);
    if (!ready) this.readyDirs.set(session, (ready = new Set()));
    if (ready.has(key)) return;
    await Promise.all(dirs.map((d) => session.mkdirp(d, opT)));
    ready.add(key);
  }

  /** The holders of `namespace` as `read` lists them from `dir`, read on a live session. */
  protected async listHolders(
    namespace: string,
    dir: string,
    read: (session: ZkSession, q: ZkHoldersQuery) => Promise<HolderRecord[]>,
  ): Promise<HolderRecord[]> {
    this.assertOpen();
    try {
      const own = [...this.claims.values()].find((c) => c.session && !c.session.dead)?.session;
      const session = own ?? (await this.pool.get(DEFAULT_ZK_SESSION_TIMEOUT_MS));
      return await read(session, {
        dir,
        url: this.url,
        opTimeoutMs: this.opts.connectTimeoutMs,
        now: () => this.opts.clock.now(),
      });
    } catch (err) {
      throw zkFailure(err, this.url, `listing the holders of "${namespace}"`);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.claims.clear();
    await this.pool.close();
  }
}
