/**
 * The one holder child of the conformance suite and the torture suite (which spawns this file
 * from dist): `node holder.js '<json config>'`. It takes a node ID (from a registry through
 * `leasedGenerator()` / `leasedUuidGenerator()`, or pinned by hand when there is no `url`) and
 * prints one JSON object per line on stdout, each with `t` = the host's monotonic ms
 * (comparable between processes of one machine):
 *
 * - `{ev:'started'}` with `startWhenFile` (a start barrier), `{ev:'exhausted'}` at each
 *   FLURRY_E_REGISTRY_EXHAUSTED refusal it retries;
 * - `{ev:'acquired', pid, slot, node, notBeforeMs, deadlineIn, acquireMs, wall}` or
 *   `{ev:'acquire-failed', code, message, details, attempts, refusals}` (then exit 0);
 * - lease events `{ev:'renewed'|'renew-failed'|'lost'|'reacquired'|'node-changed', slot, code, node, wall}`
 *   (`renewed.startedAt` is also in host monotonic ms);
 * - mode `hold`: nothing more; mode `tick`: every `tickMs` one `next()`: `{ev:'id', id, node, unixMs}`
 *   (unixMs: the ID's own timestamp) or, on the first refusal after an ID, `{ev:'refused', code}`;
 * - modes `fill`, `next`, `batch`, `mixed` (the default): the issuing loop of holder-issue.ts, which
 *   appends every ID to the binary file `out`, takes control words on stdin and prints
 *   `progress`, `mark`, `done`, … there.
 *
 * Closing stdin stops it: it releases its lease, prints `{ev:'released'}` and exits 0.
 */
import { existsSync } from 'node:fs';
import {
  Generator,
  Layout,
  UuidGenerator,
  isPresetName,
  systemClock,
  type Clock,
  type GeneratorOptions,
  type LayoutSpec,
} from '@flurry/core';
import { leasedGenerator, leasedUuidGenerator } from '../leased-generator.js';
import { openRegistry } from '../open-registry.js';
import { codeOf, control, hostT, issue, refuse, refusals, say, type IssueConfig, type Issuer } from './holder-issue.js';

/** The holder's configuration (the JSON in argv[2]). */
export interface HolderConfig extends Omit<IssueConfig, 'mode'> {
  /** The registry URL; without it the generator runs on the pinned `node` (no lease). */
  url?: string;
  cluster?: string;
  /** A preset name, a fields spec such as `timestamp:41,worker:2,sequence:12`, or a layout spec. */
  layout: string | LayoutSpec;
  ttlMs?: number;
  marginMs?: number;
  renewIntervalMs?: number;
  highWaterWaitMs?: number;
  stateDir?: string;
  connectTimeoutMs?: number;
  /** Holder address (`ip:port`), e.g. for the Leaf-compatible registry. */
  holderAddress?: string;
  /** The file registry's file-system steps (`RegistryOptions.fileIo`; default async). */
  fileIo?: 'async' | 'sync';
  /** Further registry options, as JSON (the torture suite's lease settings). */
  registryOptions?: Record<string, unknown>;
  /** Node fields fixed by configuration (with a registry). */
  pin?: Record<string, number>;
  /** The node without a registry. */
  node?: Record<string, number>;
  /** Issue UUIDv7 (`leasedUuidGenerator` / `UuidGenerator`) with these widths. */
  uuid?: { nodeBits: number; sequenceBits: number };
  /** Generator policies. */
  generator?: Omit<GeneratorOptions, 'layout' | 'node' | 'lease'>;
  /** Shifts this holder's wall clock (negative = behind). */
  clockOffsetMs?: number;
  mode?: 'hold' | 'tick' | IssueConfig['mode'];
  /**
   * A start barrier that does not guess start-up time: print `{ev:'started'}` once loaded,
   * then wait until this file exists before acquiring.
   */
  startWhenFile?: string;
  tickMs?: number;
  /** Keep retrying a refused acquire this long (default: not at all), every `retryEveryMs` (default 100). */
  retryUntilMs?: number;
  retryEveryMs?: number;
  /** The refusal codes retried (default: every code). */
  retryCodes?: string[];
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const cfg = JSON.parse(process.argv[2] ?? '{}') as HolderConfig;
  const mode = cfg.mode ?? 'fill';
  const issuing = mode !== 'hold' && mode !== 'tick';
  control.go = !cfg.waitGo;
  if (issuing) {
    // A hard bound on this process's life, whatever happens.
    const lifeMs = (cfg.durationMs ?? 0) + (cfg.retryUntilMs ?? 30_000) + (cfg.goTimeoutMs ?? 60_000) + 60_000;
    setTimeout(() => {
      say({ ev: 'error', where: 'lifetime', message: `lifetime bound ${lifeMs} ms exceeded` });
      process.exit(3);
    }, lifeMs).unref();
  }
  const off = cfg.clockOffsetMs ?? 0;
  const clock: Clock =
    off === 0
      ? systemClock
      : { now: () => Date.now() + off, monotonic: () => systemClock.monotonic(), sleep: (ms) => systemClock.sleep(ms) };
  const layout =
    typeof cfg.layout === 'string' && !isPresetName(cfg.layout) ? Layout.parse(cfg.layout) : Layout.from(cfg.layout);
  if (cfg.startWhenFile !== undefined) {
    say({ ev: 'started' });
    const until = Date.now() + 300_000;
    while (!existsSync(cfg.startWhenFile) && Date.now() < until) await sleep(5);
  }
  const acquireStart = performance.now();
  let ids: Issuer;
  let registry: Awaited<ReturnType<typeof openRegistry>> | undefined;
  if (cfg.url !== undefined) {
    const giveUpAt = acquireStart + (cfg.retryUntilMs ?? 0);
    for (let attempt = 1; ; attempt++) {
      try {
        registry ??= await openRegistry(cfg.url, {
          cluster: cfg.cluster,
          clock,
          ...(cfg.ttlMs !== undefined ? { ttlMs: cfg.ttlMs } : {}),
          ...(cfg.marginMs !== undefined ? { marginMs: cfg.marginMs } : {}),
          ...(cfg.renewIntervalMs !== undefined ? { renewIntervalMs: cfg.renewIntervalMs } : {}),
          ...(cfg.highWaterWaitMs !== undefined ? { highWaterWaitMs: cfg.highWaterWaitMs } : {}),
          ...(cfg.stateDir !== undefined ? { stateDir: cfg.stateDir } : {}),
          ...(cfg.connectTimeoutMs !== undefined ? { connectTimeoutMs: cfg.connectTimeoutMs } : {}),
          ...(cfg.holderAddress !== undefined ? { holder: { address: cfg.holderAddress } } : {}),
          ...(cfg.fileIo !== undefined ? { fileIo: cfg.fileIo } : {}),
          ...cfg.registryOptions,
        });
        const generator = cfg.generator ?? {};
        ids = (
          cfg.uuid
            ? await leasedUuidGenerator({ registry, ...cfg.uuid, generator })
            : await leasedGenerator({ registry, layout, ...(cfg.pin ? { pin: cfg.pin } : {}), generator })
        ) as Issuer;
        break;
      } catch (e) {
        const code = refuse(e);
        if (performance.now() >= giveUpAt || control.stop || (cfg.retryCodes && !cfg.retryCodes.includes(code))) {
          const details = (e as { toJSON?: () => { details?: unknown } }).toJSON?.().details ?? {};
          say({
            ev: 'acquire-failed',
            code,
            message: String((e as Error)?.message ?? e),
            details,
            attempts: attempt,
            refusals,
          });
          await registry?.close().catch(() => undefined);
          process.exit(0);
        }
        if (code === 'FLURRY_E_REGISTRY_EXHAUSTED') say({ ev: 'exhausted' });
        await sleep(cfg.retryEveryMs ?? 100);
      }
    }
  } else {
    const g = cfg.uuid
      ? new UuidGenerator({ node: cfg.node, ...cfg.uuid, ...cfg.generator })
      : new Generator({ layout, node: cfg.node ?? {}, ...cfg.generator });
    ids = {
      generator: g,
      next: () => g.next() as bigint,
      nextBytes: () => (g as UuidGenerator).nextBytes(),
      fill: (a, o, n) => g.fill(a as never, o, n),
      batch: (n, form) => (g as UuidGenerator).batch(n, form as never),
      close: () => Promise.resolve(g.close()),
    };
  }
  const lease = ids.lease;
  const leaseEvents: Record<string, number> = {};
  say({
    ev: 'acquired',
    pid: process.pid,
    slot: lease?.slot,
    node: (cfg.uuid ? lease?.node : undefined) ?? ids.generator.node ?? lease?.node,
    notBeforeMs: lease?.notBeforeMs,
    deadlineIn: lease?.msUntilDeadline(),
    acquireMs: performance.now() - acquireStart,
    wall: Date.now(),
  });
  for (const ev of ['renewed', 'renew-failed', 'lost', 'reacquired', 'node-changed'] as const)
    lease?.on(ev, (arg: unknown) => {
      leaseEvents[ev] = (leaseEvents[ev] ?? 0) + 1;
      const a = arg as { code?: unknown; message?: unknown; node?: unknown; startedAt?: number } | undefined;
      say({
        ev,
        slot: lease.slot,
        wall: Date.now(),
        ...(ev === 'renewed' ? { startedAt: hostT(a?.startedAt ?? 0) } : {}),
        ...(ev === 'renew-failed' || ev === 'lost' ? { code: codeOf(arg) } : {}),
        ...(ev === 'renew-failed' ? { message: String(a?.message ?? arg).slice(0, 300) } : {}),
        ...(ev === 'reacquired' ? { node: lease.node, notBeforeMs: lease.notBeforeMs } : {}),
        ...(ev === 'node-changed' ? { node: arg } : {}),
      });
    });

  let finishing: Promise<never> | undefined;
  const finish = (): Promise<never> => (finishing ??= release());
  const release = async (): Promise<never> => {
    const releaseStart = performance.now();
    try {
      await Promise.race([
        ids.close(),
        sleep(cfg.releaseTimeoutMs ?? 10_000).then(() => Promise.reject(new Error('release timed out'))),
      ]);
      if (registry) await Promise.race([registry.close(), sleep(5_000)]);
      say({ ev: 'released', ms: performance.now() - releaseStart });
    } catch (e) {
      say({
        ev: 'error',
        where: 'release',
        code: codeOf(e),
        message: String((e as Error)?.message ?? e).slice(0, 600),
      });
    }
    process.exit(0);
  };
  if (issuing) {
    await issue(cfg, ids, leaseEvents);
    await finish();
  }
  control.onStop = () => void finish();
  if (control.stop) await finish();
  if (mode === 'tick') {
    let refusedShown = false;
    const tick = (): void => {
      if (control.stop) return;
      try {
        const id = ids.next();
        refusedShown = false;
        say({ ev: 'id', id, node: ids.generator.node, unixMs: layout.decode(id).unixMs });
      } catch (e) {
        if (!refusedShown) say({ ev: 'refused', code: codeOf(e) });
        refusedShown = true;
      }
      setTimeout(tick, cfg.tickMs ?? 10);
    };
    tick();
  }
}

main().catch((e) => {
  say({ ev: 'crash', code: codeOf(e), message: (e as Error)?.stack ?? String(e) });
  process.exit(3);
});
