// Turns the binary outputs of a scenario's children into a report row: IDs checked,
// duplicates across the union, decreasing steps inside each stream, and node runs that
// overlap in time (two holders under one node ID at once).
//
// The work runs on a worker thread (analyze-thread.mjs): rows run side by side in one runner,
// and checking a row's hundreds of millions of IDs on the runner's thread used to stall every
// other row's timers (holders were stopped and resumed late, so they issued more IDs and the
// next check took longer still; see docs/reliability.md, "The runner's one thread").
import { Worker } from 'node:worker_threads';
import { analyzable } from './uuids.mjs';
import {
  readIds,
  checkStream,
  findDuplicates,
  nodeExtractor,
  tsExtractor,
  segments,
  findNodeOverlaps,
} from './ids.mjs';

/**
 * Checks the streams on a worker thread and fills `row` with what it found (the same
 * counts, failures, notes and details as {@link analyzeNow}); resolves to the node runs.
 * @param row      the report Row to fill
 * @param entries  [{ name, file, cfg? }] one per stream: a generator (a UUID child's
 *                 `cfg.uuid` makes its file read as UUIDs, see uuids.mjs) or a plain file
 * @param layout   a core Layout (for the node and timestamp fields)
 * @param opts     as for {@link analyzeNow}
 */
export async function analyze(row, entries, layout, opts = {}) {
  const files = entries.map((e) => ({
    name: e.name,
    file: e.file,
    cfg: e.cfg?.uuid ? { uuid: e.cfg.uuid } : undefined,
  }));
  const { ops, result } = await offThread('analyze', { files, layout: plainLayout(layout), opts });
  replay(row, ops);
  return result;
}

/**
 * Runs one job of analyze-thread.mjs on a fresh worker thread.
 * @returns the job's answer (structured-cloned)
 */
export function offThread(job, args) {
  return new Promise((resolve, reject) => {
    const w = new Worker(new URL('./analyze-thread.mjs', import.meta.url), { workerData: { job, args } });
    let answered = false;
    w.once('message', (m) => {
      answered = true;
      if (m.error) reject(Object.assign(new Error(`torture ${job} thread: ${m.error}`), { stack: m.stack }));
      else resolve(m.answer);
    });
    w.once('error', reject);
    w.once('exit', (code) => {
      if (!answered) reject(new Error(`torture ${job} thread exited with ${code} before answering`));
    });
  });
}

/** The layout fields the checks read, as a plain object a worker thread can receive. */
export function plainLayout(layout) {
  return {
    epochMs: layout.epochMs,
    unitMs: layout.unitMs,
    sequenceBits: layout.sequenceBits,
    nodeFields: layout.nodeFields.map((f) => ({ name: f.name, bits: f.bits })),
  };
}

/** A stand-in Row on the worker thread: it records what the checks did, for {@link replay}. */
export class RecordingRow {
  constructor() {
    this.idsChecked = 0;
    this.duplicates = 0;
    this.decreasing = 0;
    this.details = {};
    this.ops = [];
  }
  fail(reason) {
    this.ops.push(['fail', reason]);
  }
  note(text) {
    this.ops.push(['note', text]);
  }
  recorded() {
    const { idsChecked, duplicates, decreasing, details, ops } = this;
    return { idsChecked, duplicates, decreasing, details, ops };
  }
}

/** Applies a RecordingRow's record to the real row, in the order it happened. */
function replay(row, rec) {
  row.idsChecked += rec.idsChecked;
  row.duplicates += rec.duplicates;
  row.decreasing += rec.decreasing;
  Object.assign(row.details, rec.details);
  for (const [op, text] of rec.ops) row[op](text);
}

/**
 * Checks the streams on this thread (what the worker thread runs).
 * @param row      the report Row to fill
 * @param files    [{ name, file, cfg? }] binary ID files, one per stream (a process's output)
 * @param layout   a core Layout (for the node and timestamp fields)
 * @param opts.orderPromised  true when every stream must be strictly increasing under one node
 * @param opts.allowReorderAcrossNodes  true when a stream may step down when its node changed
 * @param opts.issuers  when given, the names of the streams that each come from one issuer in order
 */
export function analyzeNow(row, entries, layout, opts = {}) {
  const files = analyzable(row, entries, layout);
  const nodeOf = nodeExtractor(layout);
  const tsOf = tsExtractor(layout);
  const streams = [];
  const segs = [];
  let torn = 0;
  let decreasing = 0;
  let reordered = 0;
  let nodeChanges = 0;
  const perStream = [];
  for (const { name, file } of files) {
    const { ids, tornBytes } = readIds(file);
    torn += tornBytes;
    streams.push({ name, ids });
    // Streams that merely relay IDs from several issuers (a client, a fuzzer) join the
    // duplicate check only: their order and node runs say nothing about one issuer.
    if (opts.issuers && !opts.issuers.has(name)) {
      perStream.push({ name, ids: ids.length, relay: true });
      continue;
    }
    const c = checkStream(ids, nodeOf);
    decreasing += c.decreasing;
    reordered += c.reorderedAcrossNodes;
    nodeChanges += c.nodeChanges;
    const s = segments(name, ids, nodeOf, tsOf);
    segs.push(...s);
    perStream.push({
      name,
      ids: ids.length,
      decreasing: c.decreasing,
      nodes: [...new Set(s.map((x) => x.node))],
      examples: c.examples,
    });
  }
  const dup = findDuplicates(streams);
  const ov = findNodeOverlaps(segs);
  row.idsChecked += dup.total;
  row.duplicates += dup.duplicates;
  row.decreasing += decreasing + (opts.allowReorderAcrossNodes ? 0 : reordered);
  if (dup.duplicates) {
    row.fail(`${dup.duplicates} duplicate ID(s), e.g. ${JSON.stringify(dup.examples.slice(0, 2))}`);
    row.details.duplicateExamples = dup.examples;
  }
  if (ov.overlaps) {
    row.fail(
      `${ov.overlaps} overlapping node run(s): two holders issued under one node ID in the same time range, e.g. ${JSON.stringify(ov.examples.slice(0, 2))}`,
    );
    row.details.overlapExamples = ov.examples;
  }
  if (opts.orderPromised !== false && decreasing) {
    row.fail(
      `${decreasing} decreasing step(s) inside a stream, e.g. ${JSON.stringify(perStream.find((p) => p.examples.length)?.examples[0])}`,
    );
  }
  if (!opts.allowReorderAcrossNodes && reordered)
    row.fail(`${reordered} decreasing step(s) where a stream changed node`);
  if (torn) row.note(`${torn} torn trailing byte(s) dropped`);
  if (nodeChanges)
    row.note(`${nodeChanges} node change(s) inside streams${reordered ? `, ${reordered} of them stepping down` : ''}`);
  row.details.streams = perStream.map(({ examples, ...rest }) => rest);
  if (dup.duplicates) row.details.duplicateHolders = dup.examples.map((e) => e.holders.map((h) => h.name));
  return { segs, dup, ov, decreasing, reordered };
}
