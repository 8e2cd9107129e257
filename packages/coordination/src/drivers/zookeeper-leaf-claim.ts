/** Claiming a Leaf worker ID, online or from Leaf's local cache, and Leaf's names and records (docs/node-ids.md, "Leaf internals"). */
import path from 'node:path';
import { randomHex } from '@flurry/core';
import type { Claim, ClaimRequest } from '../driver.js';
import { registryError } from '../errors.js';
import { allNodeIds, jsonObject } from './common.js';
import { CreateMode, isZk, ZkCode, type ZkSession } from './zookeeper-session.js';
import { ZkDriverBase, zkFailure, type ZkClaimState } from './zookeeper-client.js';
import { readLeafCache, writeLeafCache, type acquireHostLock } from './zookeeper-leaf-cache.js';

/** How long past its last report (every 3 s, + 1 s slack) a crashed Leaf holder may have issued. */
export const LEAF_UNREPORTED_MS = 4000;

export interface LeafClaimState extends ZkClaimState {
  readonly addr: LeafAddress;
  readonly name: string;
  readonly lock: Awaited<ReturnType<typeof acquireHostLock>>;
  readonly cacheFile: string;
  readonly nodePath: string;
  readonly metaPath: string;
  foreverVersion: number;
  metaVersion: number;
}

type LeafClaimant = Pick<LeafClaimState, 'name' | 'addr' | 'lock' | 'cacheFile'>;

export abstract class LeafClaims extends ZkDriverBase<LeafClaimState> {
  protected where(st: LeafClaimState): Record<string, unknown> {
    return { url: this.url, slot: st.slot, address: st.addr.text };
  }

  protected offlineClaim(req: ClaimRequest, who: LeafClaimant, cause: unknown): Claim {
    const { addr, cacheFile } = who;
    const { workerId, highWaterMs } = readLeafCache(cacheFile);
    if (workerId === undefined) {
      throw registryError(
        'UNREACHABLE',
        `${(cause as Error).message}; and there is no cached Leaf worker ID for ${addr.text} at ${cacheFile} to start from`,
        { url: this.url, cacheFile },
        cause,
      );
    }
    if (workerId >= req.slots) throw leafTooHigh(this.url, workerId, req, who);
    const token = `leaf-offline:${cacheFile}:${randomHex(6)}`;
    this.claims.set(token, {
      ...who,
      slot: workerId,
      session: null,
      nodePath: '',
      livePath: '',
      metaPath: '',
      foreverVersion: -1,
      metaVersion: -1,
      stored: highWaterMs ?? 0,
    });
    this.opts.logger?.warn(
      { url: this.url, name: who.name, address: addr.text, workerId, cacheFile, highWaterMs: highWaterMs ?? null },
      'ZooKeeper unreachable: starting from the cached Leaf worker ID (cacheFallback=true); no cross-host check, local high-water mark only',
    );
    const hw = highWaterMs ? highWaterMs + Math.max(0, LEAF_UNREPORTED_MS - req.ttlMs) : 0;
    return { slot: workerId, token, highWaterMs: hw, releasedCleanly: false };
  }

  protected async onlineClaim(req: ClaimRequest, session: ZkSession, who: LeafClaimant): Promise<Claim> {
    const { name, addr, cacheFile } = who;
    const p = leafPaths(this.root, name, addr);
    const doing = `claiming the Leaf worker ID of ${addr.text} under ${p.forever}`;
    try {
      // The address's Flurry ephemeral node: a second live process with the same ip:port would share the worker ID.
      await this.ensureDirs(session, p.root, [p.forever, path.posix.dirname(p.live), path.posix.dirname(p.meta)]);
      const live = this.liveNodeData(req, session, { address: addr.text });
      await session.create(p.live, live, CreateMode.EPHEMERAL).catch(async (err: unknown) => {
        if (!isZk(err, ZkCode.NODE_EXISTS)) throw err;
        const holder = jsonObject((await session.getData(p.live).catch(() => null))?.data.toString('utf8'));
        throw registryError(
          'EXHAUSTED',
          `the Leaf address ${addr.text} of "${name}" is held by another live Flurry process (${typeof holder.hostname === 'string' ? holder.hostname : '?'}/${typeof holder.pid === 'number' ? holder.pid : '?'}); two processes with one ip:port would share a worker ID: give each its own address`,
          { url: this.url, address: addr.text, held: 1, holders: [holder] },
        );
      });
    } catch (err) {
      throw zkFailure(err, this.url, doing);
    }
    session.holds++;
    try {
      const [children, metaGot] = await Promise.all([session.getChildren(p.forever), session.getData(p.meta)]);
      const { nodePath, workerId, stored, foreverVersion, isNew } = await this.workerNode(session, p, addr, children);
      if (workerId >= req.slots) {
        // A new node's number says that every lower number was handed out before it: list them all.
        const listed = isNew ? await session.getChildren(p.forever).catch(() => children) : children;
        throw leafTooHigh(this.url, workerId, req, who, listed);
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
      // Meta version = node version: the last writer was Flurry (unreported window: the TTL), not Leaf (3 s).
      const lastByFlurry = !isNew && meta !== null && meta.foreverVersion === foreverVersion;
      const clean = (isNew && cachedHw === 0) || (lastByFlurry && meta.releasedCleanly && cachedHw <= stored);
      const mark = Math.max(prevHw, this.opts.clock.now());

      const st: LeafClaimState = {
        ...who,
        slot: workerId,
        session,
        nodePath,
        livePath: p.live,
        metaPath: p.meta,
        foreverVersion,
        metaVersion: metaGot ? metaGot.stat.version : -1,
        stored,
      };
      await this.writeNode(st, mark, false);
      writeLeafCache(cacheFile, workerId, mark);
      const token = `leaf:${nodePath}@${session.sessionIdHex}:${randomHex(4)}`;
      this.claims.set(token, st);
      const fields = { url: this.url, name, address: addr.text, workerId, node: nodePath, highWaterMs: prevHw };
      this.opts.logger?.info(
        { ...fields, releasedCleanly: clean, sessionTimeoutMs: session.timeoutMs },
        'claimed Leaf worker ID',
      );
      const reported =
        clean || lastByFlurry || prevHw === 0 ? prevHw : prevHw + Math.max(0, LEAF_UNREPORTED_MS - req.ttlMs);
      return { slot: workerId, token, highWaterMs: reported, releasedCleanly: clean };
    } catch (err) {
      session.holds--;
      await session.remove(p.live, -1).catch(() => undefined);
      throw zkFailure(err, this.url, doing);
    }
  }

  private async workerNode(session: ZkSession, p: { forever: string }, addr: LeafAddress, children: string[]) {
    const mine = leafNodes(children).filter((n) => n.address === addr.text);
    if (mine.length > 0) {
      if (mine.length > 1)
        this.opts.logger?.warn(
          { url: this.url, address: addr.text, nodes: mine.map((n) => n.name) },
          'several Leaf nodes for one address: using the lowest worker ID',
        );
      const nodePath = `${p.forever}/${mine[0].name}`;
      const got = await session.getData(nodePath);
      if (!got)
        throw registryError(
          'CORRUPT',
          `the Leaf node ${nodePath} at ${this.url} vanished while claiming it; something is deleting Leaf nodes`,
          { url: this.url, path: nodePath },
        );
      const stored = parseEndpoint(got.data, nodePath, this.url);
      return { nodePath, workerId: mine[0].workerId, stored, foreverVersion: got.stat.version, isNew: false };
    }
    const nodePath = await session.create(
      `${p.forever}/${addr.text}-`,
      Buffer.from(leafEndpointJson(addr, this.opts.clock.now())),
      CreateMode.PERSISTENT_SEQUENTIAL,
    );
    const parsed = parseLeafNodeName(path.posix.basename(nodePath));
    if (!parsed)
      throw registryError('CORRUPT', `ZooKeeper returned the unexpected sequential node ${nodePath}`, {
        url: this.url,
        path: nodePath,
      });
    return { nodePath, workerId: parsed.workerId, stored: 0, foreverVersion: 0, isNew: true };
  }

  /** Writes the Leaf node and the meta record in one transaction (docs/node-ids.md, "Leaf internals"). */
  protected async writeNode(
    st: LeafClaimState,
    mark: number,
    release: boolean,
    opT?: number,
    attempt = 0,
  ): Promise<void> {
    const s = st.session as ZkSession;
    const ts = Math.max(mark, st.stored);
    const meta = { highWaterMs: ts, releasedCleanly: release, foreverVersion: st.foreverVersion + 1 };
    const metaData = Buffer.from(JSON.stringify({ ...meta, updatedAtMs: this.opts.clock.now() }));
    try {
      await s.multi((tx) => {
        tx.check(st.livePath, -1);
        tx.setData(st.nodePath, Buffer.from(leafEndpointJson(st.addr, ts)), st.foreverVersion);
        if (st.metaVersion < 0) tx.create(st.metaPath, metaData, CreateMode.PERSISTENT);
        else tx.setData(st.metaPath, metaData, st.metaVersion);
        if (release) tx.remove(st.livePath, -1);
      }, opT);
    } catch (err) {
      if (isZk(err) && err.opIndex === 0) {
        const why = `the ephemeral node ${st.livePath} at ${this.url} is gone (the session expired); another process may hold ${st.addr.text} now`;
        throw registryError('LEASE_LOST', why, this.where(st));
      }
      if (isZk(err, ZkCode.BAD_VERSION) && err.opIndex === 1 && attempt < 3 && (await this.adoptOwnWrite(st, opT))) {
        return this.writeNode(st, mark, release, opT, attempt + 1);
      }
      if (isZk(err, ZkCode.BAD_VERSION, ZkCode.NO_NODE) && err.opIndex === 1) {
        throw registryError(
          'LEASE_LOST',
          `the Leaf node ${st.nodePath} at ${this.url} was ${err.zkCode === ZkCode.NO_NODE ? 'deleted' : 'rewritten by another process (a Leaf server with the same ip:port?)'} while this process held worker ID ${st.slot}; stop issuing`,
          { ...this.where(st), path: st.nodePath },
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
    st.stored = ts;
  }

  /** After a version mismatch: true (and `st` updated) when the write that moved the node on was our own, answer lost. */
  private async adoptOwnWrite(st: LeafClaimState, opT: number | undefined): Promise<boolean> {
    const s = st.session as ZkSession;
    const [node, meta] = await Promise.all([s.getData(st.nodePath, opT), s.getData(st.metaPath, opT)]);
    const m = meta ? parseMeta(meta.data) : null;
    if (!node || !meta || !m || m.foreverVersion !== node.stat.version || node.stat.version <= st.foreverVersion)
      return false;
    const msg = 'Leaf: a write of ours was committed without its answer reaching us; continuing from it';
    this.opts.logger?.info({ ...this.where(st), version: node.stat.version }, msg);
    st.foreverVersion = node.stat.version;
    st.metaVersion = meta.stat.version;
    st.stored = Math.max(st.stored, m.highWaterMs);
    return true;
  }
}

function leafPaths(prefix: string, name: string, addr: LeafAddress) {
  const root = `${prefix}/snowflake/${name}`;
  return {
    root,
    forever: `${root}/forever`,
    live: `${root}/flurry-live/${addr.text}`,
    meta: `${root}/flurry-meta/${addr.text}`,
  };
}

function leafTooHigh(url: string, workerId: number, req: ClaimRequest, c: LeafClaimant, children?: string[]): Error {
  const { name, addr } = c;
  // Every worker ID that fits is assigned, for good, to another address: list them.
  const assigned = leafNodes(children ?? []).filter((n) => n.workerId < req.slots);
  const holders = assigned.slice(0, 16).map((n) => ({ workerId: n.workerId, address: n.address }));
  const held = children ? assigned.length : undefined;
  const who = holders.map((h) => `${h.workerId}: ${h.address}`).join(', ');
  return registryError(
    'EXHAUSTED',
    `${allNodeIds(req.slots).join(' of the layout ')} taken under /snowflake/${name}/forever${held !== undefined ? ` (${held} held; ${who}${assigned.length > 16 ? ', …' : ''})` : ''}: ` +
      `${addr.text} has Leaf worker ID ${workerId}, which does not fit. Leaf never recycles worker IDs (every new ip:port takes the next sequence number, for good); ` +
      'use the zookeeper:// registry, which recycles them, or a layout with more worker bits',
    { url, name, address: addr.text, workerId, slots: req.slots, held, holders },
  );
}

type LeafAddress = ReturnType<typeof parseLeafAddress>;

/** Parses a Leaf address `ip:port` (no brackets, no `-`; port 1–65535); `FLURRY_E_REGISTRY_OPTION` unless `fail` says. */
export function parseLeafAddress(
  text: string,
  url: string,
  fail = (why: string): Error => registryError('OPTION', why, { url, address: text }),
) {
  const i = text.lastIndexOf(':');
  const ip = i > 0 ? text.slice(0, i) : '';
  const port = i > 0 ? text.slice(i + 1) : '';
  if (!/^[0-9A-Za-z._:]+$/.test(ip) || !/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
    throw fail(
      `the Leaf address "${text}" is not ip:port (an IP or host name without "-", and a port 1–65535), e.g. address=10.0.0.5:8080`,
    );
  }
  return { ip, port, text };
}

export function parseLeafNodeName(name: string) {
  const i = name.lastIndexOf('-');
  if (i <= 0 || !/^\d{10}$/.test(name.slice(i + 1))) return null;
  return { address: name.slice(0, i), workerId: Number(name.slice(i + 1)), name };
}

/** The Leaf worker nodes among `names`, by worker ID. */
export const leafNodes = (names: string[]) =>
  names.flatMap((name) => parseLeafNodeName(name) ?? []).sort((a, b) => a.workerId - b.workerId);

/** Leaf's node data: `{"ip":"…","port":"…","timestamp":<ms>}` (Jackson's field order). */
export function leafEndpointJson(addr: LeafAddress, timestamp: number): string {
  return JSON.stringify({ ip: addr.ip, port: addr.port, timestamp });
}

/** The timestamp of a Leaf worker node's JSON; `FLURRY_E_REGISTRY_CORRUPT` when the data is not Leaf's. */
export function parseEndpoint(data: Buffer, nodePath: string, url: string): number {
  const { timestamp } = jsonObject(data.toString('utf8'));
  if (typeof timestamp !== 'number' || !Number.isFinite(timestamp) || timestamp < 0) {
    throw registryError(
      'CORRUPT',
      `the Leaf node ${nodePath} at ${url} holds ${JSON.stringify(data.toString('utf8').slice(0, 200))}, not {"ip":"…","port":"…","timestamp":<ms>}; Leaf would not start from it either: restore its data (timestamp at or above the last ID issued by this address)`,
      { url, path: nodePath },
    );
  }
  return timestamp;
}

/** Flurry's own record beside a Leaf worker node (its release state), or null when absent, unreadable or not Flurry's. */
export function parseMeta(data: Buffer) {
  const { highWaterMs, releasedCleanly, foreverVersion } = jsonObject(data.toString('utf8'));
  return typeof highWaterMs === 'number' && typeof releasedCleanly === 'boolean' && typeof foreverVersion === 'number'
    ? { highWaterMs, releasedCleanly, foreverVersion }
    : null;
}
