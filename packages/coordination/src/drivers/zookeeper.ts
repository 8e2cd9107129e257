/** The `zookeeper://` registry driver: slots as ephemeral znodes, marks beside them (docs/node-ids.md, "ZooKeeper internals"). */
import type { Claim, ClaimRequest, HolderRecord, RegistryDriver } from '../driver.js';
import { registryError } from '../errors.js';
import {
  allNodeIds,
  checkDriverOptions,
  jsonObject,
  listedHolder,
  pickHolder,
  slotNumbers,
  type EngineDriverOptions,
} from './common.js';
import { CreateMode, isZk, ZkCode, type ZkSession } from './zookeeper-session.js';
import {
  parseZooKeeperUrl,
  ZkDriverBase,
  zkFailure,
  zkHolderRecord,
  zkTimeMs,
  type ZkClaimState,
  type ZkHoldersQuery,
} from './zookeeper-client.js';

export interface ZooKeeperClaim extends Claim {
  /** The session timeout ZooKeeper granted for this claim's session (ms, ≥ the TTL asked for). */
  readonly sessionTimeoutMs: number;
}

function parseHighWater(data: Buffer, path: string, url: string) {
  const { highWaterMs: ms, releasedCleanly: clean } = jsonObject(data.toString('utf8'));
  if (typeof ms !== 'number' || !(Number.isFinite(ms) && ms >= 0) || typeof clean !== 'boolean') {
    throw registryError(
      'CORRUPT',
      `the high-water node ${path} at ${url} holds ${JSON.stringify(data.toString('utf8').slice(0, 200))}, not {"highWaterMs":<Unix ms>,"releasedCleanly":<bool>}; set it to a mark at or above the last ID issued under this slot, with releasedCleanly false`,
      { url, path },
    );
  }
  return { highWaterMs: ms, releasedCleanly: clean };
}

/** The live holders of one namespace: `slots/<slot>` nodes with their `hw/<slot>` (docs/node-ids.md, "Listing holders"). */
async function readZkHolders(session: ZkSession, q: ZkHoldersQuery): Promise<Array<HolderRecord | undefined>> {
  const slots = slotNumbers(await session.getChildren(`${q.dir}/slots`, q.opTimeoutMs));
  return Promise.all(
    slots.map(async (slot): Promise<HolderRecord | undefined> => {
      const [node, hw] = await Promise.all([
        session.getData(`${q.dir}/slots/${slot}`, q.opTimeoutMs),
        session.getData(`${q.dir}/hw/${slot}`, q.opTimeoutMs),
      ]);
      if (!node) return undefined; // its session ended between the two reads
      const v = jsonObject(node.data.toString('utf8'));
      const mark = hw ? parseHighWater(hw.data, `${q.dir}/hw/${slot}`, q.url).highWaterMs : 0;
      const since = hw ? Math.max(0, q.now() - zkTimeMs(hw.stat.mtime)) : null;
      return zkHolderRecord(slot, pickHolder(v), v, hw?.data, since, mark);
    }),
  );
}

const HOLDERS_LISTED = 16;

interface ClaimState extends ZkClaimState {
  readonly session: ZkSession;
  readonly namespace: string;
  readonly hwPath: string;
  hwVersion: number;
}

class ZooKeeperDriver extends ZkDriverBase<ClaimState> implements RegistryDriver {
  readonly kind = 'zookeeper';
  private readonly orphans = new Set<string>();

  protected readonly noun = 'ZooKeeper slot';

  protected where(st: ClaimState): Record<string, unknown> {
    return { url: this.url, slot: st.slot, namespace: st.namespace };
  }

  async claim(req: ClaimRequest): Promise<ZooKeeperClaim> {
    this.checkClaim(req);
    const session = await this.claimSession(req.ttlMs);
    const ns = `${this.root}/${req.namespace}`;
    const slotsDir = `${ns}/slots`;
    const doing = `claiming a slot of "${req.namespace}" at ${this.url}`;
    const holderData = this.liveNodeData(req, session, { ttlMs: req.ttlMs, sessionTimeoutMs: session.timeoutMs });
    const tryCreate = async (slot: number): Promise<boolean> => {
      const path = `${slotsDir}/${slot}`;
      if (this.orphans.has(path)) return false;
      try {
        await session.create(path, holderData, CreateMode.EPHEMERAL);
        return true;
      } catch (err) {
        if (isZk(err, ZkCode.NODE_EXISTS)) return false;
        if (isZk(err, ZkCode.TIMEOUT, ZkCode.CONNECTION_LOSS)) this.cleanOrphan(session, path);
        throw err;
      }
    };
    let slot = -1;
    try {
      await this.ensureDirs(session, ns, [`${ns}/slots`, `${ns}/hw`]);
      if (req.preferredSlot !== undefined && (await tryCreate(req.preferredSlot))) slot = req.preferredSlot;
      const taken = slot < 0 ? new Set((await session.getChildren(slotsDir)).map(Number)) : new Set<number>();
      for (let n = 0; slot < 0 && n < req.slots; n++) {
        if (n !== req.preferredSlot && !taken.has(n) && (await tryCreate(n))) slot = n;
      }
    } catch (err) {
      throw zkFailure(err, this.url, doing);
    }
    if (slot < 0) throw await this.exhausted(session, req, slotsDir);

    const livePath = `${slotsDir}/${slot}`;
    const hwPath = `${ns}/hw/${slot}`;
    session.holds++;
    try {
      const prev = await this.readHw(session, hwPath);
      const st: ClaimState = {
        session,
        slot,
        namespace: req.namespace,
        livePath,
        hwPath,
        hwVersion: prev.version,
        stored: prev.highWaterMs,
      };
      // In use, with a mark no lower than now: a crash before the first renewal still leaves a correct floor.
      await this.writeHw(st, Math.max(prev.highWaterMs, this.opts.clock.now()), false);
      const token = `${livePath}@${session.sessionIdHex}`;
      this.claims.set(token, st);
      const sessionTimeoutMs = session.timeoutMs;
      const fields = { ...this.where(st), session: session.sessionIdHex, sessionTimeoutMs, ttlMs: req.ttlMs };
      this.opts.logger?.info(fields, 'claimed ZooKeeper slot');
      return { slot, token, highWaterMs: prev.highWaterMs, releasedCleanly: prev.releasedCleanly, sessionTimeoutMs };
    } catch (err) {
      session.holds--;
      await session.remove(livePath, -1).catch(() => this.cleanOrphan(session, livePath));
      throw zkFailure(err, this.url, `${doing} (slot ${slot})`);
    }
  }

  async renew(claim: Claim, opts: { ttlMs: number; highWaterMs: number }): Promise<void> {
    const st = this.held(claim, 'slot');
    const doing = `renewing slot ${claim.slot}`;
    const failing = `${doing} of "${st.namespace}"`;
    const says = {
      doing,
      failing,
      expired: `${failing} at ${this.url}: the ZooKeeper session expired, so its ephemeral node is gone and the slot may be held by another process`,
      disconnected: `${failing}: ZooKeeper at ${this.url} is unreachable (the session is disconnected and reconnecting); the lease cannot be extended`,
      notOwned: (taken: boolean) =>
        `${failing} at ${this.url}: the slot node ${st.livePath} ${taken ? 'belongs to another session' : 'no longer exists'}; the lease is lost`,
    };
    await this.renewOn(claim.token, st, st.session, opts.ttlMs, says, (opT) =>
      this.writeHw(st, Math.max(st.stored, opts.highWaterMs), false, opT),
    );
  }

  async release(claim: Claim, opts: { highWaterMs: number }): Promise<void> {
    const st = this.claims.get(claim.token);
    if (!st) return; // already released or lost: nothing of ours to free
    this.assertOpen();
    const doing = `releasing slot ${st.slot} of "${st.namespace}"`;
    const says = {
      doing,
      unreachable: `${doing}: ZooKeeper at ${this.url} is unreachable; the slot is freed when the session times out`,
      lost: 'ZooKeeper release: the slot was no longer ours; the final high-water mark was not stored',
    };
    await this.releaseOn(claim.token, st, st.session, says, (opT) =>
      this.writeHw(st, Math.max(st.stored, opts.highWaterMs), true, opT),
    );
  }

  holders(namespace: string): Promise<HolderRecord[]> {
    return this.listHolders(namespace, `${this.root}/${namespace}`, readZkHolders);
  }

  private async readHw(session: ZkSession, hwPath: string, opT?: number) {
    const got = await session.getData(hwPath, opT);
    if (!got) return { highWaterMs: 0, releasedCleanly: true, version: -1 };
    return { ...parseHighWater(got.data, hwPath, this.url), version: got.stat.version };
  }

  /** Stores max(stored, mark) by compare-and-set with a check of the slot node (removed if clean); retries when the version moved. */
  private async writeHw(st: ClaimState, mark: number, clean: boolean, opT?: number): Promise<void> {
    let target = mark;
    for (let attempt = 0; attempt < 5; attempt++) {
      const data = Buffer.from(
        JSON.stringify({ highWaterMs: target, releasedCleanly: clean, updatedAtMs: this.opts.clock.now() }),
      );
      try {
        await st.session.multi((tx) => {
          tx.check(st.livePath, -1);
          if (st.hwVersion < 0) tx.create(st.hwPath, data, CreateMode.PERSISTENT);
          else tx.setData(st.hwPath, data, st.hwVersion);
          if (clean) tx.remove(st.livePath, -1);
        }, opT);
        st.hwVersion = st.hwVersion < 0 ? 0 : st.hwVersion + 1;
        st.stored = target;
        return;
      } catch (err) {
        if (isZk(err, ZkCode.NO_NODE, ZkCode.BAD_VERSION) && err.opIndex === 0) {
          const why = `the slot node ${st.livePath} at ${this.url} no longer exists; the lease is lost`;
          throw registryError('LEASE_LOST', why, this.where(st));
        }
        if (isZk(err, ZkCode.NODE_EXISTS, ZkCode.BAD_VERSION, ZkCode.NO_NODE) && err.opIndex === 1) {
          const cur = await this.readHw(st.session, st.hwPath, opT);
          st.hwVersion = cur.version;
          target = Math.max(target, cur.highWaterMs);
          continue;
        }
        throw err;
      }
    }
    throw registryError(
      'CORRUPT',
      `the high-water node ${st.hwPath} at ${this.url} kept changing under slot ${st.slot} while this process holds it; another writer is touching it`,
      { url: this.url, path: st.hwPath },
    );
  }

  /** Removes, once the session answers, a slot node whose create timed out (it may exist, owned by us). */
  private cleanOrphan(session: ZkSession, path: string): void {
    if (this.orphans.has(path)) return;
    this.orphans.add(path);
    void (async () => {
      try {
        if (!(await session.waitConnected(this.opts.connectTimeoutMs))) return;
        const stat = await session.exists(path);
        const mine = [...this.claims.values()].some((c) => c.livePath === path && c.session === session);
        if (!mine && session.owns(stat)) await session.remove(path, -1);
      } catch {
        /* the session ends some time; its ephemeral nodes go with it */
      } finally {
        this.orphans.delete(path);
      }
    })();
  }

  private async exhausted(session: ZkSession, req: ClaimRequest, slotsDir: string): Promise<Error> {
    const held = slotNumbers(await session.getChildren(slotsDir).catch(() => [])).filter((n) => n < req.slots);
    const holders = await Promise.all(
      held.slice(0, HOLDERS_LISTED).map(async (slot) => {
        const got = await session.getData(`${slotsDir}/${slot}`).catch(() => null);
        return listedHolder(slot, jsonObject(got?.data.toString('utf8')));
      }),
    );
    const who = holders.map((h) => `${h.slot}: ${h.hostname ?? '?'}/${h.pid ?? '?'}`).join(', ');
    return registryError(
      'EXHAUSTED',
      `${allNodeIds(req.slots).join(` of "${req.namespace}" at ${this.url} `)} held (${held.length} held; ${who}${held.length > HOLDERS_LISTED ? ', …' : ''}); ` +
        'wait for a holder to release or its session to time out, or use a layout with more node bits',
      { url: this.url, namespace: req.namespace, slots: req.slots, held: held.length, holders },
    );
  }
}

export async function createZooKeeperDriver(url: URL | string, opts: EngineDriverOptions): Promise<RegistryDriver> {
  checkDriverOptions(opts, 'createZooKeeperDriver');
  const parsed = parseZooKeeperUrl(url, 'zookeeper');
  return new ZooKeeperDriver(parsed, opts).start(async (s) => {
    if (parsed.path) await s.mkdirp(parsed.path);
  });
}
