/** One {@link ManagedLease}: `held` → `lost` → re-acquired, or `released`; docs/node-ids.md ("Lease internals"). */
import { EventEmitter } from 'node:events';
import { FlurryError, type Clock, type NodeLease } from '@flurry/core';
import { claimAndSettle, deadlineFrom, type ClaimOutcome, type LeaseContext } from './claim.js';
import type { Claim } from './driver.js';
import { RegistryErrorCode, registryError, toFlurry, withTimeout } from './errors.js';
import type { TickGrid } from './floor.js';
import type { LeaseState, LeaseStats, ManagedLease } from './lease-types.js';
import type { SlotMap } from './slot-map.js';

/** How often the deadline timer wakes while a lease is held, to notice a suspend (see docs/node-ids.md). */
const SUSPEND_POLL_MS = 250;

/** One claim as its generators see it: renewals update its deadlines; `-Infinity` for good once it ends. */
interface ClaimView extends NodeLease {
  deadline: number;
  wallDeadline: number;
  notBeforeMs: number;
}

type Settled = Extract<ClaimOutcome, { ok: true }>;

export class Lease extends EventEmitter implements ManagedLease {
  node!: Readonly<Record<string, number>>;
  deadline!: number;
  wallDeadline!: number;
  notBeforeMs!: number;
  slot!: number;
  epoch = 0;
  state: LeaseState = 'held';
  readonly stats: LeaseStats = { renewals: 0, renewFailures: 0, lost: 0, reacquired: 0 };
  readonly namespace: string;

  private claim: Claim | undefined;
  private readonly sources = new Set<() => number>();
  private failures = 0;
  private busy: Promise<boolean> | undefined;
  private loopTimer: NodeJS.Timeout | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;
  /** A claim lost locally that may still be ours in the engine: released before re-claiming. */
  private staleClaim: Claim | undefined;
  /** Highest mark ever reported or carried, for reports after re-acquisition. */
  private carried = 0;
  private current!: ClaimView;
  /** Monotonic start of the last successful claim or renewal: the next renewal is due `renewIntervalMs` after it. */
  private lastStartMono!: number;

  constructor(
    private readonly ctx: LeaseContext,
    private readonly map: SlotMap,
    settled: Settled,
    private readonly tick: TickGrid | undefined, // for the floor wait of re-acquisitions
  ) {
    super();
    this.namespace = map.namespace;
    this.adopt(settled);
  }

  private adopt({ claim, floor, start }: Settled): void {
    this.claim = claim;
    this.slot = claim.slot;
    this.node = Object.freeze(this.map.toNode(claim.slot));
    this.notBeforeMs = floor;
    this.deadline = deadlineFrom(this.ctx, start.mono);
    this.wallDeadline = deadlineFrom(this.ctx, start.wall);
    const { node, deadline, wallDeadline } = this;
    this.current = { node, notBeforeMs: floor, deadline, wallDeadline, attach: (fn) => this.attach(fn) };
    this.lastStartMono = start.mono;
  }

  private setDeadlines(deadline: number, wallDeadline: number): void {
    this.deadline = deadline;
    this.wallDeadline = wallDeadline;
    this.current.deadline = deadline;
    this.current.wallDeadline = wallDeadline;
  }

  private get clock(): Clock {
    return this.ctx.opts.clock;
  }

  attach(highWater: () => number): void {
    if (typeof highWater !== 'function')
      throw registryError('OPTION', 'attach() takes a function returning the highest issued Unix ms');
    this.sources.add(highWater);
  }

  localHighWater(): number {
    let m = 0;
    for (const f of this.sources) {
      try {
        const v = f();
        if (typeof v === 'number' && v > m) m = v;
      } catch {
        /* a closed source: ignore */
      }
    }
    return m;
  }

  valid(): boolean {
    return this.clock.monotonic() < this.deadline && this.clock.now() < this.wallDeadline;
  }

  msUntilDeadline(): number {
    if (this.deadline === Infinity) return Infinity;
    return Math.max(0, Math.min(this.deadline - this.clock.monotonic(), this.wallDeadline - this.clock.now()));
  }

  private expired(tail: string, details: Record<string, unknown>): FlurryError {
    const where = `node ${JSON.stringify(this.node)} (slot ${this.slot} of ${this.namespace} at ${this.ctx.driver.url})`;
    const why = !(this.clock.monotonic() < this.deadline)
      ? 'passed its fencing deadline without a successful renewal'
      : `passed its wall-clock fencing deadline by ${Math.round(this.clock.now() - this.wallDeadline)} ms while its monotonic deadline had not (the machine was suspended, or the wall clock stepped forward); the registry may have expired it`;
    return registryError('LEASE_LOST', `the lease of ${where} ${why}${tail}`, details);
  }

  forGenerator(floorMs = 0): NodeLease {
    if (floorMs > this.current.notBeforeMs) this.current.notBeforeMs = floorMs; // (deprecated)
    return this.current;
  }

  /** The mark reported at release, after fencing: exactly the highest issued (or the inherited floor). */
  private releaseMark(): number {
    return Math.max(this.localHighWater(), this.notBeforeMs);
  }

  start(): void {
    this.armDeadlineTimer();
    this.schedule(this.renewalDue());
  }

  /** `renewIntervalMs` after the last successful renewal's start (counting from its end could pass the deadline). */
  private renewalDue(): number {
    return Math.max(0, this.ctx.opts.renewIntervalMs - (this.clock.monotonic() - this.lastStartMono));
  }

  private schedule(delay: number): void {
    if (!this.ctx.opts.autoRenew || this.state === 'released') return;
    clearTimeout(this.loopTimer);
    this.loopTimer = setTimeout(
      () => {
        void this.renewNow().then(() => {
          if (this.state === 'released') return;
          const backoff = Math.min(this.ctx.opts.renewIntervalMs, 25 * 2 ** Math.min(this.failures, 10));
          this.schedule(this.failures === 0 ? this.renewalDue() : backoff);
        });
      },
      Math.max(0, Math.round(delay)),
    );
    this.loopTimer.unref?.();
  }

  /** Fences the lease (`'lost'`) once either deadline passed, waking every {@link SUSPEND_POLL_MS} to notice a suspend. */
  private armDeadlineTimer(): void {
    clearTimeout(this.deadlineTimer);
    if (!this.ctx.opts.autoRenew || this.state !== 'held' || !Number.isFinite(this.deadline)) return;
    const epoch = this.epoch;
    const wait = Math.min(this.msUntilDeadline() + 1, SUSPEND_POLL_MS);
    this.deadlineTimer = setTimeout(() => {
      if (this.epoch !== epoch || this.state !== 'held') return;
      if (!this.valid()) {
        const details = { slot: this.slot, namespace: this.namespace };
        this.markLost(this.expired('; issuing is fenced until it is re-acquired', details));
        if (!this.busy) this.schedule(0);
      } else {
        this.armDeadlineTimer();
      }
    }, Math.ceil(wait));
    this.deadlineTimer.unref?.();
  }

  private markLost(err: FlurryError): void {
    if (this.state !== 'held') return;
    this.setDeadlines(-Infinity, -Infinity);
    this.state = 'lost';
    this.stats.lost++;
    this.staleClaim = this.claim;
    this.claim = undefined;
    this.ctx.opts.logger?.warn(
      { err, slot: this.slot, namespace: this.namespace, url: this.ctx.driver.url },
      'flurry node lease lost; issuing fenced, re-acquiring',
    );
    this.emit('lost', err);
  }

  renewNow(): Promise<boolean> {
    if (this.state === 'released') return Promise.resolve(false);
    if (this.busy) return this.busy;
    const p = (async () => {
      if (this.state === 'held' && !this.valid()) this.markLost(this.expired('', { slot: this.slot }));
      if (this.state === 'held') return this.renewOnce();
      if (this.state === 'lost') return this.reacquireOnce();
      return false;
    })().finally(() => {
      this.busy = undefined;
    });
    this.busy = p;
    return p;
  }

  private failed(err: FlurryError, doing: string): void {
    this.failures++;
    this.stats.renewFailures++;
    this.ctx.opts.logger?.warn(
      { err, slot: this.slot, namespace: this.namespace, url: this.ctx.driver.url, failures: this.failures },
      `flurry node lease: ${doing} failed`,
    );
    this.emit('renew-failed', err);
  }

  private async renewOnce(): Promise<boolean> {
    const claim = this.claim as Claim;
    const epoch = this.epoch;
    const { ttlMs, renewIntervalMs } = this.ctx.opts;
    const startedAt = this.clock.monotonic();
    const wallStartedAt = this.clock.now();
    // Nothing this holder issues before its deadline is below this mark − (ttl − margin).
    const mark = Math.max(this.localHighWater(), this.clock.now(), this.notBeforeMs, this.carried);
    try {
      await withTimeout(
        this.ctx.driver.renew(claim, { ttlMs, highWaterMs: mark }),
        Math.max(renewIntervalMs, 50),
        'renewal',
      );
    } catch (e) {
      if (this.epoch !== epoch || this.state !== 'held') return false;
      const err = toFlurry(e, this.ctx.driver.url, 'renew the lease');
      this.failed(err, 'renewal');
      if (err.code === RegistryErrorCode.LEASE_LOST && !this.ctx.staticIds) this.markLost(err);
      return false;
    }
    if (this.epoch !== epoch || this.state !== 'held') return false;
    const d = deadlineFrom(this.ctx, startedAt);
    const wd = deadlineFrom(this.ctx, wallStartedAt);
    if (this.clock.monotonic() >= d || this.clock.now() >= wd) {
      // Answered too late (a slow engine, a pause, a suspend) to extend anything: the deadline timer fences.
      const url = this.ctx.driver.url;
      const which =
        this.clock.monotonic() >= d
          ? 'fencing deadline'
          : 'wall-clock fencing deadline (the machine was suspended while it was in flight?)';
      this.failed(registryError('UNREACHABLE', `${url}: the renewal answered after its ${which}`, { url }), 'renewal');
      return false;
    }
    // The wall deadline from the latest renewal's start, even if lower than before: after
    // a wall clock stepped back the old one would be too late by the size of the step.
    this.setDeadlines(Math.max(d, this.deadline), wd);
    this.lastStartMono = startedAt;
    if (mark > this.carried) this.carried = mark;
    this.failures = 0;
    this.stats.renewals++;
    this.armDeadlineTimer();
    const { deadline, wallDeadline } = this;
    this.emit('renewed', { startedAt, deadline, wallStartedAt, wallDeadline, highWaterMs: mark });
    return true;
  }

  private async reacquireOnce(): Promise<boolean> {
    const { driver, opts } = this.ctx;
    // Free the claim we lost locally if the engine still has it as ours: we are fenced, so
    // the mark we report is exact and the next holder (likely us) need not wait.
    if (this.staleClaim) {
      try {
        await withTimeout(
          driver.release(this.staleClaim, { highWaterMs: this.releaseMark() }),
          Math.max(opts.renewIntervalMs, 50),
          'release',
        );
        this.staleClaim = undefined;
      } catch (e) {
        if (e instanceof FlurryError && e.code === RegistryErrorCode.LEASE_LOST) this.staleClaim = undefined;
        // Otherwise keep it and try again next time; claiming may still succeed elsewhere.
      }
    }
    const out = await claimAndSettle(this.ctx, {
      namespace: this.namespace,
      slots: this.map.slots,
      preferredSlot: this.slot,
      tick: this.tick,
      renewTimeoutMs: Math.max(opts.renewIntervalMs, 50),
      atLeastMs: () => Math.max(this.localHighWater(), this.notBeforeMs, this.carried),
      alive: () => this.state === 'lost',
    });
    if (!out.ok) {
      if (out.step !== 'abandoned' && this.state === 'lost') this.failed(this.reacquireError(out), 're-acquisition');
      return false;
    }
    const { claim, floor } = out;
    const oldNode = this.node;
    this.carried = Math.max(this.carried, floor);
    this.setDeadlines(-Infinity, -Infinity); // (already, since the loss) the old claim's view stays fenced
    this.adopt(out);
    const newNode = this.node;
    this.epoch++;
    this.failures = 0;
    this.state = 'held';
    this.stats.reacquired++;
    this.ctx.cache?.write(driver.url, this.namespace, this.map.slots, claim.slot);
    this.armDeadlineTimer();
    opts.logger?.info(
      { slot: claim.slot, node: newNode, namespace: this.namespace, url: driver.url, notBeforeMs: floor },
      'flurry node lease re-acquired',
    );
    const changed = Object.keys(newNode).some((k) => newNode[k] !== oldNode[k]);
    if (changed) this.emit('node-changed', newNode);
    this.emit('reacquired', this);
    return true;
  }

  private reacquireError(out: Extract<ClaimOutcome, { ok: false }>): FlurryError {
    const url = this.ctx.driver.url;
    if (out.step === 'claim') return toFlurry(out.cause, url, 're-acquire a node ID');
    if (out.step === 'settle') return toFlurry(out.cause, url, 'record the high-water mark after re-acquiring');
    return registryError('UNREACHABLE', `${url}: re-acquiring took longer than the TTL minus the margin`, { url });
  }

  async release(): Promise<void> {
    if (this.state === 'released') return;
    const wasHeld = this.state === 'held';
    this.state = 'released';
    this.setDeadlines(-Infinity, -Infinity);
    clearTimeout(this.loopTimer);
    clearTimeout(this.deadlineTimer);
    if (this.busy) await this.busy.catch(() => undefined);
    this.ctx.onReleased(this);
    // The reacquire loop may have swapped claims while we waited: prefer the current one.
    const target = this.claim ?? (wasHeld ? undefined : this.staleClaim);
    this.claim = undefined;
    this.staleClaim = undefined;
    if (!target) return;
    const mark = this.releaseMark();
    try {
      await withTimeout(
        this.ctx.driver.release(target, { highWaterMs: mark }),
        Math.max(this.ctx.opts.ttlMs, 1000),
        'release',
      );
    } catch (e) {
      const err = toFlurry(e, this.ctx.driver.url, 'release the lease');
      // A lease that was already lost has nothing to hand over cleanly: best effort only.
      if (err.code === RegistryErrorCode.LEASE_LOST || !wasHeld) return;
      this.ctx.opts.logger?.warn(
        { err, slot: this.slot },
        'flurry node lease: release failed; the node ID frees itself when its TTL expires',
      );
      throw err;
    }
  }
}
