/**
 * Whether a Redis server keeps what it acknowledged (`appendonly yes` and `appendfsync always`), for the segment store
 * and the lease registry, which refuse a server that is not durable unless the user accepted the risk. No Redis client
 * here: the caller passes its `CONFIG GET`.
 */

/** The persistence settings a Redis server reported (see {@link readRedisPersistence}). */
export interface RedisPersistence {
  /** The server's `appendonly` (undefined when it could not be read). */
  readonly appendonly: string | undefined;
  /** The server's `appendfsync` (undefined when it could not be read). */
  readonly appendfsync: string | undefined;
  /** Why `CONFIG GET` failed (e.g. a managed Redis that disables CONFIG), or undefined. */
  readonly checkError: string | undefined;
  /** True only for `appendonly yes` with `appendfsync always`: every acknowledged write is on disk. */
  readonly durable: boolean;
}

/**
 * Reads `appendonly` and `appendfsync` through `configGet` (the client's `CONFIG GET name`, resolving to its `[name,
 * value]` reply). Never rejects: a failed read is reported in `checkError` and counts as not durable.
 */
export async function readRedisPersistence(
  configGet: (parameter: string) => Promise<unknown>,
): Promise<RedisPersistence> {
  const value = async (name: string): Promise<string | undefined> => {
    const reply = await configGet(name);
    return Array.isArray(reply) && typeof reply[1] === 'string' ? reply[1] : undefined;
  };
  let appendonly: string | undefined;
  let appendfsync: string | undefined;
  let checkError: string | undefined;
  try {
    appendonly = await value('appendonly');
    appendfsync = await value('appendfsync');
  } catch (err) {
    checkError = err instanceof Error ? err.message : String(err);
  }
  return {
    appendonly,
    appendfsync,
    checkError,
    durable: checkError === undefined && appendonly === 'yes' && appendfsync === 'always',
  };
}

/**
 * The explanation of a refusal of a Redis that is not durable: what the server runs with (or why it could not be
 * checked), what a lost write costs (`loses`), how to configure it, and how to accept the risk (`allowance`).
 */
export function volatileRedisReason(p: RedisPersistence, subject: string, loses: string, allowance: string): string {
  return (
    (p.checkError !== undefined
      ? `cannot check the persistence of ${subject} (CONFIG GET failed: ${p.checkError})`
      : `${subject} runs with appendonly ${p.appendonly ?? '?'} and appendfsync ${p.appendfsync ?? '?'}`) +
    `: Redis acknowledges a write before it is on disk, so after a crash, a restart or a failover it can come back ` +
    `without writes it acknowledged: ${loses}. Configure appendonly yes and appendfsync always ` +
    `(CONFIG SET appendonly yes; CONFIG SET appendfsync always; and in redis.conf), or accept the risk with ${allowance}`
  );
}
