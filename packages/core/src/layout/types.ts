/** The resolution of the timestamp field. */
export type TimeUnit = '1ms' | '10ms' | '1s';

/** One field as written in a spec: exactly one `timestamp` and one `sequence`; any other name is a node field. */
export interface FieldSpec {
  name: string;
  bits: number;
}

/**
 * A layout as a user writes it: fields from the most significant bit down, the epoch (Unix ms, an ISO date string or a
 * Date) and the unit (default `1ms`).
 */
export interface LayoutSpec {
  name?: string;
  fields: FieldSpec[];
  epoch: number | string | Date;
  unit?: TimeUnit;
}

/** A field of a validated layout: bits `shift … shift + bits - 1`; `max` is `2^bits - 1` (exact up to 53 bits). */
export interface LayoutField {
  readonly name: string;
  readonly bits: number;
  readonly shift: number;
  readonly max: number;
  readonly kind: 'timestamp' | 'sequence' | 'node';
}

/** An ID split back into its parts. */
export interface DecodedId {
  id: bigint;
  unixMs: number;
  /** ISO 8601 form of `unixMs`. */
  timestamp: string;
  sequence: number;
  /** The node fields by name. */
  fields: Record<string, number>;
}

/** The JSON-safe summary of a layout (`flurry layout`, `GET /v1/layout`): decimal strings and ISO dates. */
export interface LayoutInfo {
  name: string;
  totalBits: number;
  epoch: string;
  epochMs: number;
  unit: TimeUnit;
  unitMs: number;
  fields: Array<{ name: string; bits: number; shift: number; kind: 'timestamp' | 'sequence' | 'node'; max: string }>;
  /** `--fields` form, e.g. `timestamp:41,datacenter:5,worker:5,sequence:12`. */
  spec: string;
  expiresAt: string;
  signedOverflowAt: string | null;
  nodeCount: number;
  maxSequence: number;
  maxTick: number;
  maxIdsPerSecondPerNode: number;
  maxId: string;
  /** True when every ID is below 2^53 (exact as a JavaScript number). */
  safeInteger: boolean;
  /** True when every ID fits a signed 64-bit integer (SQL BIGINT) for the whole lifetime. */
  signed64: boolean;
}

/** What `parseId`, `minIdAt`, `maxIdAt` and `idBounds` read of a `Layout` (apart, so they do not import it). */
export interface LayoutGeometry {
  readonly name: string;
  readonly epochMs: number;
  readonly unitMs: number;
  readonly totalBits: number;
  readonly fields: readonly LayoutField[];
  readonly timestampField: LayoutField;
  readonly maxTick: number;
  readonly expiresAt: Date;
  readonly maxId: bigint;
  tickOf(unixMs: number): number;
}
