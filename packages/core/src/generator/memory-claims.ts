/** Node claims in this thread's memory: `#claims` without a file system (browser, workerd); node-claims.ts's fallback. */
import { ErrorCode, FlurryError } from '../errors.js';

/** A held claim; `previousTick` is the last tick a previous holder in this process issued (or `-Infinity`). */
export interface NodeClaim {
  readonly key: string;
  readonly previousTick: number;
  /** Frees the claim, recording the last issued tick for the next holder. Idempotent. */
  release(lastTick: number): void;
}

const memoryClaims = new Set<string>();
const memoryLast = new Map<string, number>();

/** A claim held in this thread's memory (also node-claims.ts's fallback); `inUse` makes the error if it is held. */
export function memoryClaim(key: string, inUse: () => FlurryError): NodeClaim {
  if (memoryClaims.has(key)) throw inUse();
  memoryClaims.add(key);
  const previousTick = memoryLast.get(key) ?? Number.NEGATIVE_INFINITY;
  let released = false;
  return {
    key,
    previousTick,
    release(tick: number) {
      if (released) return;
      released = true;
      if (Number.isFinite(tick)) memoryLast.set(key, Math.max(previousTick, tick));
      memoryClaims.delete(key);
    },
  };
}

/** Claims a node ID space in this thread (isolate), or throws `FLURRY_E_NODE_IN_USE`. */
export function claimNode(key: string, describe: string, lastTick: () => number): NodeClaim {
  void lastTick; // read only where a thread can exit without releasing (node-claims.ts)
  return memoryClaim(
    key,
    () =>
      new FlurryError(
        ErrorCode.NODE_IN_USE,
        `Another live generator in this runtime already issues IDs as ${describe}; two would repeat IDs. Share one generator, give each generator its own node ID, or close() the other first.`,
        { node: describe, key },
      ),
  );
}
