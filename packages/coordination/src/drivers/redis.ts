/** The Redis registry driver on `ioredis`, one Lua script per operation: docs/node-ids.md ("`redis://` — Redis"). */
import { Redis } from 'ioredis';
import {
  isRedisAuthError,
  randomHex,
  readRedisPersistence,
  connectRedis,
  volatileRedisReason,
  type FlurryLogger,
} from '@flurry/core';
import type { Claim, ClaimRequest, HolderInfo, HolderRecord, RegistryDriver } from '../driver.js';
import { errorText, registryError, withTimeout } from '../errors.js';
import { parseRedisUrl, type RedisUrl } from '../url.js';
import {
  checkDriverOptions,
  EngineDriverBase,
  HOLDERS_LISTED,
  listedHolder,
  preferredSlot,
  randomStart,
  jsonObject,
  slotNumbers,
  engineError,
  type EngineClaimState,
  type EngineFailure,
  type EngineDriverOptions,
  type HighWaterRecord,
} from './common.js';

const MGET_CHUNK = 512;

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

type ScriptClient = Redis &
  Record<'flurryClaim' | 'flurryRenew' | 'flurryRelease', (...keysAndArgs: (string | number)[]) => Promise<unknown>>;

class RedisDriver extends EngineDriverBase<EngineClaimState, ScriptClient, RedisUrl> implements RegistryDriver {
  readonly kind = 'redis';
  protected readonly engineName = 'Redis';

  private key(ns: string, kind: 'slot' | 'holder' | 'hw', slot: number): string {
    return `${this.parsed.prefix}:{${ns}}:${kind}:${slot}`;
  }

  private keys(ns: string, slot: number): [slot: string, holder: string, hw: string] {
    return [this.key(ns, 'slot', slot), this.key(ns, 'holder', slot), this.key(ns, 'hw', slot)];
  }

  protected failure(err: unknown, what: string): EngineFailure {
    return redisFailure(this.parsed, err, what);
  }

  /** Takes one slot (the claim script, only if the high-water record is still the one read), or undefined. */
  private async tryClaimSlot(req: ClaimRequest, slot: number, token: string): Promise<Claim | undefined> {
    const keys = this.keys(req.namespace, slot);
    const holderJson = JSON.stringify({ ...req.holder, ttlMs: req.ttlMs, claimedAtMs: this.opts.clock.now() });
    const [held, hw] = await this.client.mget(keys[0], keys[2]);
    if (held !== null) return undefined;
    let seen = hw ?? '';
    for (let attempt = 0; attempt < 3; attempt++) {
      const [prev, first] = this.firstRecord(req, this.highWater(seen, keys[2], 'GET'));
      const args = [token, req.ttlMs, holderJson, seen, JSON.stringify(first)];
      const [outcome, current] = (await this.client.flurryClaim(...keys, ...args)) as [number, string?];
      if (Number(outcome) === 1) return this.claimed(token, req, slot, prev, {});
      if (Number(outcome) !== 2) return undefined; // held
      seen = current ?? ''; // the previous holder just released: derive from its final record
    }
    return undefined;
  }

  /** One pass over all slots from a random start, MGET in chunks, trying the free ones (stops at the first claim). */
  protected async claimSlot(req: ClaimRequest): Promise<Claim> {
    const ns = req.namespace;
    const token = `${randomHex(16)}@${ns}`;
    const pref = preferredSlot(req);
    const first = pref === undefined ? undefined : await this.tryClaimSlot(req, pref, token);
    if (first) return first;
    const start = randomStart(req.slots);
    let held = 0;
    const heldSlots: number[] = [];
    for (let offset = 0; offset < req.slots; offset += MGET_CHUNK) {
      const slots: number[] = [];
      for (let i = offset; i < Math.min(req.slots, offset + MGET_CHUNK); i++) slots.push((start + i) % req.slots);
      const values = await this.client.mget(...slots.map((s) => this.key(ns, 'slot', s)));
      for (let i = 0; i < slots.length; i++) {
        const c = values[i] === null ? await this.tryClaimSlot(req, slots[i], token) : undefined;
        if (c) return c;
        held++;
        if (heldSlots.length < HOLDERS_LISTED) heldSlots.push(slots[i]);
      }
    }
    heldSlots.sort((a, b) => a - b);
    const infos = heldSlots.length ? await this.client.mget(...heldSlots.map((s) => this.key(ns, 'holder', s))) : [];
    const holders = heldSlots.map((slot, i) => listedHolder(slot, jsonObject(infos[i])));
    throw this.exhausted(req, held, holders);
  }

  protected async renewSlot(s: EngineClaimState, rec: HighWaterRecord, token: string, ttlMs: number) {
    const keys = this.keys(s.namespace, s.slot);
    const ours = Number(await this.client.flurryRenew(...keys, token, ttlMs, JSON.stringify(rec))) === 1;
    return ours ? undefined : 'expired or is held by another token';
  }

  protected async releaseSlot(s: EngineClaimState, rec: HighWaterRecord, token: string): Promise<boolean> {
    return Number(await this.client.flurryRelease(...this.keys(s.namespace, s.slot), token, JSON.stringify(rec))) === 1;
  }

  protected disconnect(): void {
    this.client.disconnect(false);
  }

  protected async readHolders(namespace: string): Promise<HolderRecord[]> {
    const base = `${this.parsed.prefix}:{${namespace}}:`;
    const names: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await this.client.scan(cursor, 'MATCH', `${base}slot:*`, 'COUNT', 1000);
      cursor = next;
      for (const k of keys) names.push(k.slice(base.length + 'slot:'.length));
    } while (cursor !== '0');
    const slots = slotNumbers(names);
    const out: HolderRecord[] = [];
    for (let i = 0; i < slots.length; i += 256) {
      const chunk = slots.slice(i, i + 256);
      const p = this.client.pipeline();
      for (const s of chunk) p.pttl(`${base}slot:${s}`).get(`${base}holder:${s}`).get(`${base}hw:${s}`);
      const res = (await p.exec()) ?? [];
      const failed = res.find(([e]) => e)?.[0];
      if (failed) throw failed;
      chunk.forEach((slot, j) => {
        const [pttl, holderRaw, hwRaw] = res.slice(3 * j, 3 * j + 3).map(([, v]) => v);
        const left = Number(pttl);
        if (!(left > 0)) return; // expired (or freed) between SCAN and PTTL
        const v = jsonObject<HolderInfo & { ttlMs: unknown; claimedAtMs: unknown }>(
          typeof holderRaw === 'string' ? holderRaw : undefined,
        );
        const rec = this.highWater(typeof hwRaw === 'string' ? hwRaw : undefined, `${base}hw:${slot}`, 'GET');
        const ttlMs = typeof v.ttlMs === 'number' ? v.ttlMs : null;
        const { ttlMs: _t, claimedAtMs, ...holder } = v;
        out.push({
          slot,
          holder,
          heldSinceMs: typeof claimedAtMs === 'number' ? claimedAtMs : null,
          renewedAtMs: rec !== undefined && rec.holder === holder.id ? rec.updatedAtMs : null,
          sinceRenewalMs: ttlMs === null ? null : Math.max(0, ttlMs - left),
          sinceRenewalErrorMs: ttlMs === null ? null : 1,
          expiresInMs: left,
          ttlMs,
          highWaterMs: rec?.highWaterMs ?? 0,
        });
      });
    }
    return out;
  }
}

/** Selects the URL's database; `FLURRY_E_REGISTRY_URL` naming the server's range when it has no such database. */
async function checkDatabase(client: ScriptClient, parsed: RedisUrl, timeoutMs: number): Promise<void> {
  try {
    await client.select(parsed.db);
  } catch (err) {
    if (!/DB index is out of range|invalid DB index/i.test(errorText(err))) throw err;
    let count: number | undefined;
    try {
      const reply = (await withTimeout(client.config('GET', 'databases'), timeoutMs, 'CONFIG GET')) as unknown[];
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

/** Refuses a Redis that can lose acknowledged writes, as the segment store does, unless `allowVolatile=true`. */
async function checkPersistence(client: ScriptClient, parsed: RedisUrl, logger?: FlurryLogger): Promise<void> {
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

/** Connects to Redis (commands fail fast while disconnected); `FLURRY_E_REGISTRY_VOLATILE` for a volatile one. */
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
    const details = { url: parsed.redacted, operation: 'connect', host: parsed.host, port: parsed.port };
    const c = { what: 'connect', phase: 'connect' as const, details };
    throw engineError('Redis', parsed.redacted, err, c, (e) => redisFailure(parsed, e, 'connect'));
  })) as ScriptClient;
  client.options.enableOfflineQueue = false;
  opts.logger?.info({ url: parsed.redacted }, 'connected to Redis');
  return new RedisDriver(client, parsed, opts);
}

function redisFailure(parsed: RedisUrl, err: unknown, what: string): EngineFailure {
  const msg = errorText(err).split('\n')[0];
  const at = `${parsed.host}:${parsed.port}`;
  if (!isRedisAuthError(err)) return { tried: `${at}, db ${parsed.db}`, at, message: msg };
  return [
    'AUTH',
    `Redis at ${parsed.redacted} refused the credentials while trying to ${what} (${msg}); check the user and password in the URL ` +
      `and that the user may run EVAL, GET, SET, MGET, PEXPIRE, DEL, SCAN and PTTL on "${parsed.prefix}:*" keys`,
  ];
}
