import { CAN_BLOCK, monotonicMs, platformSleep } from '#platform';
import { randomHex } from './random.js';

/**
 * The time every Flurry component reads, injectable so tests can step wall time, pause monotonic time and make waits
 * instant (docs/clocks.md#the-clock-interface).
 */
export interface Clock {
  /** Wall-clock Unix ms: may step either way; IDs carry it. */
  now(): number;
  /**
   * Monotonic ms (arbitrary origin): never goes back, counts while the process is paused but not while the machine is
   * suspended (hence the lease's wall deadline).
   */
  monotonic(): number;
  /** Block the current thread for about `ms` milliseconds. */
  sleep(ms: number): void;
  /**
   * Optional: wait about `ms` of this clock's time without blocking the event loop (asynchronous waits use it when
   * present, else real timers); {@link ManualClock} yields once, then advances itself.
   */
  delay?(ms: number): Promise<void>;
  /**
   * Optional: names the epoch of a `monotonic()` that is the clock's own time ({@link ManualClock}); the file
   * registry's host-shared expiry then runs on it, not on the host's monotonic clock and boot ID. Unset for real time.
   */
  readonly monotonicEpoch?: string;
  /** Optional: `sleep()` cannot block the thread (a browser's main thread, workerd); a generator never waits on it. */
  readonly nonBlocking?: boolean;
}

/** Blocks the thread for `ms` (`Atomics.wait`); returns at once where it may not block ({@link Clock.nonBlocking}). */
export const sleepSync: (ms: number) => void = platformSleep;

/**
 * The real clock: `Date.now()`, the platform's monotonic time (`process.hrtime()` on Node.js: one CLOCK_MONOTONIC for
 * every thread and process of the host; `performance.now()` elsewhere) and `Atomics.wait`.
 */
export const systemClock: Clock = Object.freeze({
  now: () => Date.now(),
  monotonic: monotonicMs,
  sleep: sleepSync,
  ...(CAN_BLOCK ? {} : { nonBlocking: true }),
});

/** A clock driven by hand, for tests (`sleep(ms)` advances it): docs/clocks.md#manualclock-and-injecting-time. */
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
