// UUIDv7 streams in the torture rows (issue 26). A UUID child (children/generator.mjs with
// `cfg.uuid`) writes each UUID as its 16 bytes. Its uniqueness rests on (millisecond,
// sequence, node) — the random bits promise nothing — so each UUID is checked (version 7,
// variant 10, strictly above the one before in its stream) and turned into the 64-bit key
// (ms − epoch, node, sequence), laid out like an ID of the row's Snowflake layout (same
// epoch, 1 ms unit, node and sequence widths): the row's `analyze` then checks the keys
// beside the Snowflake IDs with the same code, so a UUID node and a Snowflake node that
// held one slot at once (or a UUID generator repeating a millisecond's sequence) show up as
// duplicates and overlapping node runs, counted and printed as today.
import { readFileSync, existsSync, writeFileSync } from 'node:fs';

/**
 * The `cfg.uuid` of a UUID child in a row of `layout`: the layout's node width, and a 12-bit
 * sequence when the layout's sequence is 12 bits (so the keys fit its IDs' shape).
 * @example spawnGenerator(dir, 'u0', { ...cfg, uuid: uuidFormatFor(Layout.from(LAYOUTS.four)) });
 */
export function uuidFormatFor(layout) {
  return { nodeBits: layout.nodeFields.reduce((s, f) => s + f.bits, 0), sequenceBits: layout.sequenceBits };
}

/**
 * Reads a UUID stream, checks it and writes its keys to `<file>.keys` (8-byte words, as an
 * ID file). Returns the counts: UUIDs, malformed ones (not v7 / variant 10, or a sequence or
 * node outside the widths), steps not strictly increasing (as 128-bit values), torn bytes.
 * @example const c = uuidKeys('/tmp/x/u0.ids', layout, { nodeBits: 2, sequenceBits: 12 }); c.keysFile;
 */
export function uuidKeys(file, layout, format) {
  const buf = existsSync(file) ? readFileSync(file) : Buffer.alloc(0);
  const n = Math.floor(buf.length / 16);
  const keys = new BigUint64Array(n);
  const ext = format.sequenceBits - 12;
  const nodeShift = 62 - ext - format.nodeBits;
  const nodeMask = (1n << BigInt(format.nodeBits)) - 1n;
  const seqShift = BigInt(layout.sequenceBits);
  const tsShift = BigInt(layout.sequenceBits + format.nodeBits);
  const epoch = BigInt(layout.epochMs);
  let malformed = 0;
  let decreasing = 0;
  const examples = [];
  let prevHi = -1n;
  let prevLo = -1n;
  for (let i = 0; i < n; i++) {
    const hi = buf.readBigUInt64BE(i * 16);
    const lo = buf.readBigUInt64BE(i * 16 + 8);
    const ms = hi >> 16n;
    const version = (hi >> 12n) & 0xfn;
    const variant = lo >> 62n;
    const seq = ((hi & 0xfffn) << BigInt(ext)) | ((lo >> BigInt(62 - ext)) & ((1n << BigInt(ext)) - 1n));
    const node = (lo >> BigInt(nodeShift)) & nodeMask;
    if (version !== 7n || variant !== 2n || ms < epoch || seq >> seqShift !== 0n) {
      malformed++;
      if (examples.length < 3) examples.push({ index: i, uuid: buf.subarray(i * 16, i * 16 + 16).toString('hex') });
    }
    if (i > 0 && (hi < prevHi || (hi === prevHi && lo <= prevLo))) decreasing++;
    prevHi = hi;
    prevLo = lo;
    keys[i] = ((ms - epoch) << tsShift) | (node << seqShift) | seq;
  }
  const keysFile = `${file}.keys`;
  writeFileSync(keysFile, new Uint8Array(keys.buffer));
  return { uuids: n, malformed, decreasing, examples, tornBytes: buf.length % 16, keysFile };
}

/**
 * The files a row's `analyze` reads: each generator's ID file, or for a UUID child its key
 * file (made by {@link uuidKeys}); the UUID checks go into the row (failures for malformed or
 * decreasing UUIDs, a note with the counts).
 * @example analyze(row, analyzable(row, gens, layout), layoutOfKeys(layout), opts);
 */
export function analyzable(row, gens, layout) {
  let uuids = 0;
  let processes = 0;
  const out = gens.map((g) => {
    if (!g.cfg.uuid) return g;
    const c = uuidKeys(g.file, layout, g.cfg.uuid);
    processes++;
    uuids += c.uuids;
    if (c.malformed)
      row.fail(`${g.name}: ${c.malformed} UUID(s) not v7 of this format, e.g. ${JSON.stringify(c.examples[0])}`);
    if (c.decreasing) row.fail(`${g.name}: ${c.decreasing} UUID(s) not above the one before`);
    if (c.tornBytes) row.note(`${g.name}: ${c.tornBytes} torn trailing byte(s) dropped`);
    return { ...g, file: c.keysFile };
  });
  if (processes) {
    row.details.uuids = { processes, uuids };
    row.note(
      `${uuids.toLocaleString('en-US')} UUIDv7 from ${processes} UUID process(es) among the IDs, checked as (ms, node, sequence) keys: duplicates and decreases counted with the IDs`,
    );
  }
  return out;
}
