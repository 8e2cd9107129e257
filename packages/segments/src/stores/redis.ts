/** The Redis store: `INCRBY` in Lua, refused on a Redis without fsync on every write: docs/segments.md ("Redis"). */
import type { Redis as RedisClient, RedisOptions } from 'ioredis';
import { connectRedis, isRedisAuthError, readRedisPersistence, volatileRedisReason } from '@flurry/core';
import { authRefused, keyUnknown, loadStoreClient, sequenceError, storeUnavailable } from '../errors.js';
import { allocationFrom, MAX_ID, type Allocation, type KeyInfo, type SegmentStore } from '../store.js';
import type { ParsedStoreUrl } from '../url.js';

const ALLOCATE_LUA = `
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local step = ARGV[1]
if step == '' then step = redis.call('HGET', KEYS[2], 'step') end
redis.call('INCRBY', KEYS[1], step)
redis.call('HSET', KEYS[2], 'update_time', ARGV[2])
return {redis.call('GET', KEYS[1]), step}
`;
const CREATE_LUA = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[2], 'step', ARGV[2], 'update_time', ARGV[4])
if ARGV[5] == '1' then redis.call('HSET', KEYS[2], 'description', ARGV[3]) end
redis.call('SADD', KEYS[3], ARGV[6])
return 1
`;
const HAND_BACK_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2]) return 1 end
return 0
`;

/** A Redis that can lose acknowledged writes can hand the same numbers out twice: refused (`…_STORE_VOLATILE`). */
async function refuseVolatile(client: RedisClient, description: string): Promise<void> {
  const persistence = await readRedisPersistence((name) => client.config('GET', name));
  if (persistence.durable) return;
  client.disconnect(false);
  throw sequenceError(
    'STORE_VOLATILE',
    volatileRedisReason(
      persistence,
      `the redis store ${description}`,
      'an INCRBY it acknowledged can be lost, so the counter comes back older and the same numbers would be issued twice',
      'allowVolatileStore: true (flurry serve --allow-volatile-store)',
    ),
    {
      store: description,
      appendonly: persistence.appendonly ?? null,
      appendfsync: persistence.appendfsync ?? null,
    },
  );
}

/** Connects to Redis and checks its persistence: `…_CLIENT_MISSING`, `…_STORE_UNAVAILABLE`, `…_AUTH`, `…_STORE_VOLATILE`. */
export async function openRedisStore(
  c: Extract<ParsedStoreUrl, { kind: 'redis' }>,
  opts: { timeoutMs: number; allowVolatileStore: boolean; now: () => number },
): Promise<SegmentStore> {
  const description = c.redacted;
  const { Redis: RedisCtor } = (await loadStoreClient('redis', description, () => import('ioredis'))) as unknown as {
    Redis: new (o: RedisOptions) => RedisClient;
  };
  const unavailable = (what: string, err: unknown, key?: string, outcomeUnknown = false): Error => {
    if (isRedisAuthError(err)) return authRefused('redis', description);
    const cause = `(${err instanceof Error ? err.message : String(err)})`;
    const skipped = outcomeUnknown ? 'the INCRBY may still have happened' : undefined;
    const connecting = what === 'the connection' ? 'Redis' : '';
    return storeUnavailable(what, { store: description, engine: 'redis', key, cause, connecting, skipped }, err);
  };
  const client = await connectRedis(RedisCtor, c, opts.timeoutMs, 'flurry-sequences', {
    enableOfflineQueue: false,
  }).catch((err: unknown) => {
    throw unavailable('the connection', err);
  });

  if (!opts.allowVolatileStore) await refuseVolatile(client, description);

  const maxKey = (key: string): string => `${c.prefix}max:${key}`;
  const metaKey = (key: string): string => `${c.prefix}meta:${key}`;
  const setKey = `${c.prefix}keys`;
  let closed = false;
  const run = async <T>(what: string, key: string | undefined, f: () => Promise<T>, unknown = false): Promise<T> => {
    if (closed) throw sequenceError('CLOSED', `the redis store ${description} was closed`);
    try {
      return await f();
    } catch (err) {
      throw unavailable(what, err, key, unknown);
    }
  };
  const info = async (key: string): Promise<KeyInfo | undefined> => {
    const [max, meta] = await Promise.all([client.get(maxKey(key)), client.hgetall(metaKey(key))]);
    if (max === null) return undefined;
    return {
      key,
      maxId: BigInt(max),
      step: Number(meta.step ?? 0),
      description: meta.description ?? null,
      updateTime: meta.update_time !== undefined ? new Date(Number(meta.update_time)) : null,
    };
  };

  return {
    kind: 'redis',
    description,
    async allocate(key: string, step?: number): Promise<Allocation> {
      const stepArg = step === undefined ? '' : String(step);
      const r = await run(
        'an allocation',
        key,
        () => client.eval(ALLOCATE_LUA, 2, maxKey(key), metaKey(key), stepArg, String(opts.now())),
        true,
      );
      if (r === null) throw keyUnknown(key, `the redis store ${description}`);
      const [max, s] = r as [string, string];
      return allocationFrom(key, BigInt(max), Number(s), 'redis');
    },
    async create(key, o) {
      const described = o.description === null ? '0' : '1';
      const args = [o.start.toString(), String(o.step), o.description ?? '', String(opts.now()), described, key];
      const r = await run('a key creation', key, () =>
        client.eval(CREATE_LUA, 3, maxKey(key), metaKey(key), setKey, ...args),
      );
      if (r === 0) throw sequenceError('KEY_EXISTS', `the sequence key "${key}" already exists`, { key });
      const i = await info(key);
      if (!i) throw unavailable('a key creation', new Error('the key vanished right after its creation'), key);
      return i;
    },
    show: (key) => run('a key lookup', key, () => info(key)),
    list: () =>
      run('the key listing', undefined, async () => {
        const out: KeyInfo[] = [];
        for (const k of (await client.smembers(setKey)).sort()) {
          const i = await info(k);
          if (i) out.push(i);
        }
        return out;
      }),
    async handBack(key, segmentEnd, firstUnused) {
      if (!closed && (firstUnused >= segmentEnd || segmentEnd > MAX_ID)) return false;
      const [end, first] = [segmentEnd.toString(), firstUnused.toString()];
      return (await run('a hand-back', key, () => client.eval(HAND_BACK_LUA, 1, maxKey(key), end, first))) === 1;
    },
    async close() {
      if (closed) return;
      closed = true;
      try {
        await client.quit();
      } catch {
        client.disconnect(false);
      }
    },
  };
}
