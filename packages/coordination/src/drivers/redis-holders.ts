/**
 * `holders()` of the Redis driver: `SCAN` for a namespace's slot keys, then one pipeline of
 * `PTTL slot`, `GET holder` and `GET hw` per held slot (timing: docs/node-ids.md, "Listing holders").
 */
import type { Redis } from 'ioredis';
import type { HolderInfo, HolderRecord } from '../driver.js';
import { jsonObject, parseHighWaterRecord, slotNumbers, type RecordPlace } from './common.js';

/** Where {@link readRedisHolders} reads (`records`: for the message of a corrupt high-water record). */
type RedisHoldersQuery = { prefix: string; namespace: string; records: RecordPlace };

const PIPELINE_CHUNK = 256;

async function heldSlots(client: Redis, base: string): Promise<number[]> {
  const names: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${base}slot:*`, 'COUNT', 1000);
    cursor = next;
    for (const k of keys) names.push(k.slice(base.length + 'slot:'.length));
  } while (cursor !== '0');
  return slotNumbers(names);
}

/** Lists the live holders of one namespace (see the module comment for the timing method). */
export async function readRedisHolders(client: Redis, q: RedisHoldersQuery): Promise<HolderRecord[]> {
  const base = `${q.prefix}:{${q.namespace}}:`;
  const slots = await heldSlots(client, base);
  const out: HolderRecord[] = [];
  for (let i = 0; i < slots.length; i += PIPELINE_CHUNK) {
    const chunk = slots.slice(i, i + PIPELINE_CHUNK);
    const p = client.pipeline();
    for (const s of chunk) p.pttl(`${base}slot:${s}`).get(`${base}holder:${s}`).get(`${base}hw:${s}`);
    const res = (await p.exec()) ?? [];
    chunk.forEach((slot, j) => {
      const [e1, pttl] = res[3 * j] ?? [];
      const [e2, holderRaw] = res[3 * j + 1] ?? [];
      const [e3, hwRaw] = res[3 * j + 2] ?? [];
      const failed = e1 ?? e2 ?? e3;
      if (failed) throw failed;
      const left = Number(pttl);
      if (!(left > 0)) return; // expired (or freed) between SCAN and PTTL
      const v = jsonObject<HolderInfo & { ttlMs: unknown; claimedAtMs: unknown }>(
        typeof holderRaw === 'string' ? holderRaw : undefined,
      );
      const key = `${base}hw:${slot}`;
      const rec = parseHighWaterRecord(typeof hwRaw === 'string' ? hwRaw : undefined, key, q.records);
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
