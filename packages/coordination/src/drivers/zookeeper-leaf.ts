/**
 * The `zookeeper+leaf://` registry driver: Meituan Leaf's own ZooKeeper scheme for
 * snowflake worker IDs, so a Leaf fleet can move to Flurry and keep its worker IDs (and
 * move back).
 *
 * ## URL
 * `zookeeper+leaf://h:p[,h:p][/prefix]?name=<leaf.name>&address=<ip:port>[&cacheDir=<dir>][&cacheFallback=true]`
 * - `name` — Leaf's `leaf.name`; default: the registry's namespace (cluster, or
 *   `cluster/dc-N`). Segments of `[A-Za-z0-9_.-]`, separated by `/`.
 * - `address` — Leaf's `ip:port` (the service's address, `leaf.snowflake.port`); default:
 *   the holder's `address`. The ip has no `-` (Leaf splits node names on `-`).
 * - `cacheDir` — root of the local worker-ID cache; default `os.tmpdir()` (Java's
 *   `java.io.tmpdir` is `/tmp` on Linux too).
 * - `cacheFallback` — `true` to start from the local cache when ZooKeeper is unreachable,
 *   as Leaf does; default `false` (see the risks below).
 * - `/prefix` — a path under which `/snowflake/…` lives (like a chroot); default: none,
 *   which is where Leaf writes.
 *
 * ## What is stored, byte for byte as Leaf (`SnowflakeZookeeperHolder`) does
 * - `/snowflake/{name}/forever/{ip}:{port}-NNNNNNNNNN`: PERSISTENT_SEQUENTIAL, created once
 *   per address; the 10-digit sequence number is the worker ID. An address that already
 *   has a node gets that node's number back (the same worker ID as before).
 * - its data: `{"ip":"…","port":"…","timestamp":<ms>}`, rewritten at claim, at every
 *   renewal and at release. Leaf writes `System.currentTimeMillis()` every 3 s; Flurry
 *   writes max(now, the highest timestamp issued, the last value it wrote), so the stored
 *   value is a true high-water mark and never goes down. Run the registry with
 *   `renewIntervalMs: 3000` for Leaf's cadence.
 * - `{cacheDir}/{name}/leafconf/{port}/workerID.properties`: `workerID=N` (Leaf's local
 *   cache), plus a `flurry.highWaterMs=<ms>` line that Leaf ignores.
 *
 * Flurry adds, outside Leaf's `forever` tree (Leaf never reads them):
 * - `/snowflake/{name}/flurry-live/{ip}:{port}`: EPHEMERAL, created at claim: a second
 *   Flurry process with the same address, on any host, is refused while the first one's
 *   session lives, and renewals prove the session (and so the worker ID) is still ours.
 * - `/snowflake/{name}/flurry-meta/{ip}:{port}`: `{"highWaterMs","releasedCleanly",
 *   "foreverVersion","updatedAtMs"}` (`updatedAtMs`: the writer's clock, for holders()), rewritten in the same transaction as every write of the Leaf node
 *   (a release marks it clean). If the Leaf node's version still equals `foreverVersion`,
 *   its last writer was Flurry; otherwise a Leaf server wrote it since.
 * - a lock file per process beside the cache file: two processes on one host with the same
 *   address are refused even if ZooKeeper is down.
 *
 * ## The start-up check
 * Leaf refuses to start if its clock is behind the stored timestamp. Flurry returns the
 * stored timestamp as the claim's `highWaterMs`; the lease manager issues nothing at or
 * below it (plus the TTL when the previous holder did not release cleanly) and fails with
 * `FLURRY_E_CLOCK_BEHIND_HIGH_WATER` when its clock would take too long to pass it. A
 * release stores the exact last timestamp issued (not the time of the release), so a
 * restarted holder need not wait. After a Leaf (Java) holder, which reports only every 3 s,
 * the mark is padded so that at least 4 s are covered even with a TTL under 4 s: use
 * `ttlMs` ≥ 4000 (Leaf's own session is 6 s; `ttlMs: 9000, renewIntervalMs: 3000` gives
 * Leaf's cadence) so that no padding is needed.
 *
 * ## What this scheme promises, and what it does not
 * - Promised: a worker ID, once assigned to an address, is never assigned to another
 *   address (sequence numbers of a ZooKeeper parent never repeat); an address keeps its
 *   worker ID across restarts; with Flurry on both sides, one address is held by at most
 *   one live process (lock file on the host, ephemeral node across hosts), and a holder
 *   whose session expired is told LEASE_LOST and fenced.
 * - Not promised: worker IDs are never recycled: every new address (a new container IP)
 *   takes the next number for good, and once the number reaches the layout's node count
 *   (1024 for 10 bits) claims fail `FLURRY_E_REGISTRY_EXHAUSTED`. A Leaf (Java) process
 *   with the same address is not excluded (it does not know the ephemeral node); if it
 *   rewrites the node while Flurry holds it, Flurry's next renewal sees the foreign write
 *   and reports LEASE_LOST. Deleting or recreating `/snowflake/{name}` restarts the
 *   numbering and hands out used worker IDs again. A Leaf holder that lost ZooKeeper keeps
 *   issuing without reporting, so its last stored timestamp can be stale by more than 3 s.
 * - `cacheFallback=true` (Leaf's behaviour when ZooKeeper is down at start): the worker
 *   ID comes from the local file; nothing checks that another host does not use the same
 *   address, the only high-water mark is the local one (none at all if Leaf wrote the
 *   file), and renewals only refresh the local file until the process restarts.
 */
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Claim, ClaimRequest, HolderRecord, RegistryDriver } from '../driver.js';
import { checkUrlParams } from '@flurry/core';
import { registryError } from '../errors.js';
import { checkDriverOptions, type EngineDriverOptions } from './common.js';
import {
  CreateMode,
  isZk,
  normalizeZkPath,
  parseZooKeeperUrl,
  ZkCode,
  zkFailure,
  type ZkSession,
  type ZkSessionPool,
} from './zookeeper-client.js';
import { DEFAULT_ZK_SESSION_TIMEOUT_MS, renewOpTimeout, validateClaimRequest, zkSessionPool } from './zookeeper.js';
import { offlineClaim, onlineClaim, type LeafClaimState, type LeafContext } from './zookeeper-leaf-claim.js';
import { acquireHostLock, leafCacheFile, writeLeafCache } from './zookeeper-leaf-cache.js';
import { readLeafHolders } from './zookeeper-leaf-holders.js';
import { leafEndpointJson, parseLeafAddress, parseMeta } from './zookeeper-leaf-names.js';

export { LEAF_UNREPORTED_MS } from './zookeeper-leaf-claim.js';
export {
  acquireHostLock,
  leafCacheFile,
  readLeafCache,
  type HostLock,
  type LeafCache,
} from './zookeeper-leaf-cache.js';
export {
  leafEndpointJson,
  parseLeafAddress,
  parseLeafNodeName,
  type LeafAddress,
  type LeafNodeName,
} from './zookeeper-leaf-names.js';

const KNOWN_PARAMS = ['name', 'address', 'cacheDir', 'cacheFallback'] as const;

class LeafDriver implements RegistryDriver, LeafContext {
  readonly kind = 'zookeeper+leaf';
  readonly url: string;
  readonly claims = new Map<string, LeafClaimState>();
  readonly readyDirs = new WeakMap<ZkSession, Set<string>>();
  private closed = false;

  constructor(
    private readonly pool: ZkSessionPool,
    readonly prefix: string,
    private readonly cfg: { name?: string; address?: string; cacheDir: string; cacheFallback: boolean },
    readonly opts: EngineDriverOptions,
    url: string,
  ) {
    this.url = url;
  }

  private assertOpen(): void {
    if (this.closed)
      throw registryError('CLOSED', `the registry ${this.url} was closed; open a new one`, { url: this.url });
  }

  async claim(req: ClaimRequest): Promise<Claim> {
    this.assertOpen();
    validateClaimRequest(req, this.url);
    const name = this.cfg.name ?? req.namespace;
    const addrText = this.cfg.address ?? req.holder.address;
    if (addrText === undefined) {
      throw registryError(
        'OPTION',
        `the Leaf-compatible registry needs this service's ip:port (Leaf's worker IDs belong to addresses): add ?address=10.0.0.5:8080 to ${this.url} or set the holder's address`,
        { url: this.url },
      );
    }
    const addr = parseLeafAddress(addrText, this.url);
    const cacheFile = leafCacheFile(this.cfg.cacheDir, name, addr.port);
    const lock = await acquireHostLock(path.dirname(cacheFile), addr.text, this.url);
    try {
      let session: ZkSession;
      try {
        session = await this.pool.get(req.ttlMs);
      } catch (err) {
        if (this.cfg.cacheFallback && (err as { code?: string }).code === 'FLURRY_E_REGISTRY_UNREACHABLE')
          return offlineClaim(this, req, name, addr, lock, cacheFile, err);
        throw err;
      }
      return await onlineClaim(this, req, session, name, addr, lock, cacheFile);
    } catch (err) {
      lock.release();
      throw err;
    }
  }

  /**
   * Writes the Leaf node (`timestamp` = max(mark, last written)) by compare-and-set on its
   * version, with a check that our ephemeral node exists, and the Flurry meta record; a
   * release also removes the ephemeral node. A version mismatch on the Leaf node means
   * another process (a Leaf server with this address?) writes it.
   */
  /** @internal */
  async writeNode(
    st: LeafClaimState,
    mark: number,
    release: boolean | 'renew',
    opT: number,
    attempt = 0,
  ): Promise<void> {
    const s = st.session as ZkSession;
    const ts = Math.max(mark, st.lastWritten);
    const metaData = Buffer.from(
      JSON.stringify({
        highWaterMs: ts,
        releasedCleanly: release === true,
        foreverVersion: st.foreverVersion + 1,
        updatedAtMs: this.opts.clock.now(),
      }),
    );
    try {
      await s.multi((tx) => {
        tx.check(st.livePath, -1);
        tx.setData(st.nodePath, Buffer.from(leafEndpointJson(st.addr, ts)), st.foreverVersion);
        if (st.metaVersion < 0) tx.create(st.metaPath, metaData, CreateMode.PERSISTENT);
        else tx.setData(st.metaPath, metaData, st.metaVersion);
        if (release === true) tx.remove(st.livePath, -1);
      }, opT);
    } catch (err) {
      if (isZk(err) && err.opIndex === 0) {
        throw registryError(
          'LEASE_LOST',
          `the ephemeral node ${st.livePath} at ${this.url} is gone (the session expired); another process may hold ${st.addr.text} now`,
          { url: this.url, slot: st.slot, address: st.addr.text },
        );
      }
      if (isZk(err, ZkCode.BAD_VERSION) && err.opIndex === 1 && attempt < 3 && (await this.adoptOwnWrite(st, opT))) {
        return this.writeNode(st, mark, release, opT, attempt + 1);
      }
      if (isZk(err, ZkCode.BAD_VERSION, ZkCode.NO_NODE) && err.opIndex === 1) {
        throw registryError(
          'LEASE_LOST',
          `the Leaf node ${st.nodePath} at ${this.url} was ${err.zkCode === ZkCode.NO_NODE ? 'deleted' : 'rewritten by another process (a Leaf server with the same ip:port?)'} while this process held worker ID ${st.slot}; stop issuing`,
          { url: this.url, slot: st.slot, address: st.addr.text, path: st.nodePath },
        );
      }
      if (isZk(err, ZkCode.BAD_VERSION, ZkCode.NODE_EXISTS, ZkCode.NO_NODE) && err.opIndex === 2 && attempt < 3) {
        const got = await s.getData(st.metaPath, opT);
        st.metaVersion = got ? got.stat.version : -1;
        return this.writeNode(st, mark, release, opT, attempt + 1);
      }
      throw err;
    }
    st.foreverVersion += 1;
    st.metaVersion = st.metaVersion < 0 ? 0 : st.metaVersion + 1;
    st.lastWritten = ts;
  }

  /**
   * After a version mismatch on the Leaf node: true (and `st` updated) when the write that
   * moved it on was this holder's own, committed by ZooKeeper but with its answer lost
   * (ZooKeeper killed or the connection cut right after the commit). The meta record is
   * written in the same transaction and names the Leaf node's version after it, and only a
   * holder of the ephemeral node writes it, so it names the current version exactly when
   * that write was ours. A Leaf server (Java) with this address never writes it: its writes
   * still fail the renewal. Without this, every later write, the release included, failed
   * as `LEASE_LOST` while the session kept the ephemeral node, and this process's own next
   * claim of the address was refused as held by "another live process" until the session
   * ended.
   */
  private async adoptOwnWrite(st: LeafClaimState, opT: number): Promise<boolean> {
    const s = st.session as ZkSession;
    const [node, meta] = await Promise.all([s.getData(st.nodePath, opT), s.getData(st.metaPath, opT)]);
    const m = meta ? parseMeta(meta.data) : null;
    if (!node || !meta || !m || m.foreverVersion !== node.stat.version || node.stat.version <= st.foreverVersion)
      return false;
    this.opts.logger?.info(
      { url: this.url, slot: st.slot, address: st.addr.text, version: node.stat.version },
      'Leaf: a write of ours was committed without its answer reaching us; continuing from it',
    );
    st.foreverVersion = node.stat.version;
    st.metaVersion = meta.stat.version;
    st.lastWritten = Math.max(st.lastWritten, m.highWaterMs);
    return true;
  }

  async renew(claim: Claim, opts: { ttlMs: number; highWaterMs: number }): Promise<void> {
    this.assertOpen();
    const st = this.claims.get(claim.token);
    if (!st)
      throw registryError(
        'LEASE_LOST',
        `renewing Leaf worker ID ${claim.slot} at ${this.url}: this driver holds no such claim (released, lost or from another driver)`,
        { url: this.url, slot: claim.slot },
      );
    const mark = Math.max(this.opts.clock.now(), opts.highWaterMs, st.lastWritten);
    if (!st.session) {
      if (!st.lock.held()) {
        this.forget(claim.token, st, 'host lock file removed');
        throw registryError(
          'LEASE_LOST',
          `renewing Leaf worker ID ${st.slot} from the local cache: the lock file ${st.lock.file} was removed`,
          { url: this.url, slot: st.slot },
        );
      }
      writeLeafCache(st.cacheFile, st.slot, mark);
      st.lastWritten = mark;
      return;
    }
    const s = st.session;
    const doing = `renewing Leaf worker ID ${st.slot} of ${st.addr.text}`;
    if (s.dead) {
      this.forget(claim.token, st, 'session expired');
      throw registryError(
        'LEASE_LOST',
        `${doing} at ${this.url}: the ZooKeeper session expired, so the ephemeral node that excludes other holders of ${st.addr.text} is gone`,
        { url: this.url, slot: st.slot, address: st.addr.text },
      );
    }
    if (s.state !== 'connected') {
      throw registryError(
        'UNREACHABLE',
        `${doing}: ZooKeeper at ${this.url} is unreachable (the session is disconnected and reconnecting)`,
        { url: this.url, slot: st.slot, address: st.addr.text },
      );
    }
    const opT = renewOpTimeout(s, opts.ttlMs, this.opts.connectTimeoutMs, doing, this.url);
    try {
      const stat = await s.exists(st.livePath, opT);
      if (!s.owns(stat)) {
        throw registryError(
          'LEASE_LOST',
          `${doing}: the ephemeral node ${st.livePath} ${stat ? 'belongs to another session' : 'is gone'}; another process may hold ${st.addr.text} now`,
          { url: this.url, slot: st.slot, address: st.addr.text },
        );
      }
      await this.writeNode(st, mark, 'renew', opT);
    } catch (err) {
      const e = zkFailure(err, this.url, doing);
      if (e.code === 'FLURRY_E_LEASE_LOST') this.forget(claim.token, st, e.message);
      throw e;
    }
    try {
      writeLeafCache(st.cacheFile, st.slot, st.lastWritten);
    } catch (err) {
      this.opts.logger?.warn(
        { url: this.url, cacheFile: st.cacheFile, err: String(err) },
        'could not update the local Leaf worker-ID cache',
      );
    }
  }

  async release(claim: Claim, opts: { highWaterMs: number }): Promise<void> {
    const st = this.claims.get(claim.token);
    if (!st) return; // already released or lost
    this.assertOpen();
    // The exact final mark (the lease manager reports it after fencing): adding `now` would
    // make the next holder wait for nothing.
    const mark = Math.max(opts.highWaterMs, st.lastWritten);
    const lost = (why: string): void => {
      this.forget(claim.token, st, why);
      this.opts.logger?.warn(
        { url: this.url, slot: st.slot, address: st.addr.text, reason: why },
        'Leaf release: the worker ID was no longer ours; the final mark was stored locally only',
      );
    };
    try {
      writeLeafCache(st.cacheFile, st.slot, mark);
    } catch {
      /* best effort; ZooKeeper below */
    }
    const s = st.session;
    if (!s) return void this.forget(claim.token, st);
    const opT = Math.max(s.opTimeoutMs, this.opts.connectTimeoutMs);
    if (!s.dead && !(await s.waitConnected(opT)) && !s.dead) {
      throw registryError(
        'UNREACHABLE',
        `releasing Leaf worker ID ${st.slot} of ${st.addr.text}: ZooKeeper at ${this.url} is unreachable`,
        { url: this.url, slot: st.slot, address: st.addr.text },
      );
    }
    if (s.dead) return lost('session expired');
    try {
      const stat = await s.exists(st.livePath, opT);
      if (!s.owns(stat)) return lost('ephemeral node gone');
      await this.writeNode(st, mark, true, opT);
      this.forget(claim.token, st);
      this.opts.logger?.info(
        { url: this.url, slot: st.slot, address: st.addr.text, highWaterMs: st.lastWritten },
        'released Leaf worker ID',
      );
    } catch (err) {
      const e = zkFailure(err, this.url, `releasing Leaf worker ID ${st.slot} of ${st.addr.text}`);
      if (e.code === 'FLURRY_E_LEASE_LOST') return lost(e.message);
      throw e;
    }
  }

  async holders(namespace: string): Promise<HolderRecord[]> {
    this.assertOpen();
    const own = [...this.claims.values()].find((c) => c.session && !c.session.dead)?.session;
    try {
      const session = own ?? (await this.pool.get(DEFAULT_ZK_SESSION_TIMEOUT_MS));
      const root = `${this.prefix}/snowflake/${this.cfg.name ?? namespace}`;
      const q = { root, url: this.url, opTimeoutMs: this.opts.connectTimeoutMs, now: () => this.opts.clock.now() };
      return await readLeafHolders(session, q);
    } catch (err) {
      throw zkFailure(err, this.url, `listing the holders of "${namespace}"`);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const st of this.claims.values()) st.lock.release();
    this.claims.clear();
    await this.pool.close();
  }

  private forget(token: string, st: LeafClaimState, lostReason?: string): void {
    if (!this.claims.delete(token)) return;
    st.lock.release();
    if (st.session) st.session.holds = Math.max(0, st.session.holds - 1);
    if (lostReason)
      this.opts.logger?.warn(
        { url: this.url, slot: st.slot, address: st.addr.text, reason: lostReason },
        'Leaf worker ID lost',
      );
  }
}

/**
 * Opens the `zookeeper+leaf://h:p[,h:p][/prefix]?name=…&address=…` driver (query
 * parameters: see the module comment). Connects once at start-up: when ZooKeeper is
 * unreachable it rejects `FLURRY_E_REGISTRY_UNREACHABLE`, unless `cacheFallback=true`, in
 * which case claims start from the local cache. Unknown parameters, a bad `name` or
 * `address` → `FLURRY_E_REGISTRY_URL`.
 */
export async function createLeafDriver(url: URL | string, opts: EngineDriverOptions): Promise<RegistryDriver> {
  checkDriverOptions(opts, 'createLeafDriver');
  const parsed = parseZooKeeperUrl(url, 'zookeeper+leaf');
  const bad = (msg: string, details: Record<string, unknown> = {}): Error =>
    registryError('URL_INVALID', `${parsed.display}: ${msg}`, { url: parsed.display, ...details });
  checkUrlParams(parsed.params, KNOWN_PARAMS, (why) => bad(why, { part: 'query' }));
  const name = parsed.params.get('name') ?? undefined;
  if (name !== undefined) {
    if (name === '') throw bad("name= is empty; give Leaf's leaf.name, e.g. name=orders");
    normalizeZkPath(`/${name}`, 'the Leaf name', parsed.display);
  }
  const address = parsed.params.get('address') ?? undefined;
  if (address !== undefined) {
    try {
      parseLeafAddress(address, parsed.display);
    } catch (e) {
      throw bad((e as Error).message, { address });
    }
  }
  const cacheDir = parsed.params.get('cacheDir') ?? tmpdir();
  if (!path.isAbsolute(cacheDir)) throw bad(`cacheDir must be an absolute directory, got "${cacheDir}"`);
  const fb = parsed.params.get('cacheFallback') ?? 'false';
  if (fb !== 'true' && fb !== 'false') throw bad(`cacheFallback must be true or false, got "${fb}"`);
  const pool = zkSessionPool(parsed, opts);
  try {
    await pool.get(DEFAULT_ZK_SESSION_TIMEOUT_MS);
  } catch (err) {
    if (!(fb === 'true' && (err as { code?: string }).code === 'FLURRY_E_REGISTRY_UNREACHABLE')) {
      await pool.close();
      throw zkFailure(err, parsed.display, `opening the registry ${parsed.display}`);
    }
    opts.logger?.warn(
      { url: parsed.display, err: (err as Error).message },
      'ZooKeeper unreachable at start-up; claims will start from the local Leaf cache (cacheFallback=true)',
    );
  }
  return new LeafDriver(
    pool,
    parsed.path,
    {
      ...(name !== undefined ? { name } : {}),
      ...(address !== undefined ? { address } : {}),
      cacheDir,
      cacheFallback: fb === 'true',
    },
    opts,
    parsed.display,
  );
}
