import { CAN_BLOCK, monotonicMs, platformSleep } from '#platform';
import { randomHex } from './random.js';

/**
 * The time every Flurry component reads, injectable so tests can step wall time, pause monotonic time and make waits
 * instant: `now()` is wall time (may step either way; IDs carry it), `monotonic()` never goes back and counts while the
 * process is paused but not while the machine is suspended (hence the lease's wall deadline). See docs/clocks.md.
 */
export interface Clock {
  /** Wall-clock time, Unix epoch milliseconds (may jump). */
  now(): number;
  /** Monotonic milliseconds (arbitrary origin, never decreases). */
  monotonic(): number;
  /** Block the current thread for about `ms` milliseconds. */
  sleep(ms: number): void;
  /**
   * Optional: wait about `ms` milliseconds of this clock's time without blocking the event loop. Code that waits
   * asynchronously (a lease waiting for its high-water floor) calls it when present and waits on real timers otherwise.
   * A clock whose time moves only by hand ({@link ManualClock}) yields to the event loop and then advances itself, so
   * fake time passes instantly.
   */
  delay?(ms: number): Promise<void>;
  /**
   * Optional: set by a clock whose `monotonic()` is its own time rather than the host's ({@link ManualClock}), naming
   * that time's epoch. Expiry shared by the processes of one host (the file registry) then runs on this clock's
   * `monotonic()` under this epoch instead of the host's monotonic clock and boot ID. Leave it unset for a clock that
   * reads real time.
   */
  readonly monotonicEpoch?: string;
  /**
   * Optional: true for a clock whose `sleep()` cannot block the thread (a browser's main thread, workerd). A generator
   * on it never waits: it borrows within `maxBorrowMs`, then throws the coded error at once.
   */
  readonly nonBlocking?: boolean;
}

/**
 * Blocks the current thread for `ms` milliseconds with `Atomics.wait` (no busy loop). Allowed on Node's main thread and
 * in workers; where the thread cannot block (a browser's main thread, workerd) it returns at once (see
 * {@link Clock.nonBlocking}).
 */
export const sleepSync: (ms: number) => void = platformSleep;

/**
 * The real clock: `Date.now()`, the platform's monotonic time (`process.hrtime()` on Node.js, CLOCK_MONOTONIC on Linux,
 * one clock for every thread and process of the host; `performance.now()` elsewhere) and `Atomics.wait`. Where the
 * thread cannot block it is {@link Clock.nonBlocking}.
 */
export const systemClock: Clock = Object.freeze({
  now: () => Date.now(),
  monotonic: monotonicMs,
  sleep: sleepSync,
  ...(CAN_BLOCK ? {} : { nonBlocking: true }),
});

/** A clock driven by hand, for tests; `sleep(ms)` advances it instantly: docs/clocks.md#manualclock-and-injecting-time. */
export class ManualClock implements Clock {
  private wall: number;
  private mono: number;
  /** This clock's own monotonic epoch (see {@link Clock.monotonicEpoch}): unique per instance. */
  readonly monotonicEpoch = `manual-${randomHex(6)}`;
  onRead: ((clock: ManualClock) => void) | undefined;

  constructor(startWallMs: number = Date.UTC(2025, 0, 1), startMonoMs = 0) {
    this.wall = startWallMs;
    this.mono = startMonoMs;
  }
  now(): number {
    if (this.onRead) this.onRead(this);
    return this.wall;
  }
  monotonic(): number {
    return this.mono;
  }
  sleep(ms: number): void {
    if (ms > 0) this.advance(ms);
  }
  /** Yields to the event loop once, then advances both times by `ms` (see {@link Clock.delay}). */
  async delay(ms: number): Promise<void> {
    await new Promise<void>((r) => setImmediate(r));
    this.sleep(ms);
  }
  advance(ms: number): void {
    if (ms < 0)
      throw new RangeError('advance() takes a non-negative duration; use stepWall() to step the wall clock back');
    this.wall += ms;
    this.mono += ms;
  }
  /**
   * Steps only the wall clock (negative = backwards), as NTP or an operator would. A positive step with monotonic time
   * frozen is also what a resumed system suspend looks like (CLOCK_MONOTONIC does not count suspended time).
   */
  stepWall(deltaMs: number): void {
    this.wall += deltaMs;
  }
  setWall(unixMs: number): void {
    this.wall = unixMs;
  }
  advanceMonotonic(ms: number): void {
    this.mono += ms;
  }
}
