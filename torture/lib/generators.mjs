// Starting and collecting torture holder children (the conformance suite's holder, from dist).
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { spawnNode } from './procs.mjs';
import { dist, root } from './util.mjs';

/**
 * The layouts the suite uses (fields MSB first: timestamp | node | sequence).
 * @example Layout.from(LAYOUTS.four).nodeCount; // 4
 */
export const LAYOUTS = {
  /** 16 node IDs: a 16-process fleet fills the registry. */
  sixteen: {
    name: 'torture16',
    epoch: '2024-01-01T00:00:00Z',
    fields: [
      { name: 'timestamp', bits: 41 },
      { name: 'worker', bits: 4 },
      { name: 'sequence', bits: 12 },
    ],
  },
  /** 4 node IDs: standbys wait for holders to die so they can take over their IDs. */
  four: {
    name: 'torture4',
    epoch: '2024-01-01T00:00:00Z',
    fields: [
      { name: 'timestamp', bits: 41 },
      { name: 'worker', bits: 2 },
      { name: 'sequence', bits: 12 },
    ],
  },
  /** 4 node IDs and 64 IDs per ms: a borrowing generator runs a second ahead with 64,000 IDs. */
  fourSmallSeq: {
    name: 'torture4s',
    epoch: '2024-01-01T00:00:00Z',
    fields: [
      { name: 'timestamp', bits: 41 },
      { name: 'worker', bits: 2 },
      { name: 'sequence', bits: 6 },
    ],
  },
};

/**
 * The file registry's step mode for the `i`-th process of a row: every other one runs its file-system steps
 * synchronously (`fileIo: 'sync'`, what the CLI's `next` uses), beside the services' asynchronous ones, so the
 * row proves the two modes against each other on one registry. Other registries ignore the option.
 * @example registryOptions: { ...lease, ...fileIoFor(i) } // { fileIo: 'sync' } for odd i
 */
export function fileIoFor(i) {
  return { fileIo: i % 2 === 1 ? 'sync' : 'async' };
}

/**
 * How long a holder issues unless the parent stops it first (the engine-faults rows, whose schedule follows derived bounds): the profile's scenario time
 * limit, past which the row is cut short anyway. A fixed `durationMs + 60 s` there (100 s in the full profile) was
 * shorter than the schedule may take (up to 2 × a recovery bound of 2 × the measured start-up + …): the
 * holders stopped on their own, exit 0, before the pause, and the row judged 'never' for each of them.
 * @example holderDurationMs(profiles.full); // 600000
 */
export const holderDurationMs = (P) => P.scenarioTimeoutMs;

/**
 * Spawns one holder child (packages/coordination/src/conformance/holder.ts) writing to `<dir>/<name>.ids`.
 * @returns {{ name, file, child, cfg }}
 * @example const g = spawnGenerator(dir, 'h0', { url, layout: LAYOUTS.four, durationMs: 1000 });
 */
export function spawnGenerator(dir, name, cfg, opts = {}) {
  const file = path.join(dir, `${name}.ids`);
  // Keep the registries' local state (the cached "slot this host held last") in the
  // scenario's temporary directory, shared by its processes as one host's would be.
  const full = { out: file, stateDir: path.join(dir, 'state'), ...cfg };
  const child = spawnNode(name, dist.holder, [JSON.stringify(full)], { env: opts.env });
  return { name, file, child, cfg: full };
}

/**
 * Waits until every child reported `acquired` (or failed to acquire); returns the messages.
 * @example const msgs = await waitReady(gens, 30_000); // [{ ev: 'acquired', node, … }, …]
 */
export async function waitReady(gens, timeoutMs) {
  return Promise.all(
    gens.map((g) =>
      g.child
        .waitFor((m) => m.ev === 'acquired' || m.ev === 'acquire-failed', timeoutMs, { what: 'acquired' })
        .catch((e) => ({ ev: 'no-ready', error: e.message })),
    ),
  );
}

/**
 * The last message of a kind a child printed (or undefined).
 * @example lastMsg(g, 'done')?.issued;
 */
export const lastMsg = (g, ev) => [...g.child.messages].reverse().find((m) => m.ev === ev);

/**
 * Folds every child's reports into the row: refusals by code, the longest stall, crashes
 * (a child that exited non-zero or printed an uncoded error fails the row unless it was
 * killed on purpose).
 * @example collect(row, gens, { killedOnPurpose: new Set(['h0']) });
 */
export function collect(row, gens, { killedOnPurpose = new Set() } = {}) {
  for (const g of gens) {
    const done = lastMsg(g, 'done');
    const failed = lastMsg(g, 'acquire-failed');
    if (done) {
      row.addRefusals(done.refusals);
      row.stall(done.maxStallMs);
    } else if (failed) {
      row.addRefusals(failed.refusals);
    } else {
      // Killed or crashed: take what it last reported.
      const p = lastMsg(g, 'progress');
      if (p) row.addRefusals(p.refusals);
    }
    for (const e of g.child.messages.filter((m) => m.ev === 'error' && m.where !== 'release')) {
      row.fail(`${g.name}: ${e.where} error ${e.code ?? ''}: ${e.message}`);
    }
    const ex = g.child.exit;
    if (!killedOnPurpose.has(g.name)) {
      if (!ex) row.fail(`${g.name}: still running at collection`);
      else if (ex.code !== 0)
        row.fail(`${g.name}: exited with ${JSON.stringify(ex)}; stderr: ${g.child.stderr.trim().slice(-600)}`);
    }
  }
}

/**
 * With TORTURE_KEEP set, writes each child's reports and stderr beside its ID file (`<name>.log`).
 * @example keepLogs(gens); // with TORTURE_KEEP=1: <dir>/<name>.ids.log
 */
export function keepLogs(gens) {
  if (!process.env.TORTURE_KEEP) return;
  for (const g of gens) {
    try {
      writeFileSync(
        `${g.file}.log`,
        g.child.messages.map((m) => JSON.stringify(m)).join('\n') +
          `\n--- exit ${JSON.stringify(g.child.exit)}\n--- stderr\n${g.child.stderr}`,
      );
    } catch {
      /* best effort */
    }
  }
}

/**
 * When a row fails, keeps every child's reports and stderr (not the ID files) under
 * `.flurry-tmp/torture-logs/<scenario>-<backend>/` (git-ignored) for the post-mortem.
 * @example saveFailureLogs(row, gens); // .flurry-tmp/torture-logs/crash-pause-redis/*.log
 */
export function saveFailureLogs(row, gens) {
  if (row.pass || !gens.length) return;
  const dir = path.join(
    root,
    '.flurry-tmp',
    'torture-logs',
    `${row.scenario}-${row.backend}`.replace(/[^A-Za-z0-9_.+-]/g, '_'),
  );
  try {
    mkdirSync(dir, { recursive: true });
    for (const g of gens) {
      writeFileSync(
        path.join(dir, `${g.name}.log`),
        g.child.messages.map((m) => JSON.stringify(m)).join('\n') +
          `\n--- exit ${JSON.stringify(g.child.exit)}\n--- stderr\n${g.child.stderr}`,
      );
    }
    row.note(`child logs kept in ${path.relative(root, dir)}`);
  } catch {
    /* best effort */
  }
}
