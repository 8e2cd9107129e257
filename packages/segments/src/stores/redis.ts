/**
 * The Redis store through `ioredis`: `INCRBY` in a Lua script that refuses an unknown key, and the
 * persistence check at open (`FLURRY_E_SEQUENCE_STORE_VOLATILE`): docs/segments.md ("Redis").
 */
import type { Redis as RedisClient, RedisOptions } from 'ioredis';
import { connectRedis, isRedisAuthError, loadClient, readRedisPersistence, volatileRedisReason } from '@flurry/core';
import { clientMissing, sequenceError } from '../errors.js';
import { allocationFrom, MAX_ID, type Allocation, type KeyInfo, type SegmentStore } from '../store.js';

/** Where and how to connect (from the URL). */
export interface RedisConnection {
  host: string;
  port: number;
  db: number;
  username?: string;
  password?: string;
  tls?: boolean;
  prefix: string;
  timeoutMs: number;
  allowVolatileStore: boolean;
  /** Wall time for the `update_time` field (the sequences' clock). */
  now: () => number;
}

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

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Connects to Redis, checks its persistence and returns the store. Rejects with
 * `FLURRY_E_SEQUENCE_CLIENT_MISSING`, `…_STORE_UNAVAILABLE`, `…_AUTH` or `…_STORE_VOLATILE`.
 */
export async function openRedisStore(c: RedisConnection, description: string): Promise<SegmentStore> {
  const { Redis: RedisCtor } = (await loadClient(
    'redis',
    `the redis store (${description})`,
    () => import('ioredis'),
    clientMissing(description),
  )) as unknown as { Redis: new (o: RedisOptions) => RedisClient };
  const unavailable = (what: string, err: unknown, key?: string, outcomeUnknown = false): Error => {
    if (isRedisAuthError(err)) {
      return sequenceError(
        'AUTH',
        `the redis store ${description} refused the credentials; check the user and password in the URL`,
        {
          store: description,
        },
      );
    }
    return sequenceError(
      'STORE_UNAVAILABLE',
      `the redis store ${description} did not complete ${what}${key !== undefined ? ` for key "${key}"` : ''} (${errText(err)})` +
        (outcomeUnknown ? '; the INCRBY may still have happened, so its range is skipped' : '') +
        (what === 'the connection'
          ? '; check that Redis runs there and is reachable from this host, then retry (an outage, not bad input)'
          : '; numbers keep coming from memory while any are buffered; retry later'),
      { store: description, outcomeUnknown, retryAfterMs: 1000, ...(key !== undefined ? { key } : {}) },
      err,
    );
  };
  const client = await connectRedis(RedisCtor, c, c.timeoutMs, 'flurry-sequences', { enableOfflineQueue: false }).catch(
    (err: unknown) => {
      throw unavailable('the connection', err);
    },
  );

  // Persistence: a Redis that can lose acknowledged writes can hand the same numbers out twice.
  if (!c.allowVolatileStore) {
    const persistence = await readRedisPersistence((name) => client.config('GET', name));
    if (!persistence.durable) {
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
  }

  const maxKey = (key: string): string => `${c.prefix}max:${key}`;
  const metaKey = (key: string): string => `${c.prefix}meta:${key}`;
  const setKey = `${c.prefix}keys`;
  let closed = false;
  const open = (): void => {
    if (closed) throw sequenceError('CLOSED', `the redis store ${description} was closed`);
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
      open();
      let r: unknown;
      try {
        r = await client.eval(
          ALLOCATE_LUA,
          2,
          maxKey(key),
          metaKey(key),
          step === undefined ? '' : String(step),
          String(c.now()),
        );
      } catch (err) {
        throw unavailable('an allocation', err, key, true);
      }
      if (r === null) {
        throw sequenceError(
          'KEY_UNKNOWN',
          `the sequence key "${key}" does not exist in the redis store ${description}; create it first ` +
            `(sequences.create or flurry sequences create), or turn autoCreate on`,
          { key },
        );
      }
      const [max, s] = r as [string, string];
      return allocationFrom(key, BigInt(max), Number(s), 'redis');
    },
    async create(key, o) {
      open();
      let r: unknown;
      try {
        r = await client.eval(
          CREATE_LUA,
          3,
          maxKey(key),
          metaKey(key),
          setKey,
          o.start.toString(),
          String(o.step),
          o.description ?? '',
          String(c.now()),
          o.description === null ? '0' : '1',
          key,
        );
      } catch (err) {
        throw unavailable('a key creation', err, key);
      }
      if (r === 0) throw sequenceError('KEY_EXISTS', `the sequence key "${key}" already exists`, { key });
      const i = await info(key);
      if (!i) throw unavailable('a key creation', new Error('the key vanished right after its creation'), key);
      return i;
    },
    async show(key) {
      open();
      try {
        return await info(key);
      } catch (err) {
        throw unavailable('a key lookup', err, key);
      }
    },
    async list() {
      open();
      try {
        const keys = (await client.smembers(setKey)).sort();
        const out: KeyInfo[] = [];
        for (const k of keys) {
          const i = await info(k);
          if (i) out.push(i);
        }
        return out;
      } catch (err) {
        throw unavailable('the key listing', err);
      }
    },
    async handBack(key, segmentEnd, firstUnused) {
      open();
      if (firstUnused >= segmentEnd || segmentEnd > MAX_ID) return false;
      try {
        const r = await client.eval(HAND_BACK_LUA, 1, maxKey(key), segmentEnd.toString(), firstUnused.toString());
        return r === 1;
      } catch (err) {
        throw unavailable('a hand-back', err, key);
      }
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
