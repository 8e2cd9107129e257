/**
 * Internals shared by the generator's dialect modules (not exported from the package).
 */
import type { Layout } from '../layout/layout.js';
import type { GeneratorSqlOptions } from './generate.js';

/**
 * What the dialect modules build from (validated by `generatorSql`).
 *
 * @example
 * ```ts
 * const k = c.laneSize; // IDs of one lane per tick: (maxSequence + 1) / lanes
 * ```
 */
export interface GeneratorConsts {
  readonly layout: Layout;
  readonly p: string;
  readonly registry: string;
  readonly epoch: number;
  readonly unit: number;
  readonly maxTick: number;
  readonly maxSeq: number;
  readonly tsShift: number;
  readonly seqShift: number;
  readonly floorTick: number;
  readonly maxWaitMs: number;
  readonly name: string;
  readonly spec: string;
  /** Lane count and IDs per lane per tick. */
  readonly lanes: number;
  readonly laneSize: number;
  /** A 31-bit key naming this generator's lane locks (PostgreSQL advisory locks). */
  readonly lockKey: number;
  readonly o: GeneratorSqlOptions;
}

/**
 * A string literal of SQL (quotes doubled).
 *
 * @example
 * ```ts
 * lit("it's"); // 'it''s'
 * ```
 */
export const lit = (s: string): string => `'${s.replace(/'/g, "''")}'`;

/**
 * PostgreSQL: how far ahead (ms, at least one tick) a session on a lane of its own reserves in its lane's
 * row: one row write per this much time per busy session, and at most this much of the clock
 * for a next holder of the lane to wait before its first ID.
 *
 * @example
 * ```ts
 * const reserveTicks = Math.max(1, Math.ceil(GENERATOR_RESERVE_MS / layout.unitMs));
 * ```
 */
export const GENERATOR_RESERVE_MS = 100;
