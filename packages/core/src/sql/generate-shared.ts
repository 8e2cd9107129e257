// The in-database generator's options and result (re-exported by `generate.ts`) and what its dialects share.
import { quoteSqlTable } from '../engines.js';
import type { Layout } from '../layout/layout.js';
import { sqlFn, type SqlDialect, type SqlFunction } from './functions.js';

/** What `generatorSql` needs: the dialect, the leased node and the registry row that holds the lease. */
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

/** The in-database generator's DDL: `statements` one by one, or `script` for the command-line client. */
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

function fnv31(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h & 0x7fffffff;
}

/** What the dialect modules build from, `o` validated: epoch and unit, floor tick, lanes, 31-bit lane-lock key. */
export function generatorConsts(layout: Layout, o: GeneratorSqlOptions, p: string, maxWaitMs: number, lanes: number) {
  return {
    layout,
    p,
    registry: quoteSqlTable(o.dialect, o.registryTable),
    epoch: layout.epochMs,
    unit: layout.unitMs,
    // The floor's tick is skipped entirely: IDs up to its last ms may have been issued.
    floorTick: o.floorMs < layout.epochMs ? -1 : layout.tickOf(o.floorMs),
    maxWaitMs,
    lanes,
    laneSize: (layout.maxSequence + 1) / lanes,
    lockKey: fnv31(`flurry lanes ${p}`),
    o,
  };
}
export type GeneratorConsts = ReturnType<typeof generatorConsts>;

/** The generator's functions in both dialects (`pg`: PostgreSQL, with its cursor functions and `next_ids`). */
export function generatorFunctions({ p, lanes }: GeneratorConsts, pg: boolean, idType: string): SqlFunction[] {
  const [int, big, clock] = pg
    ? ['integer', 'bigint', 'flurry.now_ms if set (tests), else clock_timestamp()']
    : ['INT', 'BIGINT', '@flurry_now_ms if set (tests), else SYSDATE(3)'];
  const lane = `The lane of this session (taken on its first call, held until it ends; lane ${lanes - 1} is shared).`;
  const cursor = "Starts this session's cursor (a temporary sequence) on its lane, after the lane's reservation.";
  const wait = 'Waits until the clock reaches tick t (at most maxWaitMs), else raises.';
  const release =
    'Frees the node in the registry after writing its high-water mark; next_id() raises from then on. Refused (FLURRY_E_SQL_NODE_IN_USE) while another session holds a lane.';
  return [
    sqlFn(p, 'now_ms', '', big, `The generator clock: ${clock}.`),
    sqlFn(p, 'lane', '', int, lane),
    ...(pg ? [sqlFn(p, 'cursor', 'l integer', 'void', cursor), sqlFn(p, 'cursor_wait', 't bigint', 'void', wait)] : []),
    sqlFn(p, 'next_id', '', idType, 'The next ID of the leased node.'),
    ...(pg ? [sqlFn(p, 'next_ids', 'n integer', `SETOF ${idType}`, 'n next IDs (1..100000), increasing.')] : []),
    sqlFn(p, 'release_node', '', big, release),
  ];
}

/**
 * PostgreSQL: how far ahead (ms, at least one tick) a session on its own lane reserves in the lane's row: one row
 * write per this much time per busy session, and the most a next holder of the lane waits before its first ID.
 */
export const GENERATOR_RESERVE_MS = 100;
