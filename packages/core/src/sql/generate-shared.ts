/**
 * The in-database generator's options and result (re-exported by `generate.ts`) and the internals its dialect
 * modules share.
 */
import type { Layout } from '../layout/layout.js';
import type { SqlDialect, SqlFunction } from './functions.js';

/**
 * What `generatorSql` needs: the dialect, the leased node and the registry row that
 * holds the lease.
 */
export interface GeneratorSqlOptions {
  readonly dialect: SqlDialect;
  /** Function and state-table prefix (default `flurry_`). */
  readonly prefix?: string;
  /** The registry table (`flurry_nodes` or `schema.flurry_nodes`). */
  readonly registryTable: string;
  /** The registry row: namespace, slot and the lease token written there. */
  readonly namespace: string;
  readonly slot: number;
  readonly token: string;
  /** The leased node's field bits, in position (`layout.nodeBits(node)`). */
  readonly nodeBits: bigint;
  /** Issue only after this Unix ms (the slot's high-water mark, plus its TTL after an unclean release). */
  readonly floorMs: number;
  /** How long `next_id()` may wait for the clock (sequence used up, clock stepped back) before it raises; default 1000. */
  readonly maxWaitMs?: number;
  /** Lanes (sub-ranges of the sequence field, one per session); default `generatorLanes`. A power of two. */
  readonly lanes?: number;
}

/**
 * The DDL of the in-database generator: `statements` to run one by one, `script` for the
 * command-line client, and the functions it defines.
 */
export interface GeneratorSql {
  readonly functions: readonly SqlFunction[];
  readonly statements: readonly string[];
  readonly script: string;
  /** Lanes the sequence field is split into (the last one shared), and the IDs of one lane per tick. */
  readonly lanes: number;
  readonly laneSize: number;
}

/** What a dialect module builds; `generatorSql` adds the script. */
export type GeneratorDdl = Pick<GeneratorSql, 'functions' | 'statements'>;

/** What the dialect modules build from (validated by `generatorSql`). */
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
 * PostgreSQL: how far ahead (ms, at least one tick) a session on a lane of its own reserves in its lane's
 * row: one row write per this much time per busy session, and at most this much of the clock
 * for a next holder of the lane to wait before its first ID.
 */
export const GENERATOR_RESERVE_MS = 100;
