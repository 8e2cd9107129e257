/**
 * Claiming a Leaf worker ID (the claim path of zookeeper-leaf.ts, whose module comment
 * describes the scheme): online, through Leaf's `forever` node of the address, its Flurry
 * ephemeral node and meta record; or offline from Leaf's local cache (`cacheFallback=true`).
 * Also Leaf's names and records: `ip:port` addresses, worker node names
 * (`ip:port-0000000007`), the endpoint JSON of a worker node, and Flurry's record beside it.
 */
import path from 'node:path';
import { randomHex } from '@flurry/core';
import type { Claim, ClaimRequest } from '../driver.js';
import { registryError } from '../errors.js';
import { allNodeIds, holderFields, jsonObject, type EngineDriverOptions } from './common.js';
import { CreateMode, isZk, ZkCode, type ZkSession } from './zookeeper-session.js';
import { checkSessionTimeout, zkFailure } from './zookeeper-client.js';
import { readLeafCache, writeLeafCache, type HostLock } from './zookeeper-leaf-cache.js';

/**
 * Leaf reports its timestamp every 3 s; a crashed Leaf holder may have issued this long
 * past its last report (3 s + 1 s slack). A claim after an unclean holder pads the mark by
 * `LEAF_UNREPORTED_MS - ttlMs` when the TTL is shorter.
 */
export const LEAF_UNREPORTED_MS = 4000;

export interface LeafClaimState {
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

/** Who claims: the Leaf name, this service's address, its host lock and its local cache file. */
export type LeafClaimant = Pick<LeafClaimState, 'name' | 'addr' | 'lock' | 'cacheFile'>;

export interface LeafContext {
  readonly url: string;
  readonly prefix: string;
  readonly opts: EngineDriverOptions;
  readonly claims: Map<string, LeafClaimState>;
  ensureDirs(session: ZkSession, key: string, dirs: string[], opT: number): Promise<void>;
  writeNode(st: LeafClaimState, mark: number, release: boolean | 'renew', opT: number): Promise<void>;
}

/** A claim from Leaf's local cache while ZooKeeper is unreachable (`cacheFallback=true`). */
export function offlineClaim(ctx: LeafContext, req: ClaimRequest, who: LeafClaimant, cause: unknown): Claim {
  const { name, addr, cacheFile } = who;
  const cache = readLeafCache(cacheFile);
  if (cache.workerId === undefined) {
    throw registryError(
      'UNREACHABLE',
      `${(cause as Error).message}; and there is no cached Leaf worker ID for ${addr.text} at ${cacheFile} to start from`,
      { url: ctx.url, cacheFile },
      cause,
    );
  }
  if (cache.workerId >= req.slots) throw leafTooHigh(ctx.url, cache.workerId, req, name, addr, null);
  const token = `leaf-offline:${cacheFile}:${randomHex(6)}`;
  ctx.claims.set(token, {
    ...who,
    slot: cache.workerId,
    session: null,
    nodePath: '',
    livePath: '',
    metaPath: '',
    foreverVersion: -1,
    metaVersion: -1,
    lastWritten: cache.highWaterMs ?? 0,
  });
  ctx.opts.logger?.warn(
    {
      url: ctx.url,
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

export function leafPaths(
  prefix: string,
  name: string,
  addr: LeafAddress,
): { root: string; forever: string; live: string; meta: string } {
  const root = `${prefix}/snowflake/${name}`;
  return {
    root,
    forever: `${root}/forever`,
    live: `${root}/flurry-live/${addr.text}`,
    meta: `${root}/flurry-meta/${addr.text}`,
  };
}

export async function onlineClaim(
  ctx: LeafContext,
  req: ClaimRequest,
  session: ZkSession,
  who: LeafClaimant,
): Promise<Claim> {
  const { name, addr, cacheFile } = who;
  checkSessionTimeout(session, req.ttlMs, ctx.url);
  const p = leafPaths(ctx.prefix, name, addr);
  const opT = Math.max(session.opTimeoutMs, ctx.opts.connectTimeoutMs);
  const doing = `claiming the Leaf worker ID of ${addr.text} under ${p.forever}`;
  try {
    await takeLiveNode(ctx, req, session, p, name, addr, opT);
  } catch (err) {
    throw zkFailure(err, ctx.url, doing);
  }
  session.holds++;
  try {
    const [children, metaGot] = await Promise.all([session.getChildren(p.forever, opT), session.getData(p.meta, opT)]);
    const node = await leafWorkerNode(ctx, session, p, addr, children, opT);
    const { nodePath, workerId, stored, foreverVersion, isNew } = node;
    if (workerId >= req.slots) {
      // A new node's number says that every lower number was handed out before it: list them all.
      throw leafTooHigh(
        ctx.url,
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
      ctx.opts.logger?.warn(
        { url: ctx.url, address: addr.text, cached: cache.workerId, workerId, cacheFile },
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
    const mark = Math.max(prevHw, ctx.opts.clock.now());

    const st: LeafClaimState = {
      ...who,
      slot: workerId,
      session,
      nodePath,
      livePath: p.live,
      metaPath: p.meta,
      foreverVersion,
      metaVersion: metaGot ? metaGot.stat.version : -1,
      lastWritten: stored,
    };
    await ctx.writeNode(st, mark, false, opT);
    writeLeafCache(cacheFile, workerId, mark);
    const token = `leaf:${nodePath}@${session.sessionIdHex}:${randomHex(4)}`;
    ctx.claims.set(token, st);
    ctx.opts.logger?.info(
      {
        url: ctx.url,
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
    throw zkFailure(err, ctx.url, doing);
  }
}

function leafTooHigh(
  url: string,
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
    { url: url, name, address: addr.text, workerId, slots: req.slots, held, holders },
  );
}

/**
 * The Flurry ephemeral node of the address (its directories made once per session): a
 * second live process with the same ip:port is refused, as it would share the worker ID.
 */
async function takeLiveNode(
  ctx: LeafContext,
  req: ClaimRequest,
  session: ZkSession,
  p: ReturnType<typeof leafPaths>,
  name: string,
  addr: LeafAddress,
  opT: number,
): Promise<void> {
  await ctx.ensureDirs(session, p.root, [p.forever, path.posix.dirname(p.live), path.posix.dirname(p.meta)], opT);
  try {
    await session.create(
      p.live,
      Buffer.from(
        JSON.stringify({
          ...holderFields(req.holder),
          address: addr.text,
          session: session.sessionIdHex,
          claimedAt: ctx.opts.clock.now(),
        }),
      ),
      CreateMode.EPHEMERAL,
      opT,
    );
  } catch (err) {
    if (!isZk(err, ZkCode.NODE_EXISTS)) throw err;
    const other = await session.getData(p.live, opT).catch(() => null);
    const who = jsonObject(other?.data.toString('utf8'));
    throw registryError(
      'EXHAUSTED',
      `the Leaf address ${addr.text} of "${name}" is held by another live Flurry process (${typeof who.hostname === 'string' ? who.hostname : '?'}/${typeof who.pid === 'number' ? who.pid : '?'}); two processes with one ip:port would share a worker ID: give each its own address`,
      { url: ctx.url, address: addr.text, held: 1, holders: [who] },
    );
  }
}

/** The address's `forever` node (the lowest when there are several), or a new sequential one. */
async function leafWorkerNode(
  ctx: LeafContext,
  session: ZkSession,
  p: ReturnType<typeof leafPaths>,
  addr: LeafAddress,
  children: string[],
  opT: number,
): Promise<{ nodePath: string; workerId: number; stored: number; foreverVersion: number; isNew: boolean }> {
  const mine = children
    .map(parseLeafNodeName)
    .filter((n): n is LeafNodeName => n !== null && n.address === addr.text)
    .sort((a, b) => a.workerId - b.workerId);
  if (mine.length > 0) {
    if (mine.length > 1)
      ctx.opts.logger?.warn(
        { url: ctx.url, address: addr.text, nodes: mine.map((n) => n.name) },
        'several Leaf nodes for one address: using the lowest worker ID',
      );
    const nodePath = `${p.forever}/${mine[0].name}`;
    const got = await session.getData(nodePath, opT);
    if (!got)
      throw registryError(
        'CORRUPT',
        `the Leaf node ${nodePath} at ${ctx.url} vanished while claiming it; something is deleting Leaf nodes`,
        { url: ctx.url, path: nodePath },
      );
    const stored = parseEndpoint(got.data, nodePath, ctx.url);
    return { nodePath, workerId: mine[0].workerId, stored, foreverVersion: got.stat.version, isNew: false };
  }
  const nodePath = await session.create(
    `${p.forever}/${addr.text}-`,
    Buffer.from(leafEndpointJson(addr, ctx.opts.clock.now())),
    CreateMode.PERSISTENT_SEQUENTIAL,
    opT,
  );
  const parsed = parseLeafNodeName(path.posix.basename(nodePath));
  if (!parsed)
    throw registryError('CORRUPT', `ZooKeeper returned the unexpected sequential node ${nodePath}`, {
      url: ctx.url,
      path: nodePath,
    });
  return { nodePath, workerId: parsed.workerId, stored: 0, foreverVersion: 0, isNew: true };
}

export interface LeafAddress {
  readonly ip: string;
  readonly port: string;
  /** `ip:port`, as in Leaf's node names. */
  readonly text: string;
}

/**
 * Parses and checks a Leaf address `ip:port` (IPv4, IPv6 without brackets, or a host name
 * without `-`; port 1–65535). Throws `FLURRY_E_REGISTRY_OPTION`.
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

export interface LeafNodeName {
  readonly address: string;
  readonly workerId: number;
  readonly name: string;
}

/**
 * Parses a child name of `/snowflake/{name}/forever` (`ip:port-NNNNNNNNNN`); null when it
 * is not one.
 */
export function parseLeafNodeName(name: string): LeafNodeName | null {
  const i = name.lastIndexOf('-');
  if (i <= 0 || !/^\d{10}$/.test(name.slice(i + 1))) return null;
  return { address: name.slice(0, i), workerId: Number(name.slice(i + 1)), name };
}

/** Leaf's node data: `{"ip":"…","port":"…","timestamp":<ms>}` (Jackson's field order). */
export function leafEndpointJson(addr: LeafAddress, timestamp: number): string {
  return JSON.stringify({ ip: addr.ip, port: addr.port, timestamp });
}

/**
 * The timestamp stored in a Leaf worker node (`{"ip":…,"port":…,"timestamp":…}`);
 * throws `FLURRY_E_REGISTRY_CORRUPT` naming the node when the data is not Leaf's.
 */
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

export interface LeafMeta {
  highWaterMs: number;
  releasedCleanly: boolean;
  foreverVersion: number;
}

/** Flurry's own record beside a Leaf worker node (its release state), or null when absent or not Flurry's. */
export function parseMeta(data: Buffer): LeafMeta | null {
  const m = jsonObject<LeafMeta>(data.toString('utf8')); // unreadable: treated as absent, so not clean
  return typeof m.highWaterMs === 'number' &&
    typeof m.releasedCleanly === 'boolean' &&
    typeof m.foreverVersion === 'number'
    ? { highWaterMs: m.highWaterMs, releasedCleanly: m.releasedCleanly, foreverVersion: m.foreverVersion }
    : null;
}
