/**
 * What every ORM sample of docs/orm.md (`drizzle.ts`, `kysely.ts`, …) gives the proof in
 * `proof.ts`: a session on one connection that inserts rows whose IDs come from the
 * application (a leased generator) or from the database (`flurry_next_id()`), and reads a
 * time window back through the ID bounds. The samples are the code the docs show; this
 * interface is only the seam the test drives them through.
 */
import type { DatabaseConnection } from '@flurry/coordination/testing';

/**
 * The two engines the samples run on.
 *
 * @example
 * ```ts
 * const engines: Engine[] = ['postgres', 'mariadb'];
 * ```
 */
export type Engine = 'postgres' | 'mariadb';

/**
 * A row as the proof compares it: the ID as a bigint, whatever the ORM hands out.
 *
 * @example
 * ```ts
 * const row: Row = { id: 1859214170478923776n, body: 'w0-1' };
 * ```
 */
export interface Row {
  id: bigint;
  body: string;
}

/**
 * Where the application's IDs come from (a leased generator; the proof records each).
 *
 * @example
 * ```ts
 * const ids: IdSource = await leasedGenerator({ registry, layout: 'twitter' });
 * ```
 */
export interface IdSource {
  next(): bigint;
}

/**
 * One ORM instance on one connection.
 *
 * @example
 * ```ts
 * const s = await drizzleSample.open('postgres', db.connection, ids);
 * await s.insert(['a', 'b']);
 * const rows = await s.window(new Date(Date.now() - 60_000), new Date());
 * await s.close();
 * ```
 */
export interface OrmSession {
  /** Inserts rows into `events`, their IDs from the application's default (in one statement). */
  insert(bodies: readonly string[]): Promise<void>;
  /** Inserts rows into `orders`, their IDs from the database's default (`flurry_next_id()`). */
  insertDefault(bodies: readonly string[]): Promise<void>;
  /** The rows of `events` (or `orders`) issued in `[from, to)`, in ID order. */
  window(from: Date, to: Date, table?: 'events' | 'orders'): Promise<Row[]>;
  /** The rows of that window as the JSON an API would send. */
  json(from: Date, to: Date): Promise<string>;
  close(): Promise<void>;
}

/**
 * An ORM sample: opens a session on a connection of the given engine.
 *
 * @example
 * ```ts
 * const samples: OrmSample[] = [drizzleSample, kyselySample];
 * ```
 */
export interface OrmSample {
  readonly name: string;
  open(engine: Engine, connection: DatabaseConnection, ids: IdSource): Promise<OrmSession>;
}
