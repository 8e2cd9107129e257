/**
 * Node claims in memory, where there is no file system to hold them across threads (a browser, workerd:
 * `#claims` points here; on Node.js it points to `node-claims.ts`, which keeps the same in-memory fallback for a
 * process without a writable temporary directory). A second live generator for a node ID is refused within this
 * thread (isolate), and the next generator for a node starts after the last tick of the previous one.
 */
import { ErrorCode, FlurryError } from '../errors.js';

/**
 * A held claim. `previousTick` is the last tick a previous holder in this process
 * issued (or `-Infinity`).
 */
export interface NodeClaim {
  readonly key: string;
  readonly previousTick: number;
  /** Frees the claim, recording the last issued tick for the next holder. Idempotent. */
  release(lastTick: number): void;
}

/** Keys claimed in this thread (isolate). */
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

/**
 * Claims a node ID space in this thread (isolate), or throws `FLURRY_E_NODE_IN_USE` if a live generator here
 * holds it. `describe` names the node in the message.
 */
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
