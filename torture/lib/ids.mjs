// Checking millions of IDs cheaply. Children write every ID they were handed as 8-byte
// little-endian words (BigUint64Array chunks); here the parent reads those files, checks
// each stream's order, merges them all, sorts once and scans for equal neighbours.
import { readFileSync, existsSync, statSync } from 'node:fs';

/**
 * Reads a binary ID file into a BigUint64Array (a torn trailing word is dropped and counted).
 * @example const { ids } = readIds('/tmp/x/p0.ids'); ids.length;
 */
export function readIds(file) {
  if (!existsSync(file)) return { ids: new BigUint64Array(0), tornBytes: 0 };
  const buf = readFileSync(file);
  const whole = buf.length - (buf.length % 8);
  // Copy into an 8-byte aligned buffer (readFileSync may hand back an unaligned slice).
  const aligned = new ArrayBuffer(whole);
  new Uint8Array(aligned).set(buf.subarray(0, whole));
  return { ids: new BigUint64Array(aligned), tornBytes: buf.length % 8 };
}

/**
 * Size in IDs of a binary ID file (without reading it).
 * @example countIds('/tmp/x/p0.ids'); // file size / 8
 */
export function countIds(file) {
  return existsSync(file) ? Math.floor(statSync(file).size / 8) : 0;
}

/**
 * A node-field extractor for a layout whose fields run timestamp | node… | sequence
 * (every layout the suite uses): `(id >> sequenceBits) & nodeMask`.
 * @example const nodeOf = nodeExtractor(Layout.from('twitter')); nodeOf(id); // datacenter << 5 | worker
 */
export function nodeExtractor(layout) {
  const seqBits = BigInt(layout.sequenceBits);
  const nodeBits = layout.nodeFields.reduce((s, f) => s + f.bits, 0);
  const mask = (1n << BigInt(nodeBits)) - 1n;
  return (id) => Number((id >> seqBits) & mask);
}

/**
 * Checks one process's stream in the order it was handed out: `decreasing` counts steps
 * where an ID is not above its predecessor under the same node value (a broken promise
 * of order); `reorderedAcrossNodes` counts steps down where the node changed (the process
 * lost its lease and was given another node ID, which the generator does not order).
 * @example checkStream(ids, nodeOf).decreasing; // 0 for a healthy stream
 */
export function checkStream(ids, nodeOf) {
  let decreasing = 0;
  let reorderedAcrossNodes = 0;
  let nodeChanges = 0;
  const examples = [];
  for (let i = 1; i < ids.length; i++) {
    const a = ids[i - 1];
    const b = ids[i];
    const sameNode = nodeOf(a) === nodeOf(b);
    if (!sameNode) nodeChanges++;
    if (b > a) continue;
    if (sameNode) {
      decreasing++;
      if (examples.length < 3) examples.push({ index: i, prev: a.toString(), next: b.toString() });
    } else {
      reorderedAcrossNodes++;
    }
  }
  return { decreasing, reorderedAcrossNodes, nodeChanges, examples };
}

/**
 * Merges every stream, sorts, and counts duplicates (each extra copy counts once).
 * Returns up to `maxExamples` duplicated values with the streams that hold them.
 * @example findDuplicates([{ name: 'a', ids: a }, { name: 'b', ids: b }]).duplicates;
 */
export function findDuplicates(streams, maxExamples = 5) {
  let total = 0;
  for (const s of streams) total += s.ids.length;
  const all = new BigUint64Array(total);
  let o = 0;
  for (const s of streams) {
    all.set(s.ids, o);
    o += s.ids.length;
  }
  all.sort();
  let duplicates = 0;
  const dupValues = [];
  for (let i = 1; i < all.length; i++) {
    if (all[i] === all[i - 1]) {
      duplicates++;
      if (dupValues.length < maxExamples && dupValues[dupValues.length - 1] !== all[i]) dupValues.push(all[i]);
    }
  }
  const examples = dupValues.map((v) => ({
    id: v.toString(),
    holders: streams.filter((s) => s.ids.includes(v)).map((s) => ({ name: s.name, index: s.ids.indexOf(v) })),
  }));
  return { total, duplicates, examples };
}

/**
 * The timestamp field (in layout units since the epoch) of an ID: `id >> (nodeBits + sequenceBits)`.
 * @example const tsOf = tsExtractor(layout); tsOf(id) * layout.unitMs + layout.epochMs; // Unix ms
 */
export function tsExtractor(layout) {
  const nodeBits = layout.nodeFields.reduce((s, f) => s + f.bits, 0);
  const shift = BigInt(nodeBits + layout.sequenceBits);
  return (id) => Number(id >> shift);
}

/**
 * Cuts a stream into runs of one node value: `{ stream, node, minTs, maxTs, count }`. A
 * run also ends where the stream's timestamps jump by more than `gapTicks`: a process
 * that lost a node ID and got the same one back later must not look as if it had held it
 * all along (splitting only narrows the ranges; two holders issuing under one node ID at
 * the same time still produce overlapping runs).
 * @example const runs = segments('p0', ids, nodeOf, tsOf); // [{ node: 3, minTs, maxTs, count }, …]
 */
export function segments(name, ids, nodeOf, tsOf, gapTicks = 20) {
  const out = [];
  let cur = null;
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    const node = nodeOf(id);
    const ts = tsOf(id);
    if (!cur || cur.node !== node || ts - cur.lastTs > gapTicks || ts < cur.lastTs - gapTicks) {
      cur = { stream: name, node, firstTs: ts, lastTs: ts, minTs: ts, maxTs: ts, count: 0, startIndex: i };
      out.push(cur);
    }
    cur.count++;
    cur.lastTs = ts;
    if (ts < cur.minTs) cur.minTs = ts;
    if (ts > cur.maxTs) cur.maxTs = ts;
  }
  return out;
}

/**
 * The strongest check the suite makes: two runs of the same node value (in different
 * streams, or in one stream after it held another node in between) whose timestamp
 * ranges touch or overlap mean two holders issued under one node ID at the same time, or
 * a new holder did not start strictly above the previous one's high-water mark — a
 * duplicate waiting to happen even when no two IDs happened to collide.
 * @example findNodeOverlaps([...runsOfP0, ...runsOfP1]).overlaps; // 0 when no node ID was shared
 */
export function findNodeOverlaps(segs, maxExamples = 5) {
  const byNode = new Map();
  for (const s of segs) {
    if (!byNode.has(s.node)) byNode.set(s.node, []);
    byNode.get(s.node).push(s);
  }
  let overlaps = 0;
  const examples = [];
  for (const [node, list] of byNode) {
    list.sort((a, b) => a.minTs - b.minTs || a.maxTs - b.maxTs);
    for (let i = 1; i < list.length; i++) {
      // Compare with every earlier run still reaching this far (bounded: runs are few).
      for (let j = i - 1; j >= 0; j--) {
        const a = list[j];
        const b = list[i];
        if (a.maxTs >= b.minTs) {
          overlaps++;
          if (examples.length < maxExamples)
            examples.push({
              node,
              a: { stream: a.stream, minTs: a.minTs, maxTs: a.maxTs, count: a.count },
              b: { stream: b.stream, minTs: b.minTs, maxTs: b.maxTs, count: b.count },
            });
        }
      }
    }
  }
  return { overlaps, examples };
}

/**
 * The first ID of `ids` stamped after `wall` (Unix ms): how long after `wall` it was stamped, or
 * Infinity when none was. What a row judges a holder's recovery by.
 * @example firstAfterMs(ids, tsExtractor(layout), layout.epochMs, f.upWall); // 806
 */
export function firstAfterMs(ids, tsOf, epochMs, wall) {
  let first = Infinity;
  for (let i = 0; i < ids.length; i++) {
    const ms = tsOf(ids[i]) + epochMs;
    if (ms > wall && ms < first) first = ms;
  }
  return first - wall;
}

/**
 * One holder's IDs around engine faults `[{ effectiveWall, endWall, upWall }]`: per fault,
 * the IDs stamped between its deadline (`effectiveWall + ttlMs`) and the engine's return
 * (`late`, and the `worst` ms past the deadline) and the first ID after `upWall`
 * (`recoveryMs`); and the longest gap between two consecutive IDs (`gapTicks`).
 */
export function scanFaults(ids, tsOf, epochMs, faults, ttlMs) {
  const perFault = faults.map((f) => {
    const fenceFrom = f.effectiveWall + ttlMs;
    let late = 0;
    let worst = 0;
    for (let i = 0; i < ids.length; i++) {
      const ms = tsOf(ids[i]) + epochMs;
      if (ms > fenceFrom && ms < f.endWall) {
        late++;
        worst = Math.max(worst, ms - fenceFrom);
      }
    }
    return { late, worst, recoveryMs: firstAfterMs(ids, tsOf, epochMs, f.upWall) };
  });
  let gapTicks = 0;
  for (let i = 1; i < ids.length; i++) gapTicks = Math.max(gapTicks, tsOf(ids[i]) - tsOf(ids[i - 1]));
  return { perFault, gapTicks };
}
