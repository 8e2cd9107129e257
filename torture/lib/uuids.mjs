// UUIDv7 streams in the torture rows (issue 26). A UUID holder (conformance/holder.ts with
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
  const tsShift = layout.sequenceBits + format.nodeBits;
  // The runner checks rows on its one thread while other rows run: tens of millions of UUIDs
  // must take seconds, not minutes, so the usual widths are read as 32-bit words (no BigInt
  // per UUID); other widths take the BigInt path.
  const fast = ext <= 30 && nodeShift >= 32 && format.nodeBits <= 30 && tsShift <= 16;
  const read = fast ? fastFields : bigFields;
  const keyView = new DataView(keys.buffer);
  const at = { ms: 0, version: 0, variant: 0, seq: 0, node: 0 };
  let malformed = 0;
  let decreasing = 0;
  const examples = [];
  let p0 = -1;
  let p1 = -1;
  let p2 = -1;
  let p3 = -1;
  for (let i = 0; i < n; i++) {
    const o = i * 16;
    const h0 = buf.readUInt32BE(o);
    const h1 = buf.readUInt32BE(o + 4);
    const l0 = buf.readUInt32BE(o + 8);
    const l1 = buf.readUInt32BE(o + 12);
    read(at, h0, h1, l0, l1, ext, nodeShift, format.nodeBits);
    if (at.version !== 7 || at.variant !== 2 || at.ms < layout.epochMs || at.seq >= 2 ** layout.sequenceBits) {
      malformed++;
      if (examples.length < 3) examples.push({ index: i, uuid: buf.subarray(o, o + 16).toString('hex') });
    }
    if (i > 0 && (h0 < p0 || (h0 === p0 && (h1 < p1 || (h1 === p1 && (l0 < p2 || (l0 === p2 && l1 <= p3)))))))
      decreasing++;
    p0 = h0;
    p1 = h1;
    p2 = l0;
    p3 = l1;
    const key = (at.ms - layout.epochMs) * 2 ** tsShift + at.node * 2 ** layout.sequenceBits + at.seq;
    if (Number.isSafeInteger(key) && key >= 0) {
      keyView.setUint32(i * 8, key % 2 ** 32, true);
      keyView.setUint32(i * 8 + 4, Math.floor(key / 2 ** 32), true);
    } else {
      keys[i] =
        (BigInt(Math.max(0, at.ms - layout.epochMs)) << BigInt(tsShift)) |
        (BigInt(at.node) << BigInt(layout.sequenceBits)) |
        BigInt(at.seq);
    }
  }
  const keysFile = `${file}.keys`;
  writeFileSync(keysFile, new Uint8Array(keys.buffer));
  return { uuids: n, malformed, decreasing, examples, tornBytes: buf.length % 16, keysFile };
}

/** The fields of one UUID from its four big-endian words, for ext ≤ 30 and a node above bit 32 of rand_b. */
function fastFields(at, h0, h1, l0, l1, ext, nodeShift, nodeBits) {
  at.ms = h0 * 65536 + (h1 >>> 16);
  at.version = (h1 >>> 12) & 0xf;
  at.variant = l0 >>> 30;
  const r0 = l0 & 0x3fffffff; // rand_b bits 61..32
  at.seq = (h1 & 0xfff) * 2 ** ext + (ext ? r0 >>> (30 - ext) : 0);
  at.node = Math.floor(r0 / 2 ** (nodeShift - 32)) % 2 ** nodeBits;
}

/** The same fields through BigInt, for any widths. */
function bigFields(at, h0, h1, l0, l1, ext, nodeShift, nodeBits) {
  const hi = (BigInt(h0) << 32n) | BigInt(h1);
  const lo = (BigInt(l0) << 32n) | BigInt(l1);
  at.ms = Number(hi >> 16n);
  at.version = Number((hi >> 12n) & 0xfn);
  at.variant = Number(lo >> 62n);
  at.seq = Number(((hi & 0xfffn) << BigInt(ext)) | ((lo >> BigInt(62 - ext)) & ((1n << BigInt(ext)) - 1n)));
  at.node = Number((lo >> BigInt(nodeShift)) & ((1n << BigInt(nodeBits)) - 1n));
}

/**
 * The files a row's `analyze` reads: each generator's ID file, or for a UUID child its key
 * file (made by {@link uuidKeys}); the UUID checks go into the row (failures for malformed or
 * decreasing UUIDs, a note with the counts).
 * @example analyzeNow(row, analyzable(row, gens, layout), layout, opts); // what analyze.mjs does on its thread
 */
export function analyzable(row, gens, layout) {
  let uuids = 0;
  let processes = 0;
  const out = gens.map((g) => {
    if (!g.cfg?.uuid) return g;
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
