/**
 * The adaptive step of segment mode: how many numbers the next fetch of a key asks for, so that a segment lasts
 * `targetSegmentMs` at the rate observed since the previous fetch. Leaf doubles its step when a segment lasted
 * under 15 minutes and halves it past 30, capped at 1,000,000; this grows at most ×16 and shrinks at most ÷2 per
 * fetch (so a burst is met within one or two fetches, and a lull does not throw the step away at once), never
 * below the stored step (Leaf's minimum), never above `maxStep`, and never below the demand of callers waiting
 * (a `batch(n)` waiting for n numbers is served by one fetch when `maxStep` allows).
 */

/** What {@link adaptStep} decides from. */
export interface StepInput {
  /** The step of the last fetch. */
  step: number;
  /** The stored step of the key: the floor. */
  minStep: number;
  /** The ceiling (`maxStep` of the options). */
  maxStep: number;
  /** How long a segment should last. */
  targetSegmentMs: number;
  /** Numbers issued since the last fetch started, and the time since then (ms). */
  consumed: number;
  elapsedMs: number;
  /** Numbers callers are waiting for right now. */
  demand: number;
}

/** The step of the next fetch (see the module comment). */
export function adaptStep(i: StepInput): number {
  const elapsed = Math.max(i.elapsedMs, 1);
  const desired = Math.ceil((i.consumed / elapsed) * i.targetSegmentMs);
  let s = i.step;
  if (desired > s) s = Math.min(s * 16, desired);
  else if (desired < s / 2) s = Math.max(Math.ceil(s / 2), desired);
  s = Math.max(s, i.minStep, Math.min(i.demand, i.maxStep));
  return Math.max(Math.min(s, i.maxStep), i.minStep);
}
