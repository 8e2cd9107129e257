/** The `zookeeper+leaf://` driver, Meituan Leaf's scheme: docs/node-ids.md ("`zookeeper+leaf://` — Meituan Leaf's scheme"). */
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Claim, ClaimRequest, HolderRecord, RegistryDriver } from '../driver.js';
import { registryError } from '../errors.js';
import { checkDriverOptions, jsonObject, pickHolder, type EngineDriverOptions } from './common.js';
import type { ZkSession } from './zookeeper-session.js';
import {
  normalizeZkPath,
  parseZooKeeperUrl,
  zkHolderRecord,
  zkTimeMs,
  type ZkHoldersQuery,
} from './zookeeper-client.js';
import { LeafClaims, parseEndpoint, leafNodes, parseLeafAddress, parseMeta } from './zookeeper-leaf-claim.js';
import { acquireHostLock, leafCacheFile, writeLeafCache } from './zookeeper-leaf-cache.js';

class LeafDriver extends LeafClaims implements RegistryDriver {
  readonly kind = 'zookeeper+leaf';

  protected readonly noun = 'Leaf worker ID';

  constructor(
    parsed: ReturnType<typeof parseZooKeeperUrl>,
    private readonly cfg: { name?: string; address?: string; cacheDir: string; cacheFallback: boolean },
    opts: EngineDriverOptions,
  ) {
    super(parsed, opts);
  }

  async claim(req: ClaimRequest): Promise<Claim> {
    this.checkClaim(req);
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
    const who = { name, addr, lock: await acquireHostLock(path.dirname(cacheFile), addr.text, this.url), cacheFile };
    try {
      let session: ZkSession;
      try {
        session = await this.claimSession(req.ttlMs);
      } catch (err) {
        if (
          !this.cfg.cacheFallback ||
          (err as { code?: unknown } | undefined)?.code !== 'FLURRY_E_REGISTRY_UNREACHABLE'
        )
          throw err;
        return this.offlineClaim(req, who, err);
      }
      return await this.onlineClaim(req, session, who);
    } catch (err) {
      who.lock.release();
      throw err;
    }
  }

  async renew(claim: Claim, opts: { ttlMs: number; highWaterMs: number }): Promise<void> {
    const st = this.held(claim, 'Leaf worker ID');
    const mark = Math.max(this.opts.clock.now(), opts.highWaterMs, st.stored);
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
      st.stored = mark;
      return;
    }
    const doing = `renewing Leaf worker ID ${st.slot} of ${st.addr.text}`;
    const says = {
      doing,
      failing: doing,
      expired: `${doing} at ${this.url}: the ZooKeeper session expired, so the ephemeral node that excludes other holders of ${st.addr.text} is gone`,
      disconnected: `${doing}: ZooKeeper at ${this.url} is unreachable (the session is disconnected and reconnecting)`,
      notOwned: (taken: boolean) =>
        `${doing}: the ephemeral node ${st.livePath} ${taken ? 'belongs to another session' : 'is gone'}; another process may hold ${st.addr.text} now`,
    };
    await this.renewOn(claim.token, st, st.session, opts.ttlMs, says, (opT) => this.writeNode(st, mark, false, opT));
    try {
      writeLeafCache(st.cacheFile, st.slot, st.stored);
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
    // The exact final mark (reported after fencing): adding `now` would make the next holder wait for nothing.
    const mark = Math.max(opts.highWaterMs, st.stored);
    try {
      writeLeafCache(st.cacheFile, st.slot, mark);
    } catch {
      /* best effort; ZooKeeper below */
    }
    if (!st.session) return void this.forget(claim.token, st);
    const doing = `releasing Leaf worker ID ${st.slot} of ${st.addr.text}`;
    const says = {
      doing,
      unreachable: `${doing}: ZooKeeper at ${this.url} is unreachable`,
      lost: 'Leaf release: the worker ID was no longer ours; the final mark was stored locally only',
    };
    await this.releaseOn(claim.token, st, st.session, says, (opT) => this.writeNode(st, mark, true, opT));
  }

  holders(namespace: string): Promise<HolderRecord[]> {
    return this.listHolders(namespace, `${this.root}/snowflake/${this.cfg.name ?? namespace}`, readLeafHolders);
  }
}

/** How recently a Leaf (Java) server must have written its node to be listed: two 3 s reports (its session: 6 s). */
const LEAF_JAVA_LIVE_MS = 6000;

/** The live holders of one Leaf name, Flurry's and Leaf (Java) servers' (docs/node-ids.md, "Listing holders"). */
async function readLeafHolders(session: ZkSession, q: ZkHoldersQuery): Promise<Array<HolderRecord | undefined>> {
  const [forever, live] = await Promise.all([
    session.getChildren(`${q.dir}/forever`, q.opTimeoutMs),
    session.getChildren(`${q.dir}/flurry-live`, q.opTimeoutMs),
  ]);
  const liveSet = new Set(live);
  const nodes = leafNodes(forever);
  return Promise.all(
    nodes.map(async (n): Promise<HolderRecord | undefined> => {
      const flurry = liveSet.has(n.address);
      const nodePath = `${q.dir}/forever/${n.name}`;
      const [node, liveNode, meta] = await Promise.all([
        session.getData(nodePath, q.opTimeoutMs),
        flurry ? session.getData(`${q.dir}/flurry-live/${n.address}`, q.opTimeoutMs) : Promise.resolve(null),
        session.getData(`${q.dir}/flurry-meta/${n.address}`, q.opTimeoutMs),
      ]);
      if (!node) return undefined;
      const since = Math.max(0, q.now() - zkTimeMs(node.stat.mtime));
      if (!flurry && since >= LEAF_JAVA_LIVE_MS) return undefined; // an address not served now
      const m = meta && parseMeta(meta.data);
      // Meta record matching the node's version: the last writer was Flurry (released or ended), not Leaf.
      if (!flurry && m?.foreverVersion === node.stat.version) return undefined;
      if (flurry && !liveNode) return undefined; // its session ended meanwhile
      const v = jsonObject(liveNode?.data.toString('utf8'));
      const mark = Math.max(parseEndpoint(node.data, nodePath, q.url), m?.highWaterMs ?? 0);
      const holder = flurry ? { address: n.address, ...pickHolder(v) } : { address: n.address, version: 'leaf' };
      return zkHolderRecord(n.workerId, holder, v, meta?.data, since, mark);
    }),
  );
}

/** Opens the `zookeeper+leaf://` driver; connects once (UNREACHABLE unless `cacheFallback=true`). */
export async function createLeafDriver(url: URL | string, opts: EngineDriverOptions): Promise<RegistryDriver> {
  checkDriverOptions(opts, 'createLeafDriver');
  const parsed = parseZooKeeperUrl(url, 'zookeeper+leaf', ['name', 'address', 'cacheDir', 'cacheFallback']);
  const bad = parsed.bad;
  const name = parsed.params.get('name') ?? undefined;
  if (name !== undefined) {
    if (name === '') throw bad("name= is empty; give Leaf's leaf.name, e.g. name=orders");
    normalizeZkPath(`/${name}`, 'the Leaf name', parsed.display);
  }
  const address = parsed.params.get('address') ?? undefined;
  if (address !== undefined) parseLeafAddress(address, parsed.display, (why) => bad(why, { address }));
  const cacheDir = parsed.params.get('cacheDir') ?? tmpdir();
  if (!path.isAbsolute(cacheDir)) throw bad(`cacheDir must be an absolute directory, got "${cacheDir}"`);
  const fb = parsed.params.get('cacheFallback') ?? 'false';
  if (fb !== 'true' && fb !== 'false') throw bad(`cacheFallback must be true or false, got "${fb}"`);
  const cacheFallback = fb === 'true';
  const offline = (err: Error): void =>
    opts.logger?.warn(
      { url: parsed.display, err: err.message },
      'ZooKeeper unreachable at start-up; claims will start from the local Leaf cache (cacheFallback=true)',
    );
  return new LeafDriver(parsed, { name, address, cacheDir, cacheFallback }, opts).start(
    async () => {},
    cacheFallback ? offline : undefined,
  );
}
