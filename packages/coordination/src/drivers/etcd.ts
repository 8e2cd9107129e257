/**
 * The etcd (v3 API) registry driver, on the pure-JavaScript `etcd3` client.
 *
 * Layout of the keys under the URL's prefix (default `/flurry`):
 * - `<prefix>/<namespace>/slots/<slot>`: the claim. Created by a transaction only if the
 *   key is absent (`createRevision == 0`) and attached to an etcd lease, so it disappears
 *   when the lease expires or is revoked. Value: JSON `{ holder, leaseId, ttlMs, claimedAtMs }`.
 * - `<prefix>/<namespace>/hw/<slot>`: the high-water record. No lease: it persists across
 *   holders. Value: JSON `{ v: 1, highWaterMs, releasedCleanly, ttlMs, holder, updatedAtMs }`.
 *
 * How each operation keeps the "never two holders" promise:
 * - **claim**: grant a lease, read the slot's high-water record, then one transaction
 *   `if create(slot) == 0 and mod(hw) == seen then put(slot, lease) + put(hw, unclean record)`.
 *   The record written at claim time has a mark of at least the claimer's wall clock, so a
 *   holder that dies before its first renewal still leaves a floor for the next one. The
 *   preferred slot is tried first, then one range read lists the taken slots and the free ones
 *   are tried from a random starting point (a lost race moves on to the next free one).
 * - **renew**: one keep-alive on the lease (a response with TTL 0 means the lease is gone) and,
 *   concurrently, a transaction `if lease(slot) == ours then put(hw)`; both must succeed. Either
 *   saying no → `FLURRY_E_LEASE_LOST`;
 *   a network failure or a timeout → `FLURRY_E_REGISTRY_UNREACHABLE`. etcd3's automatic keep-alive
 *   is never used: the lease manager drives renewals so that its fencing deadline is exact.
 * - **release**: a transaction `if lease(slot) == ours then put(hw, clean) + delete(slot)`, then the
 *   lease is revoked. If the slot is no longer ours nothing is written (a warning is logged).
 *
 * TTLs: etcd leases are whole seconds, so `ttlMs` is rounded **up** (`ceil(ttlMs / 1000)`, at
 * least 1 s), and etcd itself raises very short TTLs to its minimum (2 s with default election
 * settings). The lease on the server therefore always lives at least as long as the holder's
 * own deadline, never shorter: a dead holder's slot is reclaimed after `ceil(ttl)` seconds (or
 * etcd's minimum), never before its TTL. Renewing with a `ttlMs` longer than the TTL etcd
 * granted at claim time is refused (`FLURRY_E_REGISTRY_OPTION`): claim again instead.
 *
 * High-water marks: at every renewal the stored mark is `max(previous mark, reported,
 * holder's wall clock now)`, because after this renewal the holder may go on issuing at
 * any wall time up to its deadline; at release it is `max(previous mark, reported)` and
 * flagged clean only if this holder's reports cover the previous holder's unreported window
 * (otherwise the record stays unclean, so an expired holder's window is never forgotten).
 *
 * etcd is linearizable (Raft), so unlike Redis a leader failover cannot lose a claim or a mark
 * that a transaction acknowledged.
 *
 * URLs: `etcd://[user:pass@]host:port[,host:port…]/prefix` (`etcds://` for TLS with the system
 * CAs). Because WHATWG `URL` cannot parse several hosts, {@link createEtcdDriver} also accepts the
 * URL as a string.
 *
 * @example
 * ```ts
 * import { systemClock } from '@flurry/core';
 * import { createEtcdDriver } from './drivers/etcd.js';
 * const driver = await createEtcdDriver('etcd://127.0.0.1:2379/flurry', { clock: systemClock, connectTimeoutMs: 5000 });
 * const claim = await driver.claim({ namespace: 'orders', slots: 1024, ttlMs: 10_000, holder });
 * await driver.renew(claim, { ttlMs: 10_000, highWaterMs: Date.now() });
 * await driver.release(claim, { highWaterMs: Date.now() });
 * await driver.close();
 * ```
 */
import { randomInt } from 'node:crypto';
import {
  castGrpcError,
  Etcd3,
  EtcdAuthenticationFailedError,
  EtcdInvalidAuthTokenError,
  EtcdLeaseInvalidError,
  EtcdPermissionDeniedError,
  GRPCUnauthenticatedError,
  isRecoverableError,
  type IOptions,
  type IRequestOp,
  type ITxnResponse,
} from 'etcd3';
import { FlurryError, assertKnownOptions, optionNames, type Clock } from '@flurry/core';
import type { Claim, ClaimRequest, HolderInfo, RegistryDriver } from '../driver.js';
import { registryError } from '../errors.js';
import { checkUrlParams } from '../url.js';
import {
  checkConnectTimeout,
  clause,
  closedError,
  exhaustedError,
  HOLDERS_LISTED,
  listedHolder,
  MAX_TTL_MS,
  ownClaim,
  parseHighWaterRecord,
  previousHolder,
  readHolder,
  recordToStore,
  redactLoosely,
  unknownClaimError,
  validateClaim,
  validNamespace,
  unreachableAdvice,
  type DriverLogger,
  type DriverPhase,
  type HighWaterRecord,
  type ListedHolder,
  type PreviousHolder,
  type RecordPlace,
} from './common.js';

export type { DriverLogger } from './common.js';

/**
 * Options of {@link createEtcdDriver} (given by `openRegistry`).
 *
 * @example
 * ```ts
 * const opts: EtcdDriverOptions = { clock: systemClock, connectTimeoutMs: 5000, logger: pino() };
 * ```
 */
export interface EtcdDriverOptions {
  /** Wall time for the high-water records (the same clock as the generator). */
  clock: Clock;
  /** Bound on connecting and on each operation (claim, renew, release), in ms. */
  connectTimeoutMs: number;
  logger?: DriverLogger;
}

/**
 * A parsed `etcd://` URL (see {@link parseEtcdUrl}).
 *
 * @example
 * ```ts
 * parseEtcdUrl('etcd://127.0.0.1:2379/flurry').prefix // '/flurry'
 * ```
 */
export interface EtcdUrl {
  /** `http://h:p` or `https://h:p` for each host. */
  readonly hosts: string[];
  readonly username?: string;
  readonly password?: string;
  /** Key prefix without a trailing slash, e.g. `/flurry`. */
  readonly prefix: string;
  /** The URL with the password replaced by `***`. */
  readonly redacted: string;
}

const DEFAULT_PREFIX = '/flurry';

/**
 * Parses an etcd registry URL: `etcd://[user:pass@]host:port[,host:port…][/prefix]`, or
 * `etcds://…` for TLS. A missing port is 2379; a missing prefix is `/flurry`. Rejects with
 * `FLURRY_E_REGISTRY_URL` (the message never contains the password).
 *
 * @example
 * ```ts
 * parseEtcdUrl('etcd://root:pw@10.0.0.1:2379,10.0.0.2:2379/ids').hosts
 * // ['http://10.0.0.1:2379', 'http://10.0.0.2:2379']
 * ```
 */
export function parseEtcdUrl(url: URL | string): EtcdUrl {
  const raw = typeof url === 'string' ? url : url.href;
  const loose = redactLoosely(raw);
  const bad = (why: string): FlurryError =>
    registryError(
      'URL_INVALID',
      `invalid etcd registry URL "${loose}": ${why}. Expected etcd://[user:password@]host:port[,host:port…]/prefix ` +
        `(or etcds:// for TLS), e.g. etcd://127.0.0.1:2379/flurry.`,
      { url: loose },
    );
  const m = /^(etcds?):\/\/(?:([^/?#]*)@)?([^/?#@]+)(\/[^?#]*)?(\?[^#]*)?(#.*)?$/i.exec(raw);
  if (!m) throw bad('it does not have the form scheme://hosts/prefix');
  if (m[5] !== undefined && m[5] !== '?') {
    checkUrlParams(new URLSearchParams(m[5]), [], bad);
  }
  if (m[6] !== undefined) throw bad('it has a fragment ("#…"), which an etcd registry does not use; remove it');
  const tls = m[1].toLowerCase() === 'etcds';
  let username: string | undefined;
  let password: string | undefined;
  if (m[2] !== undefined) {
    const colon = m[2].indexOf(':');
    try {
      username = decodeURIComponent(colon < 0 ? m[2] : m[2].slice(0, colon));
      password = colon < 0 ? '' : decodeURIComponent(m[2].slice(colon + 1));
    } catch {
      throw bad('the user or password is not valid percent-encoding');
    }
    if (!username || !password) throw bad('etcd authentication needs both a user name and a password (user:password@)');
  }
  const hosts: string[] = [];
  for (const part of m[3].split(',')) {
    const hm = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)(?::(\d{1,5}))?$/.exec(part.trim());
    if (!hm) throw bad(`"${part}" is not host:port`);
    const port = hm[2] === undefined ? 2379 : Number(hm[2]);
    if (port < 1 || port > 65535) throw bad(`port ${hm[2]} is outside 1..65535`);
    hosts.push(`${tls ? 'https' : 'http'}://${hm[1]}:${port}`);
  }
  let prefix = (m[4] ?? '').replace(/\/+$/, '');
  if (prefix === '') prefix = DEFAULT_PREFIX;
  if (!/^(\/[A-Za-z0-9_.-]+)+$/.test(prefix) || !validNamespace(prefix.slice(1))) {
    throw bad(
      `the prefix "${prefix}" may only contain letters, digits, "_", ".", "-" and "/" between segments (no segment of only dots)`,
    );
  }
  const auth = username === undefined ? '' : `${encodeURIComponent(username)}:***@`;
  const redacted = `${m[1].toLowerCase()}://${auth}${m[3]}${prefix}`;
  return { hosts, username, password, prefix, redacted };
}

/** What the driver remembers about a claim it made (keyed by token). */
interface ClaimState {
  readonly leaseId: string;
  readonly namespace: string;
  readonly slot: number;
  readonly grantedTtlMs: number;
  readonly holderId: string;
  readonly prev: PreviousHolder;
}

function isAuthError(err: unknown): boolean {
  return (
    err instanceof EtcdAuthenticationFailedError ||
    err instanceof EtcdPermissionDeniedError ||
    err instanceof EtcdInvalidAuthTokenError ||
    err instanceof GRPCUnauthenticatedError
  );
}

type Policy = { execute<T>(fn: (ctx: unknown) => PromiseLike<T> | T): Promise<T> };

/**
 * The global policy for etcd3 (a cockatiel-compatible object: etcd3 only calls `execute`):
 * on a recoverable error, try the call again, which goes to the next host of the shuffled list,
 * at most once per host. Retrying is safe: every write is a compare-and-set transaction whose
 * outcome we recognise on a repeat (see `tryClaimSlot`).
 */
function retryEachHost(hosts: number): Policy {
  return {
    async execute<T>(fn: (ctx: unknown) => PromiseLike<T> | T): Promise<T> {
      let last: unknown;
      for (let i = 0; i < hosts; i++) {
        try {
          return await fn({ signal: new AbortController().signal });
        } catch (e) {
          last = e;
          if (!(e instanceof Error) || !isRecoverableError(e)) throw e;
        }
      }
      throw last;
    },
  };
}

/** Thrown instead of calling a host that failed less than a second ago. */
class HostSkippedError extends Error {}

/**
 * The per-host policy: with several hosts, a host that just failed is skipped for `openMs`
 * so calls (and keep-alive streams, which etcd3 does not retry) go to the live ones; with one
 * host it is a pass-through, so calls reach the engine again as soon as it is back.
 */
function skipFailedHost(host: string, enabled: boolean, openMs: number): Policy {
  let openUntil = 0;
  let cause = '';
  return {
    async execute<T>(fn: (ctx: unknown) => PromiseLike<T> | T): Promise<T> {
      if (enabled && Date.now() < openUntil)
        throw new HostSkippedError(`${host} skipped for ${openMs} ms after a failure (${cause})`);
      try {
        return await fn({ signal: new AbortController().signal });
      } catch (e) {
        if (enabled && e instanceof Error && isRecoverableError(e)) {
          openUntil = Date.now() + openMs;
          cause = e.message.split('\n')[0];
        }
        throw e;
      }
    },
  };
}

const enc = (s: string): Buffer => Buffer.from(s, 'utf8');

class EtcdDriver implements RegistryDriver {
  readonly kind = 'etcd';
  readonly url: string;
  private closed = false;
  private readonly states = new Map<string, ClaimState>();
  /** Where the high-water records live, for the message of a corrupt one. */
  private readonly records: RecordPlace;

  constructor(
    private readonly client: Etcd3,
    private readonly parsed: EtcdUrl,
    private readonly opts: EtcdDriverOptions,
  ) {
    this.url = parsed.redacted;
    this.records = { engine: 'etcd', url: this.url, inspect: (key) => `etcdctl get ${key}` };
  }

  private slotKey(ns: string, slot: number): string {
    return `${this.parsed.prefix}/${ns}/slots/${slot}`;
  }
  private hwKey(ns: string, slot: number): string {
    return `${this.parsed.prefix}/${ns}/hw/${slot}`;
  }
  private deadline(boundMs = this.opts.connectTimeoutMs): { deadline: number } {
    return { deadline: Date.now() + Math.min(this.opts.connectTimeoutMs, boundMs) };
  }

  private assertOpen(): void {
    if (this.closed) throw closedError('etcd', this.url);
  }

  /** Turns a client error into a coded FlurryError (never containing the password). @internal */
  toError(err: unknown, what: string, phase: DriverPhase, extra: Record<string, unknown> = {}): FlurryError {
    if (err instanceof FlurryError) return err;
    const msg = err instanceof Error ? err.message : String(err);
    const details = { url: this.url, hosts: this.parsed.hosts, operation: what, ...extra };
    if (isAuthError(err)) {
      return registryError(
        'AUTH',
        `etcd at ${this.url} refused the credentials while trying to ${what} (${msg}); check the user and password in the URL ` +
          `and that the user may read and write keys under "${this.parsed.prefix}/"`,
        details,
        err,
      );
    }
    if (err instanceof EtcdLeaseInvalidError) {
      return registryError(
        'LEASE_LOST',
        `the etcd lease is gone (${msg}) while trying to ${what}; stop issuing and claim again`,
        details,
        err,
      );
    }
    return registryError(
      'UNREACHABLE',
      `etcd at ${this.url} could not be reached while trying to ${what} (tried ${this.parsed.hosts.join(', ')}): ${clause(msg)}. ` +
        unreachableAdvice('etcd', this.parsed.hosts.join(', '), phase),
      details,
      err,
    );
  }

  private stateOf(claim: Claim): ClaimState {
    const s = ownClaim(this.states, claim);
    if (s) return s;
    throw unknownClaimError(`this etcd driver holds no claim with token "${claim.token}"`, claim, this.url);
  }

  private parseRecord(raw: Buffer | undefined, key: string): HighWaterRecord | undefined {
    return parseHighWaterRecord(raw?.toString('utf8'), key, this.records);
  }

  async claim(req: ClaimRequest): Promise<Claim> {
    this.assertOpen();
    validateClaim(req, MAX_TTL_MS);
    const ttlSec = Math.max(1, Math.ceil(req.ttlMs / 1000));
    let leaseId: string;
    let grantedTtlMs: number;
    try {
      const g = await this.client.leaseClient.leaseGrant({ TTL: ttlSec }, this.deadline());
      leaseId = g.ID;
      grantedTtlMs = Number(g.TTL) * 1000;
      if (g.error) throw new Error(g.error);
    } catch (err) {
      throw this.toError(err, `grant a ${ttlSec}s lease`, 'claim');
    }
    try {
      return await this.claimWithLease(req, leaseId, grantedTtlMs);
    } catch (err) {
      // Do not leave a lease (and possibly a slot key) behind.
      await this.client.leaseClient.leaseRevoke({ ID: leaseId }, this.deadline()).catch(() => undefined);
      if (err instanceof EtcdLeaseInvalidError) {
        throw registryError(
          'UNREACHABLE',
          `claiming a slot of "${req.namespace}" in etcd at ${this.url} took longer than its own ${grantedTtlMs / 1000}s lease (the engine or this process is too slow); try again`,
          { url: this.url, namespace: req.namespace },
          err,
        );
      }
      throw this.toError(err, `claim a slot of "${req.namespace}"`, 'claim');
    }
  }

  /**
   * Tries to take one slot with the lease. Returns the claim, or undefined if it is held.
   *
   * One read (slot + high-water record), then one write transaction that creates the slot key
   * and, in the same commit, rewrites the high-water record as *unclean* with a mark of at least
   * our wall clock: `if create(slot) == 0 and mod(hw) == seen then put(slot, lease) + put(hw)`.
   * So even a holder that dies before its first renewal leaves a floor for the next one, and
   * the record we derived our claim from cannot have changed underneath us.
   */
  private async tryClaimSlot(
    req: ClaimRequest,
    slot: number,
    leaseId: string,
    grantedTtlMs: number,
  ): Promise<Claim | undefined> {
    const hwKeyText = this.hwKey(req.namespace, slot);
    const slotKey = enc(this.slotKey(req.namespace, slot));
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
      const prev = previousHolder(this.parseRecord(hw?.value, hwKeyText));
      const first = recordToStore(prev, 0, req.ttlMs, req.holder.id, this.opts.clock, false);
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
        const token = `${leaseId}@${req.namespace}`;
        this.states.set(token, {
          leaseId,
          namespace: req.namespace,
          slot,
          grantedTtlMs,
          holderId: req.holder.id,
          prev,
        });
        return { slot, token, highWaterMs: prev.highWaterMs, releasedCleanly: prev.releasedCleanly };
      }
      view = res; // taken meanwhile, or the record changed (its holder just released): look again
    }
    return undefined;
  }

  private async listHeld(ns: string, slots: number, withValues: boolean): Promise<Map<number, Buffer>> {
    const from = `${this.parsed.prefix}/${ns}/slots/`;
    const end = `${this.parsed.prefix}/${ns}/slots0`; // '0' is the byte after '/'
    const res = await this.client.kv.range(
      { key: enc(from), range_end: enc(end), keys_only: !withValues },
      this.deadline(),
    );
    const held = new Map<number, Buffer>();
    for (const kv of res.kvs) {
      const rest = kv.key.toString('utf8').slice(from.length);
      if (!/^(0|[1-9]\d*)$/.test(rest)) continue;
      const n = Number(rest);
      if (n < slots) held.set(n, kv.value);
    }
    return held;
  }

  private async claimWithLease(req: ClaimRequest, leaseId: string, grantedTtlMs: number): Promise<Claim> {
    const pref = req.preferredSlot;
    const tried = new Set<number>();
    if (pref !== undefined && Number.isSafeInteger(pref) && pref >= 0 && pref < req.slots) {
      tried.add(pref);
      const c = await this.tryClaimSlot(req, pref, leaseId, grantedTtlMs);
      if (c) return c;
    }
    // A few rounds: each reads the taken slots once and tries the free ones; a round only ends
    // without a claim when every free slot was taken by someone else in the meantime.
    for (let round = 0; round < 3; round++) {
      const held = await this.listHeld(req.namespace, req.slots, false);
      if (held.size >= req.slots) break;
      const start = req.slots > 1 ? randomInt(0, Math.min(req.slots, 2 ** 47)) : 0;
      let attempts = 0;
      for (let i = 0; i < req.slots && attempts < req.slots - held.size; i++) {
        const slot = (start + i) % req.slots;
        if (held.has(slot) || (round === 0 && tried.has(slot))) continue;
        attempts++;
        const c = await this.tryClaimSlot(req, slot, leaseId, grantedTtlMs);
        if (c) return c;
      }
    }
    const held = await this.listHeld(req.namespace, req.slots, true);
    const holders: ListedHolder[] = [];
    for (const [slot, value] of [...held.entries()].sort((a, b) => a[0] - b[0]).slice(0, HOLDERS_LISTED)) {
      holders.push(
        listedHolder(
          slot,
          readHolder(value.toString('utf8'), (v) => (v as { holder?: HolderInfo }).holder ?? {}),
        ),
      );
    }
    throw exhaustedError(`etcd at ${this.url}`, this.url, req, held.size, holders);
  }

  async renew(claim: Claim, opts: { ttlMs: number; highWaterMs: number }): Promise<void> {
    this.assertOpen();
    const s = this.stateOf(claim);
    if (!Number.isFinite(opts.ttlMs) || opts.ttlMs < 1 || opts.ttlMs > s.grantedTtlMs) {
      throw registryError(
        'OPTION',
        `renew ttlMs ${opts.ttlMs} is outside 1..${s.grantedTtlMs}, the TTL etcd granted for this claim (etcd cannot lengthen a lease); claim again with the longer TTL`,
        { url: this.url, ttlMs: opts.ttlMs, grantedTtlMs: s.grantedTtlMs },
      );
    }
    const call = this.deadline(opts.ttlMs);
    const rec = recordToStore(s.prev, opts.highWaterMs, opts.ttlMs, s.holderId, this.opts.clock, false);
    const slotKey = enc(this.slotKey(s.namespace, s.slot));
    // The keep-alive and the fenced write run concurrently (one round trip instead of two). Both
    // must succeed: the write proves the slot key is still attached to our lease, the keep-alive
    // (answered after the renewal started) moves that lease's expiry to at least start + TTL.
    const [alive, written] = await Promise.allSettled([
      this.keepAliveOnce(s.leaseId, call.deadline),
      this.client.kv.txn(
        {
          compare: [{ key: slotKey, result: 'Equal', target: 'Lease', lease: s.leaseId }],
          success: [{ request_put: { key: enc(this.hwKey(s.namespace, s.slot)), value: enc(JSON.stringify(rec)) } }],
          failure: [{ request_range: { key: slotKey } }],
        },
        call,
      ),
    ]);
    const lost = (why: string): FlurryError => {
      this.states.delete(claim.token);
      return registryError(
        'LEASE_LOST',
        `slot ${claim.slot} of "${s.namespace}" in etcd at ${this.url} ${why}; stop issuing and claim again`,
        { url: this.url, slot: claim.slot, namespace: s.namespace },
      );
    };
    // Definite answers first: the lease is gone or the key is not ours.
    if (alive.status === 'fulfilled' && alive.value <= 0) throw lost('lost its lease (expired or revoked)');
    if (written.status === 'fulfilled' && !written.value.succeeded) {
      throw lost(
        written.value.responses[0]?.response_range?.kvs[0] ? 'is held by another lease' : 'is no longer claimed',
      );
    }
    if (alive.status === 'rejected' && alive.reason instanceof EtcdLeaseInvalidError)
      throw lost('lost its lease (expired or revoked)');
    const failure: unknown =
      alive.status === 'rejected' ? alive.reason : written.status === 'rejected' ? written.reason : undefined;
    if (failure !== undefined)
      throw this.toError(failure, `renew slot ${claim.slot} of "${s.namespace}"`, 'renew', { slot: claim.slot });
  }

  /**
   * One keep-alive round trip; resolves with the TTL etcd reports (0 = gone). etcd3 does not
   * fail streams over to another host, so a recoverable failure is retried once per host.
   */
  private async keepAliveOnce(leaseId: string, deadline: number): Promise<number> {
    let last: unknown;
    for (let i = 0; i < this.parsed.hosts.length && Date.now() < deadline; i++) {
      try {
        return await this.keepAliveOn(leaseId, deadline);
      } catch (e) {
        last = e instanceof Error ? castGrpcError(e) : e;
        if (!(last instanceof Error) || !isRecoverableError(last)) throw last;
      }
    }
    const failure: unknown = last ?? new Error('keep-alive deadline passed before it could be sent');
    throw failure;
  }

  private async keepAliveOn(leaseId: string, deadline: number): Promise<number> {
    const budget = Math.max(1, deadline - Date.now());
    const stream = await this.client.leaseClient.leaseKeepAlive({ deadline });
    return new Promise<number>((resolve, reject) => {
      let done = false;
      const finish = (f: () => void): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        try {
          stream.end();
        } catch {
          /* already closed */
        }
        f();
      };
      const timer = setTimeout(
        () => finish(() => reject(new Error(`keep-alive got no answer within ${budget} ms`))),
        Math.max(1, deadline - Date.now() + 100),
      );
      stream.on('data', (res: { TTL: string }) => finish(() => resolve(Number(res.TTL))));
      stream.on('error', (err: Error) => finish(() => reject(err)));
      stream.on('end', () => finish(() => reject(new Error('keep-alive stream ended without an answer'))));
      stream.write({ ID: leaseId });
    });
  }

  async release(claim: Claim, opts: { highWaterMs: number }): Promise<void> {
    this.assertOpen();
    const s = ownClaim(this.states, claim);
    if (!s) return; // already released or lost: nothing of ours to free
    const rec = recordToStore(s.prev, opts.highWaterMs, 0, s.holderId, this.opts.clock, true);
    const slotKey = enc(this.slotKey(s.namespace, s.slot));
    const ops: IRequestOp[] = [
      { request_put: { key: enc(this.hwKey(s.namespace, s.slot)), value: enc(JSON.stringify(rec)) } },
      { request_delete_range: { key: slotKey } },
    ];
    try {
      const res = await this.client.kv.txn(
        { compare: [{ key: slotKey, result: 'Equal', target: 'Lease', lease: s.leaseId }], success: ops, failure: [] },
        this.deadline(),
      );
      this.states.delete(claim.token);
      if (!res.succeeded) {
        this.opts.logger?.warn(
          { url: this.url, slot: s.slot, namespace: s.namespace },
          'etcd release: the slot was no longer ours (lease expired); the final high-water mark was not stored',
        );
      }
      await this.client.leaseClient.leaseRevoke({ ID: s.leaseId }, this.deadline()).catch((err: unknown) => {
        if (!(err instanceof EtcdLeaseInvalidError)) {
          this.opts.logger?.warn(
            { url: this.url, err: String(err) },
            'etcd release: could not revoke the lease; it will expire on its own',
          );
        }
      });
    } catch (err) {
      throw this.toError(err, `release slot ${claim.slot} of "${s.namespace}"`, 'release', { slot: claim.slot });
    }
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- synchronous body; `async` turns its throws into the rejections RegistryDriver callers handle
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.states.clear();
    this.client.close();
  }
}

const ETCD_DRIVER_OPTION_NAMES = optionNames<EtcdDriverOptions>({ clock: true, connectTimeoutMs: true, logger: true });

/**
 * Connects to etcd and returns a {@link RegistryDriver}. Checks the connection (and the
 * credentials) with one read before resolving; rejects with `FLURRY_E_REGISTRY_URL`,
 * `FLURRY_E_REGISTRY_UNREACHABLE` or `FLURRY_E_REGISTRY_AUTH`, naming the URL without its
 * password and the hosts that were tried.
 *
 * @example
 * ```ts
 * const driver = await createEtcdDriver(new URL('etcd://127.0.0.1:2379/flurry'), { clock: systemClock, connectTimeoutMs: 5000 });
 * ```
 */
export async function createEtcdDriver(url: URL | string, opts: EtcdDriverOptions): Promise<RegistryDriver> {
  assertKnownOptions(opts, ETCD_DRIVER_OPTION_NAMES, 'createEtcdDriver options');
  const parsed = parseEtcdUrl(url);
  checkConnectTimeout(opts.connectTimeoutMs);
  const timeout = opts.connectTimeoutMs;
  const options: IOptions = {
    hosts: parsed.hosts,
    dialTimeout: timeout,
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + timeout }),
    faultHandling: {
      host: (h: string) => skipFailedHost(h, parsed.hosts.length > 1, 1000) as never,
      global: retryEachHost(parsed.hosts.length) as never,
    },
    grpcOptions: {
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': 1000,
    },
    ...(parsed.username !== undefined
      ? {
          auth: {
            username: parsed.username,
            password: parsed.password ?? '',
            callOptions: () => ({ deadline: Date.now() + timeout }),
          },
        }
      : {}),
  };
  const client = new Etcd3(options);
  const driver = new EtcdDriver(client, parsed, opts);
  try {
    await client.kv.range(
      { key: enc(`${parsed.prefix}/`), range_end: enc(`${parsed.prefix}0`), count_only: true },
      { deadline: Date.now() + timeout },
    );
  } catch (err) {
    await driver.close();
    throw driver.toError(err, 'connect', 'connect');
  }
  opts.logger?.info({ url: parsed.redacted, hosts: parsed.hosts }, 'connected to etcd');
  return driver;
}
