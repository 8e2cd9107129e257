/**
 * A lease holder process for the conformance suite: `node holder.js '<json config>'`.
 * It opens the registry, acquires a node ID through `leasedGenerator()`, and prints one
 * JSON object per line on stdout, each with `t` = the host's monotonic ms (comparable
 * between processes of one machine):
 *
 * - `{ev:'acquired', slot, node, notBeforeMs}` or `{ev:'error', code, message, details}` (then exit 2)
 * - `{ev:'renewed'|'lost'|'reacquired'|'renew-failed'|'node-changed', …}` lease events
 *   (`renewed.startedAt` is also in host monotonic ms)
 * - mode `tick`: every `tickMs` one `gen.next()`: `{ev:'id', id, node, unixMs}` (unixMs: the ID's own timestamp) or, on the first
 *   refusal after an ID, `{ev:'refused', code}`
 * - mode `burst`: IDs at full speed (yielding to the event loop every chunk so renewals
 *   run) for `durationMs` or `maxIds`, written little-endian to `out`; then
 *   `{ev:'done', count, refused}`
 * - mode `hold`: nothing more.
 * It runs until stdin closes (then releases, prints `{ev:'released'}`, exits 0) unless
 * `exitAfterBurst` is set in burst mode.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { FlurryError, Layout, isPresetName, systemClock, type Clock } from '@flurry/core';
import { hostMonotonicMs } from '../host-clock.js';
import { leasedGenerator, type LeasedGenerator } from '../leased-generator.js';
import { openRegistry } from '../open-registry.js';

/** The holder's configuration (the JSON in argv[2]). */
export interface HolderConfig {
  url: string;
  cluster: string;
  /** A preset name or a fields spec such as `timestamp:41,worker:2,sequence:12`. */
  layout: string;
  ttlMs: number;
  marginMs?: number;
  renewIntervalMs?: number;
  highWaterWaitMs?: number;
  stateDir?: string;
  pin?: Record<string, number>;
  /** Shifts this holder's wall clock (negative = behind). */
  clockOffsetMs?: number;
  mode: 'hold' | 'tick' | 'burst';
  /** Wall-clock ms at which to start acquiring (a start barrier for many processes). */
  startAtMs?: number;
  /**
   * A start barrier that does not guess start-up time: print `{ev:'started'}` once loaded,
   * then wait until this file exists before acquiring.
   */
  startWhenFile?: string;
  tickMs?: number;
  durationMs?: number;
  maxIds?: number;
  out?: string;
  exitAfterBurst?: boolean;
  /** Keep retrying an acquire that fails with FLURRY_E_REGISTRY_EXHAUSTED for this long (prints `exhausted` each time). */
  retryUntilMs?: number;
  retryEveryMs?: number;
  /** Holder address (`ip:port`), e.g. for the Leaf-compatible registry. */
  holderAddress?: string;
  /** The file registry's file-system steps (`RegistryOptions.fileIo`; default async). */
  fileIo?: 'async' | 'sync';
}

/** Host monotonic ms to the µs: `systemClock.monotonic()` reads the same clock, so a lease's times need no shift. */
const hostT = (ms: number): number => Math.round(ms * 1000) / 1000;

function emit(obj: Record<string, unknown>): void {
  process.stdout.write(
    JSON.stringify({ ...obj, t: hostT(hostMonotonicMs()) }, (_k, v: unknown) =>
      typeof v === 'bigint' ? v.toString() : v,
    ) + '\n',
  );
}

function codeOf(e: unknown): string {
  return e instanceof FlurryError ? e.code : e instanceof Error ? e.name : 'UNKNOWN';
}

async function main(): Promise<void> {
  const cfg = JSON.parse(process.argv[2] ?? '{}') as HolderConfig;
  const off = cfg.clockOffsetMs ?? 0;
  const clock: Clock =
    off === 0
      ? systemClock
      : {
          now: () => Date.now() + off,
          monotonic: () => systemClock.monotonic(),
          sleep: (ms) => systemClock.sleep(ms),
        };
  const layout = isPresetName(cfg.layout) ? Layout.from(cfg.layout) : Layout.parse(cfg.layout);
  if (cfg.startWhenFile !== undefined) {
    emit({ ev: 'started' });
    const until = Date.now() + 300_000;
    while (!existsSync(cfg.startWhenFile) && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
  }
  if (cfg.startAtMs !== undefined) {
    const wait = cfg.startAtMs - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, Math.min(wait, 10_000)));
  }
  let ids!: LeasedGenerator;
  let registry: Awaited<ReturnType<typeof openRegistry>> | undefined;
  try {
    registry = await openRegistry(cfg.url, {
      cluster: cfg.cluster,
      ttlMs: cfg.ttlMs,
      clock,
      ...(cfg.marginMs !== undefined ? { marginMs: cfg.marginMs } : {}),
      ...(cfg.renewIntervalMs !== undefined ? { renewIntervalMs: cfg.renewIntervalMs } : {}),
      ...(cfg.highWaterWaitMs !== undefined ? { highWaterWaitMs: cfg.highWaterWaitMs } : {}),
      ...(cfg.stateDir !== undefined ? { stateDir: cfg.stateDir } : {}),
      connectTimeoutMs: 3000,
      ...(cfg.holderAddress !== undefined ? { holder: { address: cfg.holderAddress } } : {}),
      ...(cfg.fileIo !== undefined ? { fileIo: cfg.fileIo } : {}),
    });
    const giveUpAt = performance.now() + (cfg.retryUntilMs ?? 0);
    for (;;) {
      try {
        ids = await leasedGenerator({ registry, layout, ...(cfg.pin ? { pin: cfg.pin } : {}) });
        break;
      } catch (e) {
        if (codeOf(e) !== 'FLURRY_E_REGISTRY_EXHAUSTED' || performance.now() >= giveUpAt) throw e;
        emit({ ev: 'exhausted' });
        await new Promise((r) => setTimeout(r, cfg.retryEveryMs ?? 50));
      }
    }
  } catch (e) {
    const err = e as FlurryError;
    emit({
      ev: 'error',
      code: codeOf(e),
      message: err.message,
      details: err instanceof FlurryError ? err.toJSON().details : {},
    });
    await registry?.close().catch(() => undefined);
    process.exit(2);
  }
  const lease = ids.lease;
  emit({
    ev: 'acquired',
    slot: lease.slot,
    node: lease.node,
    notBeforeMs: lease.notBeforeMs,
    deadlineIn: lease.msUntilDeadline(),
  });
  lease.on('renewed', (e: { startedAt: number }) =>
    emit({ ev: 'renewed', startedAt: hostT(e.startedAt), slot: lease.slot }),
  );
  lease.on('renew-failed', (err: unknown) =>
    emit({ ev: 'renew-failed', code: codeOf(err), message: String((err as Error)?.message ?? err).slice(0, 300) }),
  );
  lease.on('lost', (err: unknown) => emit({ ev: 'lost', code: codeOf(err), slot: lease.slot }));
  lease.on('node-changed', (node: unknown) => emit({ ev: 'node-changed', node }));
  lease.on('reacquired', () =>
    emit({ ev: 'reacquired', slot: lease.slot, node: lease.node, notBeforeMs: lease.notBeforeMs }),
  );

  let stopping = false;
  const finish = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    try {
      await ids.close();
      await registry?.close();
      emit({ ev: 'released' });
    } catch (e) {
      emit({ ev: 'release-error', code: codeOf(e), message: (e as Error).message });
    }
    process.exit(0);
  };
  process.stdin.on('end', () => void finish());
  process.stdin.on('error', () => void finish());
  process.stdin.resume();

  if (cfg.mode === 'tick') {
    let refusedShown = false;
    const tick = (): void => {
      if (stopping) return;
      try {
        const id = ids.next();
        refusedShown = false;
        emit({ ev: 'id', id, node: ids.generator.node, unixMs: ids.generator.layout.decode(id).unixMs });
      } catch (e) {
        if (!refusedShown) emit({ ev: 'refused', code: codeOf(e) });
        refusedShown = true;
      }
      setTimeout(tick, cfg.tickMs ?? 10);
    };
    tick();
  } else if (cfg.mode === 'burst') {
    const max = cfg.maxIds ?? 1_000_000;
    const buf = new BigUint64Array(max);
    let n = 0;
    let refused = 0;
    const until = performance.now() + (cfg.durationMs ?? 2000);
    while (n < max && performance.now() < until) {
      const chunkEnd = Math.min(max, n + 4096);
      try {
        while (n < chunkEnd) n += ids.fill(buf, n, chunkEnd - n);
      } catch {
        refused++;
        await new Promise((r) => setTimeout(r, 5));
      }
      await new Promise((r) => setImmediate(r));
    }
    if (cfg.out) writeFileSync(cfg.out, Buffer.from(buf.buffer, 0, n * 8));
    emit({ ev: 'done', count: n, refused, node: ids.generator.node });
    if (cfg.exitAfterBurst) await finish();
  }
}

main().catch((e) => {
  emit({ ev: 'crash', code: codeOf(e), message: (e as Error)?.stack ?? String(e) });
  process.exit(3);
});
