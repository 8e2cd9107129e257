/**
 * The Redis registry driver, on `ioredis`.
 *
 * Keys (the `{namespace}` hash tag keeps one namespace's keys in one Redis Cluster slot, so
 * the scripts below stay single-slot):
 * - `<prefix>:{<namespace>}:slot:<n>`: the claim, value = this holder's random token,
 *   written with `SET … NX PX ttl`.
 * - `<prefix>:{<namespace>}:holder:<n>`: JSON holder info beside it, same TTL.
 * - `<prefix>:{<namespace>}:hw:<n>`: the high-water record (JSON `{ v: 1, highWaterMs,
 *   releasedCleanly, ttlMs, holder, updatedAtMs }`), **no TTL**: it persists across holders.
 *
 * Operations (each one Lua script, so atomic on the server):
 * - **claim**: read the slot's high-water record, then `SET slot token NX PX ttl` (+ holder
 *   info) and, in the same script, rewrite the record as *unclean* with a mark of at least the
 *   claimer's wall clock, only if the record is still the one read (a holder that dies before
 *   its first renewal still leaves a floor). The preferred slot is tried first; then the slot
 *   keys are read with `MGET` in chunks from a random starting point and the free ones are
 *   tried (a lost race moves on to the next free one).
 * - **renew**: `if GET slot == token then PEXPIRE slot/holder ttl; SET hw record` → else
 *   `FLURRY_E_LEASE_LOST`.
 * - **release**: `if GET slot == token then SET hw record (clean); DEL slot holder`.
 * The stored marks follow the same rule as the etcd driver: at renewal `max(previous, reported,
 * wall clock now)`, at release `max(previous, reported)`, clean only when this holder's reports
 * cover the previous holder's unreported window.
 *
 * **What Redis cannot promise** (unlike ZooKeeper and etcd, which only acknowledge a write once
 * a quorum has it):
 * - Replication is asynchronous. A primary can acknowledge a claim (or a renewal, or a
 *   high-water record) and fail before a replica has it; the promoted replica then has no such
 *   key, and a second process can claim the same node ID while the first still holds it.
 * - Fencing bounds that window only if the promotion takes longer than the lease TTL: the old
 *   holder's next renewal fails (token mismatch) and it stops issuing at its local deadline,
 *   at most one TTL after its last successful renewal. A faster failover lets two holders issue
 *   under one node ID at the same time.
 * - The high-water mark can be lost the same way, and with it the protection against a new
 *   holder whose clock is behind. It is also lost on a restart unless Redis persists every
 *   write (`appendonly yes` with `appendfsync always`); with `everysec`, up to a second of
 *   claims and marks can vanish on a crash.
 * - Key expiry follows the Redis server's wall clock: a server clock stepping forward expires
 *   leases early.
 * Use Redis for node IDs only when those risks are acceptable (one primary, persistence on,
 * failover slower than the TTL), or prefer etcd or ZooKeeper.
 *
 * URLs: `redis://[[user]:password@]host:port[/db]`, `rediss://…` for TLS; the key prefix is
 * `flurry` unless `?prefix=name` is given.
 */
import { Redis } from 'ioredis';
import {
  FlurryError,
  isRedisAuthError,
  randomBelow,
  randomHex,
  readRedisPersistence,
  connectRedis,
  volatileRedisReason,
  type FlurryLogger,
} from '@flurry/core';
import type { Claim, ClaimRequest, HolderRecord, RegistryDriver } from '../driver.js';
import { registryError } from '../errors.js';
import { readRedisHolders } from './redis-holders.js';
import { parseRedisUrl, type RedisUrl } from './redis-url.js';
import {
  checkDriverOptions,
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
  unknownClaimError,
  validateClaim,
  unreachableAdvice,
  type DriverPhase,
  type EngineDriverOptions,
  type HighWaterRecord,
  type PreviousHolder,
  type RecordPlace,
} from './common.js';

const MGET_CHUNK = 512;

interface ClaimState {
  readonly namespace: string;
  readonly slot: number;
  readonly holderId: string;
  readonly prev: PreviousHolder;
}

/**
 * KEYS: slot, holder, hw. ARGV: token, ttlMs, holderJson, the hw record the caller read ('' if
 * none), the new hw record. → {1} when the slot is ours (now, or already by a repeated call),
 * {0} when it is held, {2, current record} when the record changed since the caller read it.
 */
const CLAIM_LUA = `
local cur = redis.call('GET', KEYS[1])
if cur == ARGV[1] then return {1} end
if cur then return {0} end
local hw = redis.call('GET', KEYS[3]) or ''
if hw ~= ARGV[4] then return {2, hw} end
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {0} end
redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[2])
redis.call('SET', KEYS[3], ARGV[5])
return {1}
`;
/** KEYS: slot, holder, hw. ARGV: token, ttlMs, hwJson. → 1 when ours (extended, mark stored), 0 otherwise. */
const RENEW_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
  redis.call('SET', KEYS[3], ARGV[3])
  return 1
end
return 0
`;
/** KEYS: slot, holder, hw. ARGV: token, hwJson. → 1 when ours (mark stored, slot freed), 0 otherwise. */
const RELEASE_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[3], ARGV[2])
  redis.call('DEL', KEYS[1], KEYS[2])
  return 1
end
return 0
`;

type ScriptClient = Redis & {
  flurryClaim(
    slot: string,
    holder: string,
    hw: string,
    token: string,
    ttl: number,
    holderJson: string,
    seenHw: string,
    newHw: string,
  ): Promise<[number, string?]>;
  flurryRenew(slot: string, holder: string, hw: string, token: string, ttl: number, hwJson: string): Promise<number>;
  flurryRelease(slot: string, holder: string, hw: string, token: string, hwJson: string): Promise<number>;
};

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

class RedisDriver implements RegistryDriver {
  readonly kind = 'redis';
  readonly url: string;
  private closed = false;
  private readonly states = new Map<string, ClaimState>();
  /** Where the high-water records live, for the message of a corrupt one. */
  private readonly records: RecordPlace;

  constructor(
    private readonly client: ScriptClient,
    private readonly parsed: RedisUrl,
    private readonly opts: EngineDriverOptions,
  ) {
    this.url = parsed.redacted;
    this.records = { engine: 'Redis', url: this.url, inspect: (key) => `GET ${key}` };
  }

  private key(ns: string, kind: 'slot' | 'holder' | 'hw', slot: number): string {
    return `${this.parsed.prefix}:{${ns}}:${kind}:${slot}`;
  }

  /** The keys every script takes: slot, holder, hw. */
  private keys(ns: string, slot: number): [slot: string, holder: string, hw: string] {
    return [this.key(ns, 'slot', slot), this.key(ns, 'holder', slot), this.key(ns, 'hw', slot)];
  }

  private assertOpen(): void {
    if (this.closed) throw closedError('Redis', this.url);
  }

  private stateOf(claim: Claim): ClaimState {
    const s = ownClaim(this.states, claim);
    if (s) return s;
    throw unknownClaimError('this Redis driver holds no claim with that token', claim, this.url);
  }

  private parseRecord(raw: string | null | undefined, key: string): HighWaterRecord | undefined {
    return parseHighWaterRecord(raw, key, this.records);
  }

  async claim(req: ClaimRequest): Promise<Claim> {
    this.assertOpen();
    validateClaim(req, MAX_TTL_MS);
    const token = `${randomHex(16)}@${req.namespace}`;
    try {
      return await this.claimWithToken(req, token);
    } catch (err) {
      throw redisError(this.parsed, err, `claim a slot of "${req.namespace}"`, 'claim');
    }
  }

  /**
   * Tries to take one slot. Returns the claim, or undefined if it is held. Reads the slot's
   * high-water record, then one script takes the slot (`SET NX PX`) and, atomically with it,
   * rewrites the record as *unclean* with a mark of at least our wall clock — only if the record
   * is still the one we read. So even a holder that dies before its first renewal leaves a floor.
   */
  private async tryClaimSlot(req: ClaimRequest, slot: number, token: string): Promise<Claim | undefined> {
    const ns = req.namespace;
    const keys = this.keys(ns, slot);
    const holderJson = JSON.stringify({ ...req.holder, ttlMs: req.ttlMs, claimedAtMs: this.opts.clock.now() });
    const [held, hw] = await this.client.mget(keys[0], keys[2]);
    if (held !== null) return undefined;
    let seen = hw ?? '';
    for (let attempt = 0; attempt < 3; attempt++) {
      const prev = previousHolder(this.parseRecord(seen, keys[2]));
      const first = recordToStore(prev, 0, req.ttlMs, req.holder.id, this.opts.clock, false);
      const res = await this.client.flurryClaim(...keys, token, req.ttlMs, holderJson, seen, JSON.stringify(first));
      const outcome = Number(res[0]);
      if (outcome === 1) {
        this.states.set(token, { namespace: ns, slot, holderId: req.holder.id, prev });
        return { slot, token, highWaterMs: prev.highWaterMs, releasedCleanly: prev.releasedCleanly };
      }
      if (outcome !== 2) return undefined; // held
      seen = res[1] ?? ''; // the previous holder just released: derive from its final record
    }
    return undefined;
  }

  private async claimWithToken(req: ClaimRequest, token: string): Promise<Claim> {
    const ns = req.namespace;
    const pref = req.preferredSlot;
    if (pref !== undefined && Number.isSafeInteger(pref) && pref >= 0 && pref < req.slots) {
      const c = await this.tryClaimSlot(req, pref, token);
      if (c) return c;
    }
    const start = req.slots > 1 ? randomBelow(Math.min(req.slots, 2 ** 47)) : 0;
    let held = 0;
    const heldSlots: number[] = [];
    // One pass over all slots from a random start, MGET in chunks, trying the free ones.
    for (let offset = 0; offset < req.slots; offset += MGET_CHUNK) {
      const slots: number[] = [];
      for (let i = offset; i < Math.min(req.slots, offset + MGET_CHUNK); i++) slots.push((start + i) % req.slots);
      const values = await this.client.mget(...slots.map((s) => this.key(ns, 'slot', s)));
      for (let i = 0; i < slots.length; i++) {
        if (values[i] === null) {
          const c = await this.tryClaimSlot(req, slots[i], token);
          if (c) return c;
        }
        held++;
        if (heldSlots.length < HOLDERS_LISTED) heldSlots.push(slots[i]);
      }
    }
    heldSlots.sort((a, b) => a - b);
    const infos =
      heldSlots.length > 0 ? await this.client.mget(...heldSlots.map((s) => this.key(ns, 'holder', s))) : [];
    const holders = heldSlots.map((slot, i) => listedHolder(slot, readHolder(infos[i] ?? '{}')));
    throw exhaustedError(`Redis at ${this.url}`, this.url, req, held, holders);
  }

  async renew(claim: Claim, opts: { ttlMs: number; highWaterMs: number }): Promise<void> {
    this.assertOpen();
    const s = this.stateOf(claim);
    if (!Number.isSafeInteger(opts.ttlMs) || opts.ttlMs < 1 || opts.ttlMs > MAX_TTL_MS) {
      throw registryError('OPTION', `renew ttlMs must be an integer in 1..${MAX_TTL_MS} (got ${String(opts.ttlMs)})`, {
        ttlMs: opts.ttlMs,
      });
    }
    const rec = recordToStore(s.prev, opts.highWaterMs, opts.ttlMs, s.holderId, this.opts.clock, false);
    let ok: number;
    try {
      ok = Number(
        await this.client.flurryRenew(...this.keys(s.namespace, s.slot), claim.token, opts.ttlMs, JSON.stringify(rec)),
      );
    } catch (err) {
      throw redisError(this.parsed, err, `renew slot ${claim.slot} of "${s.namespace}"`, 'renew', { slot: claim.slot });
    }
    if (ok !== 1) {
      this.states.delete(claim.token);
      throw registryError(
        'LEASE_LOST',
        `slot ${claim.slot} of "${s.namespace}" in Redis at ${this.url} expired or is held by another token; stop issuing and claim again`,
        { url: this.url, slot: claim.slot, namespace: s.namespace },
      );
    }
  }

  async release(claim: Claim, opts: { highWaterMs: number }): Promise<void> {
    this.assertOpen();
    const s = ownClaim(this.states, claim);
    if (!s) return; // already released or lost
    const rec = recordToStore(s.prev, opts.highWaterMs, 0, s.holderId, this.opts.clock, true);
    let ok: number;
    try {
      ok = Number(await this.client.flurryRelease(...this.keys(s.namespace, s.slot), claim.token, JSON.stringify(rec)));
    } catch (err) {
      throw redisError(this.parsed, err, `release slot ${claim.slot} of "${s.namespace}"`, 'release', {
        slot: claim.slot,
      });
    }
    this.states.delete(claim.token);
    if (ok !== 1) {
      this.opts.logger?.warn(
        { url: this.url, slot: s.slot, namespace: s.namespace },
        'Redis release: the slot was no longer ours (lease expired); the final high-water mark was not stored',
      );
    }
  }

  async holders(namespace: string): Promise<HolderRecord[]> {
    this.assertOpen();
    try {
      return await readRedisHolders(this.client, { prefix: this.parsed.prefix, namespace, records: this.records });
    } catch (err) {
      throw redisError(this.parsed, err, `list the holders of "${namespace}"`, 'connect');
    }
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- synchronous body; `async` turns its throws into the rejections RegistryDriver callers handle
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.states.clear();
    this.client.disconnect(false);
  }
}

/**
 * Selects the URL's database; a server without it (`ERR DB index is out of range`) gives `FLURRY_E_REGISTRY_URL`
 * naming the database and, when `CONFIG GET databases` answers, the range the server has.
 */
async function checkDatabase(client: ScriptClient, parsed: RedisUrl, timeoutMs: number): Promise<void> {
  try {
    await client.select(parsed.db);
  } catch (err) {
    if (!/DB index is out of range|invalid DB index/i.test(errorText(err))) throw err;
    let count: number | undefined;
    try {
      const reply = (await Promise.race([
        client.config('GET', 'databases'),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), timeoutMs).unref()),
      ])) as unknown[];
      const n = Number(reply[1]);
      if (Number.isInteger(n) && n > 0) count = n;
    } catch {
      // CONFIG may be disabled (managed Redis): the SELECT error is enough.
    }
    const has = count === undefined ? 'refused SELECT ' + parsed.db : `has ${count} (0 to ${count - 1})`;
    throw registryError(
      'URL_INVALID',
      `the Redis registry URL ${parsed.redacted} names database ${parsed.db}, which the server at ${parsed.host}:${parsed.port} does not have (it ${has}). ` +
        `Use a database the server has (e.g. /0) or raise "databases" in its configuration.`,
      {
        url: parsed.redacted,
        part: `/${parsed.db}`,
        db: parsed.db,
        ...(count !== undefined ? { databases: count } : {}),
      },
      err,
    );
  }
}

/**
 * Refuses a Redis that can lose acknowledged writes (not `appendonly yes` + `appendfsync always`, or CONFIG
 * disabled so it cannot be checked), as the segment store does and with the same explanation, unless the URL
 * says `allowVolatile=true`; then it is accepted with a warning in the log.
 */
async function checkPersistence(
  client: ScriptClient,
  parsed: RedisUrl,
  logger: FlurryLogger | undefined,
): Promise<void> {
  const persistence = await readRedisPersistence((name) => client.config('GET', name));
  if (persistence.durable) return;
  const allowed = `${parsed.redacted}${parsed.redacted.includes('?') ? '&' : '?'}allowVolatile=true`;
  const reason = volatileRedisReason(
    persistence,
    `the Redis registry ${parsed.redacted}`,
    'claims and high-water marks can be lost, so a second process could take a node ID still in use, or a new ' +
      'holder whose clock is behind could issue IDs already issued: the same ID twice',
    `allowVolatile=true in the registry URL (${allowed})`,
  );
  const details = {
    url: parsed.redacted,
    appendonly: persistence.appendonly ?? null,
    appendfsync: persistence.appendfsync ?? null,
  };
  if (!parsed.allowVolatile) throw registryError('VOLATILE', reason, details);
  logger?.warn(details, `accepted because the URL says allowVolatile=true: ${reason}`);
}

/**
 * Connects to Redis and returns a {@link RegistryDriver}. Commands fail fast instead of
 * queueing while disconnected (no offline queue once connected, no per-command retries, a
 * command timeout of `connectTimeoutMs`): the lease manager owns the retry policy. Rejects with
 * `FLURRY_E_REGISTRY_URL`, `FLURRY_E_REGISTRY_UNREACHABLE`, `FLURRY_E_REGISTRY_AUTH` or
 * `FLURRY_E_REGISTRY_VOLATILE` (a Redis that can lose acknowledged writes, without
 * `?allowVolatile=true`), naming the URL without its password.
 */
export async function createRedisDriver(url: URL | string, opts: EngineDriverOptions): Promise<RegistryDriver> {
  checkDriverOptions(opts, 'createRedisDriver');
  const parsed = parseRedisUrl(url);
  const timeoutMs = opts.connectTimeoutMs;
  const client = (await connectRedis(
    Redis,
    parsed,
    timeoutMs,
    'flurry-registry',
    {
      enableReadyCheck: true,
      scripts: {
        flurryClaim: { lua: CLAIM_LUA, numberOfKeys: 3 },
        flurryRenew: { lua: RENEW_LUA, numberOfKeys: 3 },
        flurryRelease: { lua: RELEASE_LUA, numberOfKeys: 3 },
      },
    },
    (err) => opts.logger?.warn({ url: parsed.redacted, err: errorText(err) }, 'Redis connection error'),
    async (c) => {
      // ioredis sends SELECT at connect but only emits its failure as an event and carries on in database 0:
      // select again and refuse a database the server does not have instead of writing somewhere else.
      await checkDatabase(c as ScriptClient, parsed, timeoutMs);
      await checkPersistence(c as ScriptClient, parsed, opts.logger);
    },
  ).catch((err: unknown) => {
    throw redisError(parsed, err, 'connect', 'connect', { host: parsed.host, port: parsed.port });
  })) as ScriptClient;
  client.options.enableOfflineQueue = false;
  opts.logger?.info({ url: parsed.redacted }, 'connected to Redis');
  return new RedisDriver(client, parsed, opts);
}

/** Turns a client error into a coded FlurryError (never containing the password). */
function redisError(
  parsed: RedisUrl,
  err: unknown,
  what: string,
  phase: DriverPhase,
  extra: Record<string, unknown> = {},
): FlurryError {
  if (err instanceof FlurryError) return err;
  const msg = errorText(err);
  const details = { url: parsed.redacted, operation: what, ...extra };
  if (isRedisAuthError(err)) {
    return registryError(
      'AUTH',
      `Redis at ${parsed.redacted} refused the credentials while trying to ${what} (${msg.split('\n')[0]}); check the user and password in the URL ` +
        `and that the user may run EVAL, GET, SET, MGET, PEXPIRE, DEL, SCAN and PTTL on "${parsed.prefix}:*" keys`,
      details,
      err,
    );
  }
  return registryError(
    'UNREACHABLE',
    `Redis at ${parsed.redacted} could not be reached while trying to ${what} (tried ${parsed.host}:${parsed.port}, db ${parsed.db}): ` +
      `${clause(msg.split('\n')[0])}. ${unreachableAdvice('Redis', `${parsed.host}:${parsed.port}`, phase)}`,
    details,
    err,
  );
}
