/** `static:N` and `k8s:`: uniqueness is the operator's; the mark is kept on disk (docs/node-ids.md, "`static:N` and `k8s:`"). */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { assertKnownOptions, optionNames, type Clock } from '@flurry/core';
import type { Claim, ClaimRequest, HolderInfo, HolderRecord, RegistryDriver } from '../driver.js';
import { errorText, registryError } from '../errors.js';
import type { StaticAssignment } from '../lease-types.js';
import { makeDirLevelsSync, writeFileAtomic } from '../state-dir.js';

/** Options of {@link createStaticDriver}. */
export interface StaticDriverOptions {
  kind: 'static' | 'k8s';
  /** The slot (node ID) given by hand or derived from the pod name. */
  slot: number;
  /** Where the number came from, for messages (e.g. `static:3`, `HOSTNAME=orders-3`). */
  source: string;
  /** Directory for the local high-water file; no persistence when undefined. */
  stateDir?: string;
  clock: Clock;
}

/** The StatefulSet pod ordinal in `$POD_NAME`, else `$HOSTNAME` (`orders-12` → 12); `…_STATIC_NODE` without one. */
export function k8sOrdinal(env: NodeJS.ProcessEnv = process.env): { slot: number; source: string } {
  for (const name of ['POD_NAME', 'HOSTNAME'] as const) {
    const v = env[name];
    if (!v) continue;
    const m = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?-(\d{1,9})$/.exec(v.trim());
    if (m) return { slot: Number(m[2]), source: `${name}=${v.trim()}` };
  }
  throw registryError(
    'STATIC_NODE',
    `k8s: needs a StatefulSet pod name ending in its ordinal (e.g. "orders-3") in $POD_NAME or $HOSTNAME; ` +
      `got POD_NAME=${JSON.stringify(env.POD_NAME ?? null)}, HOSTNAME=${JSON.stringify(env.HOSTNAME ?? null)}. ` +
      'Run in a StatefulSet (set POD_NAME from metadata.name) or use static:N.',
    { POD_NAME: env.POD_NAME ?? null, HOSTNAME: env.HOSTNAME ?? null },
  );
}

interface HeldHere {
  readonly namespace: string;
  readonly holder: HolderInfo;
  readonly since: number;
  renewed: number;
  highWaterMs: number;
}

/* eslint-disable @typescript-eslint/require-await -- synchronous bodies; `async` turns their throws into the rejections RegistryDriver callers handle */
class StaticDriver implements RegistryDriver, StaticAssignment {
  readonly kind: 'static' | 'k8s';
  readonly url: string;
  readonly staticAssignment = true;
  private closed = false;
  /** Claims whose mark was written at least once (the first write is acquire()'s). */
  private readonly recorded = new WeakSet<Claim>();
  private readonly live = new Map<Claim, HeldHere>();

  constructor(private readonly o: StaticDriverOptions) {
    this.kind = o.kind;
    this.url = o.kind === 'static' ? `static:${o.slot}` : 'k8s:';
  }

  private file(namespace: string, slot: number): string | undefined {
    if (!this.o.stateDir) return undefined;
    return path.join(this.o.stateDir, 'static', ...namespace.split('/'), `${slot}.json`);
  }

  async claim(req: ClaimRequest): Promise<Claim> {
    if (this.closed) throw registryError('CLOSED', `the registry ${this.url} was closed`, { url: this.url });
    const slot = this.o.slot;
    if (!Number.isInteger(slot) || slot < 0 || slot >= req.slots) {
      throw registryError(
        'STATIC_NODE',
        `${this.o.source} gives node ID ${slot}, but the layout leaves ${req.slots === 1 ? '1 node ID' : `${req.slots} node IDs`} in "${req.namespace}" (0 to ${req.slots - 1}); ` +
          (this.kind === 'k8s' ? 'lower the StatefulSet replicas or widen the node field' : 'pick a number in range'),
        { url: this.url, slot, slots: req.slots, source: this.o.source },
      );
    }
    let highWaterMs = 0;
    let releasedCleanly = true;
    const f = this.file(req.namespace, slot);
    if (f) {
      try {
        const v = JSON.parse(readFileSync(f, 'utf8')) as { highWaterMs?: unknown; released?: unknown };
        if (typeof v.highWaterMs === 'number' && Number.isFinite(v.highWaterMs)) highWaterMs = v.highWaterMs;
        releasedCleanly = v.released === true;
      } catch {
        /* no history on this disk */
      }
    }
    const { namespace } = req;
    const claim = { slot, token: `${this.url}#${namespace}`, highWaterMs, releasedCleanly, namespace };
    const now = this.o.clock.now();
    this.live.set(claim, { namespace: req.namespace, holder: req.holder, since: now, renewed: now, highWaterMs });
    return claim;
  }

  /** This process's own claims in the namespace (no engine shows the others); they never expire. */
  async holders(namespace: string): Promise<HolderRecord[]> {
    const now = this.o.clock.now();
    return [...this.live.entries()]
      .filter(([, h]) => h.namespace === namespace)
      .map(([claim, h]) => ({
        slot: claim.slot,
        holder: h.holder,
        heldSinceMs: h.since,
        renewedAtMs: h.renewed,
        sinceRenewalMs: Math.max(0, now - h.renewed),
        sinceRenewalErrorMs: 0,
        expiresInMs: null,
        ttlMs: null,
        highWaterMs: h.highWaterMs,
      }));
  }

  private save(claim: Claim, highWaterMs: number, released: boolean): void {
    const f = this.file((claim as Claim & { namespace: string }).namespace, claim.slot);
    if (!f || !this.o.stateDir) return;
    const first = !this.recorded.has(claim);
    try {
      makeDirLevelsSync(path.dirname(f));
      writeFileAtomic(
        f,
        JSON.stringify({ highWaterMs, released, at: new Date(this.o.clock.now()).toISOString() }) + '\n',
      );
      this.recorded.add(claim);
    } catch (e) {
      // Never run on silently: without the mark a restart with the clock behind could repeat IDs.
      const phase = first ? 'start' : released ? 'release' : 'renewal';
      const consequence =
        phase === 'start'
          ? 'refusing to start without it'
          : `the mark on disk stays at its last value${released ? '' : ' (IDs are still issued; retried at the next renewal)'}`;
      const dir = this.o.stateDir;
      throw registryError(
        'UNREACHABLE',
        `${this.url}: cannot write the high-water mark of node ID ${claim.slot} to ${f} (${errorText(e).replace(/\.+$/, '')}). ` +
          `The state directory ${dir} keeps the highest timestamp issued under this hand-assigned node ID, so that a restart with the clock behind does not repeat IDs; ${consequence}. ` +
          `Make ${dir} writable by this user, or point the state directory elsewhere: XDG_STATE_HOME=/writable/dir puts it at /writable/dir/flurry (library: openRegistry(url, { stateDir })).`,
        { url: this.url, slot: claim.slot, stateDir: dir, file: f, phase },
        e,
      );
    }
  }

  async renew(claim: Claim, opts: { ttlMs: number; highWaterMs: number }): Promise<void> {
    this.save(claim, opts.highWaterMs, false);
    const h = this.live.get(claim);
    if (h) {
      h.renewed = this.o.clock.now();
      h.highWaterMs = Math.max(h.highWaterMs, opts.highWaterMs);
    }
  }

  async release(claim: Claim, opts: { highWaterMs: number }): Promise<void> {
    this.live.delete(claim);
    this.save(claim, opts.highWaterMs, true);
  }

  close(): Promise<void> {
    this.closed = true;
    this.live.clear();
    return Promise.resolve();
  }
}
/* eslint-enable @typescript-eslint/require-await */

/** Creates a static (`static:N`) or Kubernetes (`k8s:`) driver. */
export function createStaticDriver(opts: StaticDriverOptions): RegistryDriver {
  const names = optionNames<StaticDriverOptions>({ kind: true, slot: true, source: true, stateDir: true, clock: true });
  assertKnownOptions(opts, names, 'createStaticDriver options');
  return new StaticDriver(opts);
}
