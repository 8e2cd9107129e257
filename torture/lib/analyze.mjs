// Turns the binary outputs of a scenario's children into a report row: IDs checked,
// duplicates across the union, decreasing steps inside each stream, and node runs that
// overlap in time (two holders under one node ID at once).
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
 * @param row      the report Row to fill
 * @param files    [{ name, file }] binary ID files, one per stream (a process's output)
 * @param layout   a core Layout (for the node and timestamp fields)
 * @param opts.orderPromised  true when every stream must be strictly increasing under one node
 * @param opts.allowReorderAcrossNodes  true when a stream may step down when its node changed
 * @param opts.issuers  when given, the names of the streams that each come from one issuer in order
 * @example analyze(row, [{ name: 'p0', file: '/tmp/x/p0.ids' }], Layout.from('twitter'), { orderPromised: true });
 */
export function analyze(row, files, layout, opts = {}) {
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
  return { streams, segs, dup, ov, decreasing, reordered };
}
