/**
 * What every ORM sample of docs/orm.md (`drizzle.ts`, `kysely.ts`, …) gives the proof in
 * `proof.ts`: a session on one connection that inserts rows whose IDs come from the
 * application (a leased generator) or from the database (`flurry_next_id()`), and reads a
 * time window back through the ID bounds. The samples are the code the docs show; this
 * interface is only the seam the test drives them through.
 */
import type { DatabaseConnection } from '@flurry/coordination/testing';

/** The two engines the samples run on. */
export type Engine = 'postgres' | 'mariadb';

/** A row as the proof compares it: the ID as a bigint, whatever the ORM hands out. */
export interface Row {
  id: bigint;
  body: string;
}

/** Where the application's IDs come from (a leased generator; the proof records each). */
export interface IdSource {
  next(): bigint;
}

/** One ORM instance on one connection. */
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

/** An ORM sample: opens a session on a connection of the given engine. */
export interface OrmSample {
  readonly name: string;
  open(engine: Engine, connection: DatabaseConnection, ids: IdSource): Promise<OrmSession>;
}
