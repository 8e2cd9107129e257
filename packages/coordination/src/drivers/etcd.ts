/** The etcd v3 registry driver on `etcd3`, compare-and-set transactions: docs/node-ids.md ("etcd internals"). */
import { Etcd3, EtcdLeaseInvalidError, type IOptions, type IRequestOp, type ITxnResponse } from 'etcd3';
import type { Claim, ClaimRequest, HolderInfo, HolderRecord, RegistryDriver } from '../driver.js';
import { errorText, registryError } from '../errors.js';
import { isAuthError, keepAliveOnce, retryEachHost, skipFailedHost } from './etcd-policy.js';
import { parseEtcdUrl, type EtcdUrl } from '../url.js';
import {
  checkDriverOptions,
  EngineDriverBase,
  jsonObject,
  type EngineClaimState,
  type EngineFailure,
  type EngineDriverOptions,
  type HighWaterRecord,
} from './common.js';

type Lease = { readonly leaseId: string; readonly grantedTtlMs: number };
type ClaimState = EngineClaimState & Lease;

const enc = (s: string): Buffer => Buffer.from(s, 'utf8');

class EtcdDriver extends EngineDriverBase<ClaimState, Etcd3, EtcdUrl> implements RegistryDriver {
  readonly kind = 'etcd';
  protected readonly engineName = 'etcd';

  private key(ns: string, kind: 'slots' | 'hw', slot: number | ''): string {
    return `${this.parsed.prefix}/${ns}/${kind}/${slot}`;
  }
  private deadline(boundMs = this.opts.connectTimeoutMs): { deadline: number } {
    return { deadline: Date.now() + Math.min(this.opts.connectTimeoutMs, boundMs) };
  }

  protected override readonly detailed = { hosts: this.parsed.hosts };

  protected failure(err: unknown, what: string): EngineFailure {
    const msg = errorText(err);
    if (isAuthError(err)) {
      return [
        'AUTH',
        `etcd at ${this.url} refused the credentials while trying to ${what} (${msg}); check the user and password in the URL ` +
          `and that the user may read and write keys under "${this.parsed.prefix}/"`,
      ];
    }
    if (err instanceof EtcdLeaseInvalidError) {
      return ['LEASE_LOST', `the etcd lease is gone (${msg}) while trying to ${what}; stop issuing and claim again`];
    }
    const hosts = this.parsed.hosts.join(', ');
    return { tried: hosts, at: hosts, message: msg };
  }

  protected async claimSlot(req: ClaimRequest): Promise<Claim> {
    const ttlSec = Math.max(1, Math.ceil(req.ttlMs / 1000));
    const lease = await this.call(`grant a ${ttlSec}s lease`, 'claim', async () => {
      const g = await this.client.leaseClient.leaseGrant({ TTL: ttlSec }, this.deadline());
      if (g.error) throw new Error(g.error);
      return { leaseId: g.ID, grantedTtlMs: Number(g.TTL) * 1000 };
    });
    try {
      const tryClaim = (slot: number) => this.tryClaimSlot(req, slot, lease);
      return await this.scanClaim(req, Infinity, tryClaim, (all) => this.held(req.namespace, req.slots, all));
    } catch (err) {
      // Do not leave a lease (and possibly a slot key) behind.
      await this.client.leaseClient.leaseRevoke({ ID: lease.leaseId }, this.deadline()).catch(() => undefined);
      if (!(err instanceof EtcdLeaseInvalidError)) throw err;
      throw registryError(
        'UNREACHABLE',
        `claiming a slot of "${req.namespace}" in etcd at ${this.url} took longer than its own ${lease.grantedTtlMs / 1000}s lease (the engine or this process is too slow); try again`,
        { url: this.url, namespace: req.namespace },
        err,
      );
    }
  }

  /** Takes one slot with the lease, or undefined: `if create(slot) == 0 and mod(hw) == seen then put both`. */
  private async tryClaimSlot(req: ClaimRequest, slot: number, lease: Lease): Promise<Claim | undefined> {
    const { leaseId } = lease;
    const hwKeyText = this.key(req.namespace, 'hw', slot);
    const slotKey = enc(this.key(req.namespace, 'slots', slot));
    const hwKey = enc(hwKeyText);
    const value = enc(
      JSON.stringify({ holder: req.holder, leaseId, ttlMs: req.ttlMs, claimedAtMs: this.opts.clock.now() }),
    );
    const read: IRequestOp[] = [{ request_range: { key: slotKey } }, { request_range: { key: hwKey } }];
    // A read-only transaction: served without a Raft write.
    let view: ITxnResponse = await this.client.kv.txn({ compare: [], success: read, failure: [] }, this.deadline());
    for (let attempt = 0; attempt < 3; attempt++) {
      if (view.responses[0]?.response_range?.kvs[0]) return undefined; // held
      const hw = view.responses[1]?.response_range?.kvs[0];
      const [prev, first] = this.firstRecord(req, this.highWater(hw?.value.toString('utf8'), hwKeyText, 'etcdctl get'));
      const res: ITxnResponse = await this.client.kv.txn(
        {
          compare: [
            { key: slotKey, result: 'Equal', target: 'Create', create_revision: 0 },
            { key: hwKey, result: 'Equal', target: 'Mod', mod_revision: hw?.mod_revision ?? 0 },
          ],
          success: [
            { request_put: { key: slotKey, value, lease: leaseId } },
            { request_put: { key: hwKey, value: enc(JSON.stringify(first)) } },
          ],
          // On failure, read both back: a repeat of a call that did commit finds the slot ours.
          failure: read,
        },
        this.deadline(),
      );
      if (res.succeeded || res.responses[0]?.response_range?.kvs[0]?.lease === leaseId) {
        return this.claimed(`${leaseId}@${req.namespace}`, req, slot, prev, lease);
      }
      view = res; // taken meanwhile, or the record changed (its holder just released): look again
    }
    return undefined;
  }

  private async held(ns: string, slots: number, withHolders: boolean): Promise<Map<number, Partial<HolderInfo>>> {
    const all = await rangeBySlot(this.client, this.key(ns, 'slots', ''), this.deadline().deadline, !withHolders);
    const holder = (v: Buffer): Partial<HolderInfo> =>
      jsonObject<{ holder: HolderInfo }>(v.toString('utf8')).holder ?? {};
    return new Map([...all].filter(([n]) => n < slots).map(([n, v]) => [n, holder(v)]));
  }

  protected override checkRenewTtl(s: ClaimState, ttlMs: number): void {
    if (Number.isFinite(ttlMs) && ttlMs >= 1 && ttlMs <= s.grantedTtlMs) return;
    throw registryError(
      'OPTION',
      `renew ttlMs ${ttlMs} is outside 1..${s.grantedTtlMs}, the TTL etcd granted for this claim (etcd cannot lengthen a lease); claim again with the longer TTL`,
      { url: this.url, ttlMs, grantedTtlMs: s.grantedTtlMs },
    );
  }

  protected async renewSlot(s: ClaimState, rec: HighWaterRecord, _token: string, ttlMs: number) {
    const call = this.deadline(ttlMs);
    const slotKey = enc(this.key(s.namespace, 'slots', s.slot));
    // The keep-alive and the fenced write run concurrently; both must succeed (docs/node-ids.md, "etcd internals").
    const [alive, written] = await Promise.allSettled([
      keepAliveOnce(this.client, this.parsed.hosts.length, s.leaseId, call.deadline),
      this.client.kv.txn(
        {
          compare: [{ key: slotKey, result: 'Equal', target: 'Lease', lease: s.leaseId }],
          success: [
            { request_put: { key: enc(this.key(s.namespace, 'hw', s.slot)), value: enc(JSON.stringify(rec)) } },
          ],
          failure: [{ request_range: { key: slotKey } }],
        },
        call,
      ),
    ]);
    // Definite answers first: the lease is gone or the key is not ours.
    const leaseGone = 'lost its lease (expired or revoked)';
    if (alive.status === 'fulfilled' && alive.value <= 0) return leaseGone;
    if (written.status === 'fulfilled' && !written.value.succeeded)
      return written.value.responses[0]?.response_range?.kvs[0] ? 'is held by another lease' : 'is no longer claimed';
    if (alive.status === 'rejected' && alive.reason instanceof EtcdLeaseInvalidError) return leaseGone;
    if (alive.status === 'rejected') throw alive.reason;
    if (written.status === 'rejected') throw written.reason;
    return undefined;
  }

  protected async releaseSlot(s: ClaimState, rec: HighWaterRecord): Promise<boolean> {
    const slotKey = enc(this.key(s.namespace, 'slots', s.slot));
    const ops: IRequestOp[] = [
      { request_put: { key: enc(this.key(s.namespace, 'hw', s.slot)), value: enc(JSON.stringify(rec)) } },
      { request_delete_range: { key: slotKey } },
    ];
    const res = await this.client.kv.txn(
      { compare: [{ key: slotKey, result: 'Equal', target: 'Lease', lease: s.leaseId }], success: ops, failure: [] },
      this.deadline(),
    );
    await this.client.leaseClient.leaseRevoke({ ID: s.leaseId }, this.deadline()).catch((err: unknown) => {
      if (err instanceof EtcdLeaseInvalidError) return;
      const why = 'etcd release: could not revoke the lease; it will expire on its own';
      this.opts.logger?.warn({ url: this.url, err: String(err) }, why);
    });
    return res.succeeded;
  }

  protected disconnect(): void {
    this.client.close();
  }

  /** The live holders of one namespace (timing, ±500 ms: docs/node-ids.md, "Listing holders"). */
  protected async readHolders(namespace: string): Promise<HolderRecord[]> {
    const [client, { deadline }] = [this.client, this.deadline()];
    const [slots, marks] = await Promise.all([
      rangeBySlot(client, this.key(namespace, 'slots', ''), deadline),
      rangeBySlot(client, this.key(namespace, 'hw', ''), deadline),
    ]);
    const entries = [...slots.entries()].sort((a, b) => a[0] - b[0]);
    const out = await Promise.all(
      entries.map(async ([slot, raw]): Promise<HolderRecord | undefined> => {
        const v = jsonObject<{ holder: Partial<HolderInfo>; leaseId: string; ttlMs: number; claimedAtMs: number }>(
          raw.toString('utf8'),
        );
        if (typeof v.leaseId !== 'string') return undefined;
        let ttl: { TTL: string; grantedTTL: string };
        try {
          ttl = await client.leaseClient.leaseTimeToLive({ ID: v.leaseId }, { deadline });
        } catch (err) {
          if (err instanceof EtcdLeaseInvalidError) return undefined; // expired meanwhile
          throw err;
        }
        // TTL is truncated to whole seconds: 0 means "expires within a second", -1 means gone.
        const remaining = Number(ttl.TTL);
        const granted = Number(ttl.grantedTTL);
        if (!(remaining >= 0) || !(granted > 0)) return undefined;
        const key = this.key(namespace, 'hw', slot);
        const rec = this.highWater(marks.get(slot)?.toString('utf8'), key, 'etcdctl get');
        const holder = v.holder ?? {};
        const ours = rec !== undefined && rec.holder === holder.id;
        return {
          slot,
          holder,
          heldSinceMs: typeof v.claimedAtMs === 'number' ? v.claimedAtMs : null,
          renewedAtMs: ours ? rec.updatedAtMs : null,
          sinceRenewalMs: Math.max(0, (granted - remaining) * 1000 - ETCD_TTL_ERROR_MS),
          sinceRenewalErrorMs: ETCD_TTL_ERROR_MS,
          expiresInMs: remaining * 1000 + ETCD_TTL_ERROR_MS,
          ttlMs: typeof v.ttlMs === 'number' ? v.ttlMs : granted * 1000,
          highWaterMs: rec?.highWaterMs ?? 0,
        };
      }),
    );
    return out.filter((h): h is HolderRecord => h !== undefined);
  }
}

export async function createEtcdDriver(url: URL | string, opts: EngineDriverOptions): Promise<RegistryDriver> {
  checkDriverOptions(opts, 'createEtcdDriver');
  const parsed = parseEtcdUrl(url);
  const timeout = opts.connectTimeoutMs;
  const options: IOptions = {
    hosts: parsed.hosts,
    dialTimeout: timeout,
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + timeout }),
    faultHandling: {
      host: (h: string) => skipFailedHost(h, parsed.hosts.length > 1, 1000) as never,
      global: retryEachHost(parsed.hosts.length) as never,
    },
    grpcOptions: { 'grpc.initial_reconnect_backoff_ms': 100, 'grpc.max_reconnect_backoff_ms': 1000 },
    auth:
      parsed.username === undefined
        ? undefined
        : {
            username: parsed.username,
            password: parsed.password ?? '',
            callOptions: () => ({ deadline: Date.now() + timeout }),
          },
  };
  const client = new Etcd3(options);
  const range = { key: enc(`${parsed.prefix}/`), range_end: enc(`${parsed.prefix}0`), count_only: true };
  const check = () => client.kv.range(range, { deadline: Date.now() + timeout });
  return new EtcdDriver(client, parsed, opts).opened(check, 'connect', {}, { hosts: parsed.hosts });
}

/** Half of etcd's one-second TTL resolution: the error of the time since a renewal. */
const ETCD_TTL_ERROR_MS = 500;

/** Reads every key under `<base>` whose remainder is a slot number (`keysOnly`: without their values). */
async function rangeBySlot(
  client: Etcd3,
  base: string,
  deadline: number,
  keysOnly = false,
): Promise<Map<number, Buffer>> {
  const range = { key: enc(base), range_end: enc(base.slice(0, -1) + '0'), keys_only: keysOnly };
  const res = await client.kv.range(range, { deadline });
  const out = new Map<number, Buffer>();
  for (const kv of res.kvs) {
    const rest = kv.key.toString('utf8').slice(base.length);
    if (/^(0|[1-9]\d*)$/.test(rest)) out.set(Number(rest), kv.value);
  }
  return out;
}
