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
 *   "foreverVersion"}`, rewritten in the same transaction as every write of the Leaf node
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
 *
 * @example
 * ```ts
 * const driver = await createLeafDriver(new URL('zookeeper+leaf://127.0.0.1:2181?name=orders&address=10.0.0.5:8080'), { clock: systemClock, connectTimeoutMs: 5000 });
 * const claim = await driver.claim({ namespace: 'orders', slots: 1024, ttlMs: 9000, holder });
 * console.log(claim.slot); // Leaf's worker ID for 10.0.0.5:8080
 * ```
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import type { Claim, ClaimRequest, RegistryDriver } from '../driver.js';
import { assertKnownOptions } from '@flurry/core';
import { registryError } from '../errors.js';
import { checkUrlParams } from '../url.js';
import { allNodeIds, holderFields } from './common.js';
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
import {
  DEFAULT_ZK_SESSION_TIMEOUT_MS,
  renewOpTimeout,
  validateClaimRequest,
  zkSessionPool,
  ZOOKEEPER_DRIVER_OPTION_NAMES,
  type ZooKeeperDriverOptions,
} from './zookeeper.js';

/**
 * Leaf reports its timestamp every 3 s; a crashed Leaf holder may have issued this long
 * past its last report (3 s + 1 s slack). A claim after an unclean holder pads the mark by
 * `LEAF_UNREPORTED_MS - ttlMs` when the TTL is shorter.
 *
 * @example
 * ```ts
 * const reported = stored + Math.max(0, LEAF_UNREPORTED_MS - ttlMs);
 * ```
 */
export const LEAF_UNREPORTED_MS = 4000;

const KNOWN_PARAMS = ['name', 'address', 'cacheDir', 'cacheFallback'] as const;

/**
 * A Leaf `ip:port` address.
 *
 * @example
 * ```ts
 * const a: LeafAddress = parseLeafAddress('10.0.0.5:8080', url);
 * ```
 */
export interface LeafAddress {
  readonly ip: string;
  readonly port: string;
  /** `ip:port`, as in Leaf's node names. */
  readonly text: string;
}

/**
 * Parses and checks a Leaf address `ip:port` (IPv4, IPv6 without brackets, or a host name
 * without `-`; port 1–65535). Throws `FLURRY_E_REGISTRY_OPTION`.
 *
 * @example
 * ```ts
 * parseLeafAddress('10.0.0.5:8080', url) // { ip: '10.0.0.5', port: '8080', text: '10.0.0.5:8080' }
 * ```
 */
export function parseLeafAddress(text: string, url: string): LeafAddress {
  const i = text.lastIndexOf(':');
  const ip = i > 0 ? text.slice(0, i) : '';
  const port = i > 0 ? text.slice(i + 1) : '';
  if (!/^[0-9A-Za-z._:]+$/.test(ip) || !/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
    throw registryError(
      'OPTION',
      `the Leaf address "${text}" is not ip:port (an IP or host name without "-", and a port 1–65535), e.g. address=10.0.0.5:8080`,
      { url, address: text },
    );
  }
  return { ip, port, text };
}

/**
 * A child of Leaf's `forever` node, parsed.
 *
 * @example
 * ```ts
 * const n: LeafNodeName | null = parseLeafNodeName('10.0.0.5:8080-0000000007');
 * ```
 */
export interface LeafNodeName {
  readonly address: string;
  readonly workerId: number;
  readonly name: string;
}

/**
 * Parses a child name of `/snowflake/{name}/forever` (`ip:port-NNNNNNNNNN`); null when it
 * is not one.
 *
 * @example
 * ```ts
 * parseLeafNodeName('10.0.0.5:8080-0000000007') // { address: '10.0.0.5:8080', workerId: 7, name: '…' }
 * ```
 */
export function parseLeafNodeName(name: string): LeafNodeName | null {
  const i = name.lastIndexOf('-');
  if (i <= 0 || !/^\d{10}$/.test(name.slice(i + 1))) return null;
  return { address: name.slice(0, i), workerId: Number(name.slice(i + 1)), name };
}

/**
 * Leaf's node data: `{"ip":"…","port":"…","timestamp":<ms>}` (Jackson's field order).
 *
 * @example
 * ```ts
 * leafEndpointJson({ ip: '10.0.0.5', port: '8080', text: '10.0.0.5:8080' }, 1700000000000)
 * // '{"ip":"10.0.0.5","port":"8080","timestamp":1700000000000}'
 * ```
 */
export function leafEndpointJson(addr: LeafAddress, timestamp: number): string {
  return JSON.stringify({ ip: addr.ip, port: addr.port, timestamp });
}

/** A holder-record field as text: strings, numbers and booleans as they are, anything else `?`. */
function shown(v: unknown): string {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? String(v) : '?';
}

function parseEndpoint(data: Buffer, nodePath: string, url: string): number {
  let v: unknown;
  try {
    v = JSON.parse(data.toString('utf8'));
  } catch {
    v = undefined;
  }
  const e = v as { timestamp?: unknown } | undefined;
  if (
    !e ||
    typeof e !== 'object' ||
    typeof e.timestamp !== 'number' ||
    !Number.isFinite(e.timestamp) ||
    e.timestamp < 0
  ) {
    throw registryError(
      'CORRUPT',
      `the Leaf node ${nodePath} at ${url} holds ${JSON.stringify(data.toString('utf8').slice(0, 200))}, not {"ip":"…","port":"…","timestamp":<ms>}; Leaf would not start from it either: restore its data (timestamp at or above the last ID issued by this address)`,
      { url, path: nodePath },
    );
  }
  return e.timestamp;
}

interface LeafMeta {
  highWaterMs: number;
  releasedCleanly: boolean;
  foreverVersion: number;
}

function parseMeta(data: Buffer): LeafMeta | null {
  try {
    const m = JSON.parse(data.toString('utf8')) as Partial<LeafMeta>;
    if (
      typeof m.highWaterMs === 'number' &&
      typeof m.releasedCleanly === 'boolean' &&
      typeof m.foreverVersion === 'number'
    ) {
      return { highWaterMs: m.highWaterMs, releasedCleanly: m.releasedCleanly, foreverVersion: m.foreverVersion };
    }
  } catch {
    /* treated as absent: not clean */
  }
  return null;
}

/**
 * The local worker-ID cache of one Leaf name and port.
 *
 * @example
 * ```ts
 * const { workerId, highWaterMs }: LeafCache = readLeafCache(leafCacheFile(tmpdir(), 'orders', '8080'));
 * ```
 */
export interface LeafCache {
  readonly workerId?: number;
  readonly highWaterMs?: number;
}

/**
 * Leaf's cache file: `{cacheDir}/{name}/leafconf/{port}/workerID.properties`.
 *
 * @example
 * ```ts
 * leafCacheFile('/tmp', 'orders', '8080') // '/tmp/orders/leafconf/8080/workerID.properties'
 * ```
 */
export function leafCacheFile(cacheDir: string, name: string, port: string): string {
  return path.join(cacheDir, ...name.split('/'), 'leafconf', port, 'workerID.properties');
}

/**
 * Reads a cache file written by Leaf (`workerID=N`) or Flurry (plus `flurry.highWaterMs`);
 * `{}` when it is missing or unreadable.
 *
 * @example
 * ```ts
 * readLeafCache('/tmp/orders/leafconf/8080/workerID.properties').workerId
 * ```
 */
export function readLeafCache(file: string): LeafCache {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return {};
  }
  const props = new Map<string, string>();
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith('!')) continue;
    const m = /^([^=:\s]+)\s*[=:\s]\s*(.*)$/.exec(line);
    if (m) props.set(m[1], m[2].trim());
  }
  const w = props.get('workerID');
  const h = props.get('flurry.highWaterMs');
  return {
    ...(w !== undefined && /^\d+$/.test(w) ? { workerId: Number(w) } : {}),
    ...(h !== undefined && /^\d+$/.test(h) ? { highWaterMs: Number(h) } : {}),
  };
}

/** Writes the cache file atomically (temporary file + rename). */
function writeLeafCache(file: string, workerId: number, highWaterMs: number): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, `workerID=${workerId}\nflurry.highWaterMs=${Math.floor(highWaterMs)}\n`);
  renameSync(tmp, file);
}

/** Process start time from /proc (Linux), to tell a live holder from a reused pid. */
function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function holderAlive(pid: number, host: string | undefined, start: string | undefined): boolean {
  if (host !== undefined && host !== hostname()) return true; // cannot check another host: assume alive
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
  const now = processStart(pid);
  return start === undefined || now === undefined || now === start;
}

/**
 * An exclusive per-address lock on this host (see {@link acquireHostLock}).
 *
 * @example
 * ```ts
 * const lock: HostLock = await acquireHostLock(dir, '10.0.0.5:8080', url);
 * try { serve(); } finally { lock.release(); }
 * ```
 */
export interface HostLock {
  readonly file: string;
  /** Still in place (not removed by hand)? */
  held(): boolean;
  release(): void;
}

/**
 * Takes the host-wide lock of a Leaf address in `dir`: every process writes its own file
 * `flurry-<address>.<pid>.<token>.lock`, then lists the others; if another belongs to a
 * live process it removes its own and refuses (`FLURRY_E_REGISTRY_EXHAUSTED` naming the
 * holder). Two processes starting at once may both back off, but never both win: the
 * later one to list always sees the earlier one's file. Files of dead processes (pid
 * gone, or reused: the start time in /proc differs) are removed.
 *
 * @example
 * ```ts
 * const lock = await acquireHostLock('/tmp/orders/leafconf/8080', '10.0.0.5:8080', url);
 * lock.release();
 * ```
 */
export async function acquireHostLock(dir: string, address: string, url: string): Promise<HostLock> {
  mkdirSync(dir, { recursive: true });
  const prefix = `flurry-${address.replace(/[^0-9A-Za-z.]/g, '_')}.`;
  let lastHolder: Record<string, unknown> | undefined;
  for (let attempt = 0; attempt < 4; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, 20 + Math.floor(Math.random() * 80)));
    const own = `${prefix}${process.pid}.${randomBytes(6).toString('hex')}.lock`;
    const ownPath = path.join(dir, own);
    writeFileSync(
      ownPath,
      JSON.stringify({
        pid: process.pid,
        hostname: hostname(),
        address,
        start: processStart(process.pid),
        since: new Date().toISOString(),
      }),
      { flag: 'wx' },
    );
    let conflict: Record<string, unknown> | undefined;
    for (const f of readdirSync(dir)) {
      if (f === own || !f.startsWith(prefix) || !f.endsWith('.lock')) continue;
      const pid = Number(f.slice(prefix.length).split('.')[0]);
      let info: { pid?: number; hostname?: string; start?: string } = {};
      try {
        info = JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as typeof info;
      } catch {
        /* being written: its pid is in the name */
      }
      if (Number.isSafeInteger(pid) && pid > 0 && !holderAlive(pid, info.hostname, info.start)) {
        try {
          unlinkSync(path.join(dir, f));
        } catch {
          /* removed by another process */
        }
        continue;
      }
      conflict = { file: path.join(dir, f), pid, hostname: info.hostname ?? hostname() };
      break;
    }
    if (!conflict) {
      return {
        file: ownPath,
        held: () => {
          try {
            readFileSync(ownPath);
            return true;
          } catch {
            return false;
          }
        },
        release: () => {
          try {
            unlinkSync(ownPath);
          } catch {
            /* already gone */
          }
        },
      };
    }
    unlinkSync(ownPath);
    lastHolder = conflict;
  }
  throw registryError(
    'EXHAUSTED',
    `the Leaf address ${address} is already held on this host by process ${String(lastHolder?.pid)} (lock file ${String(lastHolder?.file)}); ` +
      'two processes with one ip:port would get the same worker ID: give each process its own port, or stop the other one (delete the lock file only if that pid is not a Flurry process)',
    { url, address, held: 1, holders: [lastHolder] },
  );
}

interface LeafClaimState {
  readonly slot: number;
  readonly addr: LeafAddress;
  readonly name: string;
  readonly lock: HostLock;
  readonly cacheFile: string;
  /** Null for a claim made from the local cache while ZooKeeper was unreachable. */
  readonly session: ZkSession | null;
  readonly nodePath: string;
  readonly livePath: string;
  readonly metaPath: string;
  foreverVersion: number;
  metaVersion: number;
  lastWritten: number;
}

class LeafDriver implements RegistryDriver {
  readonly kind = 'zookeeper+leaf';
  readonly url: string;
  private readonly claims = new Map<string, LeafClaimState>();
  private readonly readyDirs = new WeakMap<ZkSession, Set<string>>();
  private closed = false;

  constructor(
    private readonly pool: ZkSessionPool,
    private readonly prefix: string,
    private readonly cfg: { name?: string; address?: string; cacheDir: string; cacheFallback: boolean },
    private readonly opts: ZooKeeperDriverOptions,
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
          return this.offlineClaim(req, name, addr, lock, cacheFile, err);
        throw err;
      }
      return await this.onlineClaim(req, session, name, addr, lock, cacheFile);
    } catch (err) {
      lock.release();
      throw err;
    }
  }

  private offlineClaim(
    req: ClaimRequest,
    name: string,
    addr: LeafAddress,
    lock: HostLock,
    cacheFile: string,
    cause: unknown,
  ): Claim {
    const cache = readLeafCache(cacheFile);
    if (cache.workerId === undefined) {
      throw registryError(
        'UNREACHABLE',
        `${(cause as Error).message}; and there is no cached Leaf worker ID for ${addr.text} at ${cacheFile} to start from`,
        { url: this.url, cacheFile },
        cause,
      );
    }
    if (cache.workerId >= req.slots) throw this.tooHigh(cache.workerId, req, name, addr, null);
    const token = `leaf-offline:${cacheFile}:${randomBytes(6).toString('hex')}`;
    this.claims.set(token, {
      slot: cache.workerId,
      addr,
      name,
      lock,
      cacheFile,
      session: null,
      nodePath: '',
      livePath: '',
      metaPath: '',
      foreverVersion: -1,
      metaVersion: -1,
      lastWritten: cache.highWaterMs ?? 0,
    });
    this.opts.logger?.warn(
      {
        url: this.url,
        name,
        address: addr.text,
        workerId: cache.workerId,
        cacheFile,
        highWaterMs: cache.highWaterMs ?? null,
      },
      'ZooKeeper unreachable: starting from the cached Leaf worker ID (cacheFallback=true); no cross-host check, local high-water mark only',
    );
    const hw = cache.highWaterMs ?? 0;
    return {
      slot: cache.workerId,
      token,
      highWaterMs: hw > 0 ? hw + Math.max(0, LEAF_UNREPORTED_MS - req.ttlMs) : 0,
      releasedCleanly: false,
    };
  }

  private paths(name: string, addr: LeafAddress): { root: string; forever: string; live: string; meta: string } {
    const root = `${this.prefix}/snowflake/${name}`;
    return {
      root,
      forever: `${root}/forever`,
      live: `${root}/flurry-live/${addr.text}`,
      meta: `${root}/flurry-meta/${addr.text}`,
    };
  }

  private async onlineClaim(
    req: ClaimRequest,
    session: ZkSession,
    name: string,
    addr: LeafAddress,
    lock: HostLock,
    cacheFile: string,
  ): Promise<Claim> {
    if (session.timeoutMs < req.ttlMs) {
      throw registryError(
        'OPTION',
        `ZooKeeper at ${this.url} granted a session timeout of ${session.timeoutMs} ms, shorter than the lease TTL of ${req.ttlMs} ms; set ttlMs ≤ ${session.timeoutMs} or raise maxSessionTimeout`,
        { url: this.url, ttlMs: req.ttlMs, sessionTimeoutMs: session.timeoutMs },
      );
    }
    const p = this.paths(name, addr);
    const opT = Math.max(session.opTimeoutMs, this.opts.connectTimeoutMs);
    const doing = `claiming the Leaf worker ID of ${addr.text} under ${p.forever}`;
    try {
      let ready = this.readyDirs.get(session);
      if (!ready) this.readyDirs.set(session, (ready = new Set()));
      if (!ready.has(p.root)) {
        await Promise.all(
          [p.forever, path.posix.dirname(p.live), path.posix.dirname(p.meta)].map((d) => session.mkdirp(d, opT)),
        );
        ready.add(p.root);
      }
      try {
        await session.create(
          p.live,
          Buffer.from(
            JSON.stringify({
              ...holderFields(req.holder),
              address: addr.text,
              session: session.sessionIdHex,
              claimedAt: this.opts.clock.now(),
            }),
          ),
          CreateMode.EPHEMERAL,
          opT,
        );
      } catch (err) {
        if (!isZk(err, ZkCode.NODE_EXISTS)) throw err;
        const other = await session.getData(p.live, opT).catch(() => null);
        let who: Record<string, unknown> = {};
        try {
          who = other ? (JSON.parse(other.data.toString('utf8')) as Record<string, unknown>) : {};
        } catch {
          /* unknown holder */
        }
        throw registryError(
          'EXHAUSTED',
          `the Leaf address ${addr.text} of "${name}" is held by another live Flurry process (${shown(who.hostname)}/${shown(who.pid)}); two processes with one ip:port would share a worker ID: give each its own address`,
          { url: this.url, address: addr.text, held: 1, holders: [who] },
        );
      }
    } catch (err) {
      throw zkFailure(err, this.url, doing);
    }
    session.holds++;
    try {
      const [children, metaGot] = await Promise.all([
        session.getChildren(p.forever, opT),
        session.getData(p.meta, opT),
      ]);
      const mine = children
        .map(parseLeafNodeName)
        .filter((n): n is LeafNodeName => n !== null && n.address === addr.text)
        .sort((a, b) => a.workerId - b.workerId);
      let nodePath: string;
      let workerId: number;
      let stored = 0;
      let foreverVersion = 0;
      let isNew = false;
      if (mine.length > 0) {
        if (mine.length > 1)
          this.opts.logger?.warn(
            { url: this.url, address: addr.text, nodes: mine.map((n) => n.name) },
            'several Leaf nodes for one address: using the lowest worker ID',
          );
        nodePath = `${p.forever}/${mine[0].name}`;
        workerId = mine[0].workerId;
        const got = await session.getData(nodePath, opT);
        if (!got)
          throw registryError(
            'CORRUPT',
            `the Leaf node ${nodePath} at ${this.url} vanished while claiming it; something is deleting Leaf nodes`,
            { url: this.url, path: nodePath },
          );
        stored = parseEndpoint(got.data, nodePath, this.url);
        foreverVersion = got.stat.version;
      } else {
        nodePath = await session.create(
          `${p.forever}/${addr.text}-`,
          Buffer.from(leafEndpointJson(addr, this.opts.clock.now())),
          CreateMode.PERSISTENT_SEQUENTIAL,
          opT,
        );
        const parsed = parseLeafNodeName(path.posix.basename(nodePath));
        if (!parsed)
          throw registryError('CORRUPT', `ZooKeeper returned the unexpected sequential node ${nodePath}`, {
            url: this.url,
            path: nodePath,
          });
        workerId = parsed.workerId;
        isNew = true;
      }
      if (workerId >= req.slots) {
        // A new node's number says that every lower number was handed out before it: list them all.
        throw this.tooHigh(
          workerId,
          req,
          name,
          addr,
          isNew ? await session.getChildren(p.forever, opT).catch(() => children) : children,
        );
      }

      const meta = metaGot ? parseMeta(metaGot.data) : null;
      const cache = readLeafCache(cacheFile);
      if (cache.workerId !== undefined && cache.workerId !== workerId) {
        this.opts.logger?.warn(
          { url: this.url, address: addr.text, cached: cache.workerId, workerId, cacheFile },
          'the cached Leaf worker ID differs from ZooKeeper; ZooKeeper wins',
        );
      }
      const cachedHw = cache.workerId === workerId ? (cache.highWaterMs ?? 0) : 0;
      const prevHw = Math.max(stored, cachedHw, meta && !isNew ? meta.highWaterMs : 0);
      // Flurry rewrites its meta record with every write of the Leaf node: if the versions
      // match, the last writer was Flurry (whose unreported window is the lease TTL), not a
      // Leaf server (which reports only every 3 s).
      const lastByFlurry = !isNew && meta !== null && meta.foreverVersion === foreverVersion;
      const clean = (isNew && cachedHw === 0) || (lastByFlurry && meta.releasedCleanly && cachedHw <= stored);
      const mark = Math.max(prevHw, this.opts.clock.now());

      const st: LeafClaimState = {
        slot: workerId,
        addr,
        name,
        lock,
        cacheFile,
        session,
        nodePath,
        livePath: p.live,
        metaPath: p.meta,
        foreverVersion,
        metaVersion: metaGot ? metaGot.stat.version : -1,
        lastWritten: stored,
      };
      await this.writeNode(st, mark, false, opT);
      writeLeafCache(cacheFile, workerId, mark);
      const token = `leaf:${nodePath}@${session.sessionIdHex}:${randomBytes(4).toString('hex')}`;
      this.claims.set(token, st);
      this.opts.logger?.info(
        {
          url: this.url,
          name,
          address: addr.text,
          workerId,
          node: nodePath,
          highWaterMs: prevHw,
          releasedCleanly: clean,
          sessionTimeoutMs: session.timeoutMs,
        },
        'claimed Leaf worker ID',
      );
      const reported =
        clean || lastByFlurry || prevHw === 0 ? prevHw : prevHw + Math.max(0, LEAF_UNREPORTED_MS - req.ttlMs);
      return { slot: workerId, token, highWaterMs: reported, releasedCleanly: clean };
    } catch (err) {
      session.holds--;
      await session.remove(p.live, -1, opT).catch(() => undefined);
      throw zkFailure(err, this.url, doing);
    }
  }

  private tooHigh(
    workerId: number,
    req: ClaimRequest,
    name: string,
    addr: LeafAddress,
    children: string[] | null,
  ): Error {
    // Every worker ID that fits is assigned, for good, to another address: list them.
    const assigned = (children ?? [])
      .map(parseLeafNodeName)
      .filter((n): n is LeafNodeName => n !== null && n.workerId < req.slots)
      .sort((a, b) => a.workerId - b.workerId);
    const holders = assigned.slice(0, 16).map((n) => ({ workerId: n.workerId, address: n.address }));
    const held = children ? assigned.length : undefined;
    const who = holders.map((h) => `${h.workerId}: ${h.address}`).join(', ');
    return registryError(
      'EXHAUSTED',
      `${allNodeIds(req.slots).join(' of the layout ')} taken under /snowflake/${name}/forever${held !== undefined ? ` (${held} held; ${who}${assigned.length > 16 ? ', …' : ''})` : ''}: ` +
        `${addr.text} has Leaf worker ID ${workerId}, which does not fit. Leaf never recycles worker IDs (every new ip:port takes the next sequence number, for good); ` +
        'use the zookeeper:// registry, which recycles them, or a layout with more worker bits',
      { url: this.url, name, address: addr.text, workerId, slots: req.slots, held, holders },
    );
  }

  /**
   * Writes the Leaf node (`timestamp` = max(mark, last written)) by compare-and-set on its
   * version, with a check that our ephemeral node exists, and the Flurry meta record; a
   * release also removes the ephemeral node. A version mismatch on the Leaf node means
   * another process (a Leaf server with this address?) writes it.
   */
  private async writeNode(
    st: LeafClaimState,
    mark: number,
    release: boolean | 'renew',
    opT: number,
    attempt = 0,
  ): Promise<void> {
    const s = st.session as ZkSession;
    const ts = Math.max(mark, st.lastWritten);
    const metaData = Buffer.from(
      JSON.stringify({ highWaterMs: ts, releasedCleanly: release === true, foreverVersion: st.foreverVersion + 1 }),
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
 *
 * @example
 * ```ts
 * const driver = await createLeafDriver('zookeeper+leaf://zk1:2181,zk2:2181?name=orders&address=10.0.0.5:8080', { clock: systemClock, connectTimeoutMs: 5000 });
 * ```
 */
export async function createLeafDriver(url: URL | string, opts: ZooKeeperDriverOptions): Promise<RegistryDriver> {
  assertKnownOptions(opts, ZOOKEEPER_DRIVER_OPTION_NAMES, 'createLeafDriver options');
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
