import { MAX_FOR_BITS } from '../codecs/alphabet.js';
import { ErrorCode, FlurryError } from '../errors.js';
import { plural } from '../text.js';
import { assertKnownOptions } from '../known-options.js';
import { parseId } from './parse-id.js';
import { DEFAULT_EPOCH_MS, PRESETS, isPresetName, type PresetName } from './presets.js';
import { idBounds, maxIdAt, minIdAt, type IdBounds } from './bounds.js';
import {
  LAYOUT_PARSE_OPTION_NAMES,
  UNIT_MS,
  parseFieldList,
  validateLayoutSpec,
  type LayoutParseOptions,
} from './spec.js';
import type { DecodedId, LayoutField, LayoutGeometry, LayoutInfo, LayoutSpec, TimeUnit } from './types.js';

/**
 * A validated, immutable ID layout: fields from the most significant bit down (docs/layouts.md#fields-epoch-and-unit).
 * Build one with {@link Layout.from} (preset name, spec or layout) or {@link Layout.parse} (the CLI's `--fields` form).
 */
export class Layout implements LayoutGeometry {
  /** The preset name, the spec's `name`, or `custom`. */
  readonly name: string;
  /** Unix ms of tick 0. */
  readonly epochMs: number;
  readonly unit: TimeUnit;
  /** Milliseconds per tick: 1, 10 or 1000. */
  readonly unitMs: number;
  /** Sum of the field widths (≤ 64). */
  readonly totalBits: number;
  /** All fields, most significant first (`nodeFields` likewise). */
  readonly fields: readonly LayoutField[];
  readonly nodeFields: readonly LayoutField[];
  readonly timestampField: LayoutField;
  readonly sequenceField: LayoutField;
  readonly timestampBits: number;
  readonly sequenceBits: number;
  /** `2^sequenceBits - 1` and `2^timestampBits - 1`. */
  readonly maxSequence: number;
  readonly maxTick: number;
  /** Number of distinct node identities (product of the node field sizes; 1 without node fields). */
  readonly nodeCount: number;
  /** `(maxSequence + 1) × ticks per second`: the most IDs one node can issue per second. */
  readonly maxIdsPerSecondPerNode: number;
  /** The first instant the timestamp field cannot hold: the layout's end of life. */
  readonly expiresAt: Date;
  /**
   * For a 64-bit layout, the first instant an ID has its top bit set (stops fitting a signed 64-bit integer / SQL
   * BIGINT). `null` for layouts of 63 bits or fewer. When the top field is not the timestamp, IDs of nodes whose
   * top-field value sets the top bit overflow from the epoch on, so this is the epoch.
   */
  readonly signedOverflowAt: Date | null;
  /** The largest value any ID of this layout can take (`2^totalBits - 1`). */
  readonly maxId: bigint;

  private constructor(name: string, spec: LayoutSpec) {
    const { fields, epochMs, unit } = validateLayoutSpec(spec);
    this.name = name;
    this.epochMs = epochMs;
    this.unit = unit;
    this.unitMs = UNIT_MS[unit];
    this.fields = Object.freeze(fields.map((f) => Object.freeze({ ...f })));
    this.nodeFields = Object.freeze(this.fields.filter((f) => f.kind === 'node'));
    this.timestampField = this.fields.find((f) => f.kind === 'timestamp')!;
    this.sequenceField = this.fields.find((f) => f.kind === 'sequence')!;
    this.totalBits = fields.reduce((s, f) => s + f.bits, 0);
    this.timestampBits = this.timestampField.bits;
    this.sequenceBits = this.sequenceField.bits;
    this.maxSequence = this.sequenceField.max;
    this.maxTick = this.timestampField.max;
    this.nodeCount = 2 ** this.nodeFields.reduce((s, f) => s + f.bits, 0);
    this.maxIdsPerSecondPerNode = ((this.maxSequence + 1) * 1000) / this.unitMs;
    this.expiresAt = new Date(epochMs + 2 ** this.timestampBits * this.unitMs);
    const top = this.fields[0];
    const topMs = top.kind === 'timestamp' ? 2 ** (top.bits - 1) * this.unitMs : 0;
    this.signedOverflowAt = this.totalBits < 64 ? null : new Date(epochMs + topMs);
    this.maxId = MAX_FOR_BITS[this.totalBits];
    Object.freeze(this);
  }

  /**
   * A layout for a preset name, a field list (`name:bits,…`, as {@link Layout.parse} reads it with its default epoch
   * and unit), a spec, or a layout (as is); else `FLURRY_E_LAYOUT_*`. See docs/layouts.md#custom-layouts.
   */
  static from(x: Layout | LayoutSpec | PresetName | (string & {})): Layout {
    if (x instanceof Layout) return x;
    if (typeof x === 'string') {
      if (isPresetName(x)) return (presetCache[x] ??= new Layout(x, PRESETS[x]));
      // A field list, the form the unknown-preset message below suggests: the same as Layout.parse.
      if (x.includes(':')) return Layout.parse(x);
      throw new FlurryError(
        ErrorCode.LAYOUT_UNKNOWN_PRESET,
        `Unknown layout preset ${JSON.stringify(x)}; the presets are ${Object.keys(PRESETS).join(', ')} (or describe the fields: timestamp:41,worker:10,sequence:12, and Layout.parse(fields, { epoch, unit }) to set the epoch and unit).`,
        { preset: x, presets: Object.keys(PRESETS) },
      );
    }
    if (x === null || typeof x !== 'object' || !Array.isArray(x.fields)) {
      throw new FlurryError(
        ErrorCode.LAYOUT_SPEC,
        'A layout must be a preset name, a Layout, or { fields: [{ name, bits }, …], epoch, unit? } with fields listed from the most significant bit down.',
        { got: typeof x },
      );
    }
    return new Layout(typeof x.name === 'string' && x.name !== '' ? x.name : 'custom', x);
  }

  /** Parses the CLI's `--fields` form (`name:bits`, most significant first); epoch default {@link DEFAULT_EPOCH_MS}. */
  static parse(fields: string, opts: LayoutParseOptions = {}): Layout {
    assertKnownOptions(opts, LAYOUT_PARSE_OPTION_NAMES, 'Layout.parse options');
    const specs = parseFieldList(fields);
    // Digits stay a string: parseEpoch reads them, and a refusal quotes them as given.
    const epoch = opts.epoch === undefined || opts.epoch === '' ? DEFAULT_EPOCH_MS : opts.epoch;
    return Layout.from({ name: opts.name, fields: specs, epoch, unit: (opts.unit ?? '1ms') as TimeUnit });
  }

  /** Checks node values (each node field an integer in `0 … max`, no other names): `FLURRY_E_NODE_OUT_OF_RANGE`. */
  validateNode(node: Record<string, number>): void {
    if (node === null || typeof node !== 'object') {
      throw new FlurryError(
        ErrorCode.NODE_OUT_OF_RANGE,
        `The node must be an object of node field values: ${this.nodeHint()}.`,
        {},
      );
    }
    const key = Object.keys(node).find((k) => !this.nodeFields.some((f) => f.name === k));
    if (key !== undefined) {
      throw new FlurryError(
        ErrorCode.NODE_OUT_OF_RANGE,
        `The ${this.name} layout has no node field ${JSON.stringify(key)}; its node fields are: ${this.nodeHint()}.`,
        { field: key, layout: this.name },
      );
    }
    for (const f of this.nodeFields) {
      const v = node[f.name];
      if (v === undefined) {
        throw new FlurryError(
          ErrorCode.NODE_OUT_OF_RANGE,
          `The node value for ${f.name} is missing; give ${f.name} in 0..${f.max}.`,
          { field: f.name, min: 0, max: f.max },
        );
      }
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > f.max) {
        throw new FlurryError(
          ErrorCode.NODE_OUT_OF_RANGE,
          `Node field ${f.name} = ${String(v)} is out of range; ${f.name} is ${plural(f.bits, 'bit')} wide, so it must be an integer in 0..${f.max}.`,
          { field: f.name, value: typeof v === 'number' ? v : String(v), min: 0, max: f.max },
        );
      }
    }
  }

  /** The node fields' bits, in position, as one bigint (validates the node first). */
  nodeBits(node: Record<string, number>): bigint {
    this.validateNode(node);
    return this.nodeFields.reduce((bits, f) => bits | (BigInt(node[f.name]) << BigInt(f.shift)), 0n);
  }

  /** The tick holding a Unix ms time; may be negative or beyond `maxTick` (callers check). */
  tickOf(unixMs: number): number {
    return Math.floor((unixMs - this.epochMs) / this.unitMs);
  }

  /** {@link minIdAt} for this layout. */
  minIdAt(unixMs: number | Date): bigint {
    return minIdAt(this, unixMs);
  }

  /** {@link maxIdAt} for this layout. */
  maxIdAt(unixMs: number | Date): bigint {
    return maxIdAt(this, unixMs);
  }

  /** {@link idBounds} for this layout. */
  bounds(fromMs: number | Date, toMs: number | Date): IdBounds {
    return idBounds(this, fromMs, toMs);
  }

  /**
   * Builds an ID from its parts (`unixMs` truncated to the unit): `FLURRY_E_CLOCK_BEFORE_EPOCH`, `_LAYOUT_EXPIRED`,
   * `_INVALID_OPTION` (sequence out of range) or `_NODE_OUT_OF_RANGE`.
   */
  compose(parts: { unixMs: number; sequence: number; node: Record<string, number> }): bigint {
    const { unixMs, sequence } = parts;
    if (typeof unixMs !== 'number' || !Number.isFinite(unixMs)) {
      throw new FlurryError(
        ErrorCode.INVALID_OPTION,
        `unixMs must be a finite number of Unix milliseconds, got ${String(unixMs)}.`,
        { unixMs: String(unixMs) },
      );
    }
    const tick = this.tickOf(unixMs);
    if (tick < 0) {
      throw new FlurryError(
        ErrorCode.CLOCK_BEFORE_EPOCH,
        `Time ${new Date(unixMs).toISOString()} is before the ${this.name} layout's epoch ${new Date(this.epochMs).toISOString()}; IDs can only carry times from the epoch on.`,
        { unixMs, epochMs: this.epochMs },
      );
    }
    if (tick > this.maxTick) {
      throw new FlurryError(
        ErrorCode.LAYOUT_EXPIRED,
        `Time ${new Date(unixMs).toISOString()} is past the ${this.name} layout's end of life ${this.expiresAt.toISOString()}; the ${this.timestampBits}-bit timestamp field cannot hold it.`,
        { unixMs, expiresAt: this.expiresAt.toISOString() },
      );
    }
    if (typeof sequence !== 'number' || !Number.isInteger(sequence) || sequence < 0 || sequence > this.maxSequence) {
      throw new FlurryError(
        ErrorCode.INVALID_OPTION,
        `sequence = ${String(sequence)} is out of range; it must be an integer in 0..${this.maxSequence}.`,
        { sequence: String(sequence), max: this.maxSequence },
      );
    }
    return (
      (BigInt(tick) << BigInt(this.timestampField.shift)) |
      (BigInt(sequence) << BigInt(this.sequenceField.shift)) |
      this.nodeBits(parts.node)
    );
  }

  /** Splits an ID (bigint, decimal string or safe integer) into its fields, Unix ms and ISO time. */
  decode(id: bigint | string | number): DecodedId {
    const value = parseId(id, this);
    const fields: Record<string, number> = {};
    let tick = 0;
    let sequence = 0;
    for (const f of this.fields) {
      const v = Number((value >> BigInt(f.shift)) & MAX_FOR_BITS[f.bits]);
      if (f.kind === 'timestamp') tick = v;
      else if (f.kind === 'sequence') sequence = v;
      else fields[f.name] = v;
    }
    const unixMs = this.epochMs + tick * this.unitMs;
    return { id: value, unixMs, timestamp: new Date(unixMs).toISOString(), sequence, fields };
  }

  /** The `--fields` form of this layout, e.g. `timestamp:41,worker:10,sequence:12`. */
  toFieldsString(): string {
    return this.fields.map((f) => `${f.name}:${f.bits}`).join(',');
  }

  /** The spec that rebuilds this layout (plain data: JSON, worker threads). */
  toSpec(): LayoutSpec {
    return {
      name: this.name,
      fields: this.fields.map((f) => ({ name: f.name, bits: f.bits })),
      epoch: this.epochMs,
      unit: this.unit,
    };
  }

  /**
   * A key naming the ID space a node of this layout owns: epoch, unit, timestamp and sequence positions and the node
   * bits. Two layouts that would issue identical IDs for two node values (e.g. `twitter` datacenter 1/worker 2 and
   * `leaf` worker 34) get the same key.
   */
  idSpaceKey(nodeBits: bigint): string {
    const t = this.timestampField;
    const s = this.sequenceField;
    return `e${this.epochMs}-u${this.unitMs}-t${t.shift}.${t.bits}-s${s.shift}.${s.bits}-n${nodeBits.toString(16)}`;
  }

  /** A JSON-safe summary: fields, epoch, unit, end of life, capacity. */
  describe(): LayoutInfo {
    return {
      name: this.name,
      totalBits: this.totalBits,
      epoch: new Date(this.epochMs).toISOString(),
      epochMs: this.epochMs,
      unit: this.unit,
      unitMs: this.unitMs,
      fields: this.fields.map(({ name, bits, shift, kind }) => ({
        name,
        bits,
        shift,
        kind,
        max: `${MAX_FOR_BITS[bits]}`,
      })),
      spec: this.toFieldsString(),
      expiresAt: this.expiresAt.toISOString(),
      signedOverflowAt: this.signedOverflowAt ? this.signedOverflowAt.toISOString() : null,
      nodeCount: this.nodeCount,
      maxSequence: this.maxSequence,
      maxTick: this.maxTick,
      maxIdsPerSecondPerNode: this.maxIdsPerSecondPerNode,
      maxId: this.maxId.toString(),
      safeInteger: this.totalBits <= 53,
      signed64: this.totalBits <= 63,
    };
  }

  private nodeHint(): string {
    return this.nodeFields.length ? this.nodeFields.map((f) => `${f.name} (0..${f.max})`).join(', ') : 'none (pass {})';
  }
}

const presetCache: Partial<Record<PresetName, Layout>> = {};
