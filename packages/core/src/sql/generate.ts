/**
 * SQL that issues IDs inside the database under a node ID leased in the Flurry registry
 * table: a one-row state table `<prefix>generator` (the node, the lease token, the last tick
 * and sequence) and the functions `<prefix>next_id()` (PostgreSQL also
 * `<prefix>next_ids(n)`), `<prefix>release_node()` and `<prefix>now_ms()`.
 *
 * `next_id()` takes the state row's lock (so concurrent sessions are serialized on it),
 * checks that the registry row still holds the lease token (fencing: a released or taken
 * over node issues nothing), and issues the next ID: a new tick starts at sequence 0; within
 * the last tick (or when the database clock has stepped back behind it) it keeps counting in
 * the last tick; when that tick's sequence is used up it waits for the clock to pass it, at
 * most `maxWaitMs`, then raises. IDs therefore never repeat and always increase. The clock is
 * the database's (`clock_timestamp()`, `SYSDATE(3)`); tests override it with the PostgreSQL
 * setting `flurry.now_ms` or the MySQL variable `@flurry_now_ms`.
 *
 * @example
 * ```ts
 * import { Layout, generatorSql } from '@flurry/core';
 * const layout = Layout.from('twitter');
 * const ddl = generatorSql(layout, {
 *   dialect: 'postgres', registryTable: 'flurry_nodes', namespace: 'orders/datacenter-0', slot: 3,
 *   token: 'f00d', nodeBits: layout.nodeBits({ datacenter: 0, worker: 3 }), floorMs: 0,
 * });
 * ```
 */
import { ErrorCode, FlurryError } from '../errors.js';
import { assertKnownOptions } from '../known-options.js';
import type { Layout } from '../layout/layout.js';
import { sqlPrefix, type SqlDialect, type SqlFunction } from './ddl.js';

/**
 * What {@link generatorSql} needs: the dialect, the leased node and the registry row that
 * holds the lease.
 *
 * @example
 * ```ts
 * const o: GeneratorSqlOptions = { dialect: 'mysql', registryTable: 'flurry_nodes', namespace: 'default/datacenter-0',
 *   slot: 0, token: 'ab12', nodeBits: 0n, floorMs: 0 };
 * ```
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
}

/**
 * The DDL of the in-database generator: `statements` to run one by one, `script` for the
 * command-line client, and the functions it defines.
 *
 * @example
 * ```ts
 * for (const s of generatorSql(layout, opts).statements) await client.query(s);
 * ```
 */
export interface GeneratorSql {
  readonly functions: readonly SqlFunction[];
  readonly statements: readonly string[];
  readonly script: string;
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const lit = (s: string): string => `'${s.replace(/'/g, "''")}'`;

function bad(what: string, message: string, value: unknown): FlurryError {
  return new FlurryError(ErrorCode.INVALID_OPTION, message, { [what]: String(value) });
}

/**
 * Builds the generator DDL for a leased node (see the module comment). Throws
 * `FLURRY_E_INVALID_OPTION` for a bad table name, token, slot, floor or wait bound.
 *
 * @example
 * ```ts
 * generatorSql(Layout.from('twitter'), { dialect: 'postgres', registryTable: 'flurry_nodes',
 *   namespace: 'default/datacenter-0', slot: 5, token: 'c0ffee', nodeBits: 5n << 12n, floorMs: Date.now() }).script;
 * ```
 */
export function generatorSql(layout: Layout, o: GeneratorSqlOptions): GeneratorSql {
  assertKnownOptions(
    o,
    ['dialect', 'prefix', 'registryTable', 'namespace', 'slot', 'token', 'nodeBits', 'floorMs', 'maxWaitMs'],
    'generatorSql options',
  );
  const p = sqlPrefix(o.prefix);
  if (o.dialect !== 'postgres' && o.dialect !== 'mysql')
    throw bad('dialect', `Unknown SQL dialect ${JSON.stringify(o.dialect)}; use postgres or mysql.`, o.dialect);
  const parts = typeof o.registryTable === 'string' ? o.registryTable.split('.') : [];
  if (parts.length < 1 || parts.length > 2 || !parts.every((x) => IDENT.test(x)))
    throw bad(
      'registryTable',
      `The registry table ${JSON.stringify(o.registryTable)} is not a table name; use letters, digits and _ (optionally schema.table).`,
      o.registryTable,
    );
  if (typeof o.token !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(o.token))
    throw bad('token', 'The lease token must be 1 to 64 letters, digits, - or _.', o.token);
  if (!Number.isSafeInteger(o.slot) || o.slot < 0)
    throw bad('slot', `slot must be an integer from 0, got ${o.slot}.`, o.slot);
  if (typeof o.namespace !== 'string' || o.namespace.length === 0 || o.namespace.length > 255)
    throw bad('namespace', 'The namespace must be 1 to 255 characters.', o.namespace);
  if (!Number.isSafeInteger(o.floorMs) || o.floorMs < 0)
    throw bad('floorMs', `floorMs must be whole Unix ms from 0, got ${o.floorMs}.`, o.floorMs);
  const maxWaitMs = o.maxWaitMs ?? 1000;
  if (!Number.isSafeInteger(maxWaitMs) || maxWaitMs < 0 || maxWaitMs > 60_000)
    throw bad('maxWaitMs', `maxWaitMs must be an integer from 0 to 60000, got ${maxWaitMs}.`, maxWaitMs);
  if (typeof o.nodeBits !== 'bigint' || o.nodeBits < 0n || o.nodeBits > layout.maxId)
    throw bad('nodeBits', 'nodeBits must be layout.nodeBits(node).', o.nodeBits);
  const q = o.dialect === 'postgres' ? '"' : '`';
  const registry = parts.map((x) => `${q}${x}${q}`).join('.');
  // The floor's tick is skipped entirely: IDs up to its last ms may have been issued.
  const floorTick = o.floorMs < layout.epochMs ? -1 : layout.tickOf(o.floorMs);
  const c = {
    p,
    registry,
    epoch: layout.epochMs,
    unit: layout.unitMs,
    maxTick: layout.maxTick,
    maxSeq: layout.maxSequence,
    tsShift: layout.timestampField.shift,
    seqShift: layout.sequenceField.shift,
    floorTick,
    maxWaitMs,
    name: layout.name,
    spec: layout.toFieldsString(),
    o,
  };
  return o.dialect === 'postgres' ? postgres(layout, c) : mysql(c);
}

type Consts = {
  p: string;
  registry: string;
  epoch: number;
  unit: number;
  maxTick: number;
  maxSeq: number;
  tsShift: number;
  seqShift: number;
  floorTick: number;
  maxWaitMs: number;
  name: string;
  spec: string;
  o: GeneratorSqlOptions;
};

const RELEASED = (p: string) =>
  `FLURRY_E_SQL_NODE_RELEASED: this database's generator holds no node (released, or never set up); run flurry sql --generate again (${p}next_id)`;

function postgres(layout: Layout, c: Consts): GeneratorSql {
  const { p, o } = c;
  const wide = layout.totalBits === 64;
  const idType = wide ? 'numeric(20,0)' : 'bigint';
  const compose = wide
    ? `tick::numeric * ${1n << BigInt(c.tsShift)} + s::numeric * ${1n << BigInt(c.seqShift)} + st.node_bits`
    : `(tick << ${c.tsShift}) | (s::bigint << ${c.seqShift}) | st.node_bits`;
  const fns: SqlFunction[] = [
    {
      name: `${p}now_ms`,
      signature: `${p}now_ms()`,
      returns: 'bigint',
      description: 'The generator clock: flurry.now_ms if set (tests), else clock_timestamp().',
    },
    {
      name: `${p}next_id`,
      signature: `${p}next_id()`,
      returns: idType,
      description: 'The next ID of the leased node.',
    },
    {
      name: `${p}next_ids`,
      signature: `${p}next_ids(n integer)`,
      returns: `SETOF ${idType}`,
      description: 'n next IDs (1..100000), increasing.',
    },
    {
      name: `${p}release_node`,
      signature: `${p}release_node()`,
      returns: 'bigint',
      description: 'Frees the node in the registry after writing its high-water mark; next_id() raises from then on.',
    },
  ];
  const raise = (msg: string, ...args: string[]) =>
    `RAISE EXCEPTION USING ERRCODE = '55000', MESSAGE = format(${lit(msg)}${args.map((a) => ', ' + a).join('')})`;
  const statements = [
    `CREATE TABLE IF NOT EXISTS ${p}generator (
  id smallint PRIMARY KEY CHECK (id = 1),
  namespace varchar(255) NOT NULL,
  slot integer NOT NULL,
  token varchar(64) NULL,
  node_bits ${idType} NOT NULL,
  last_tick bigint NOT NULL,
  seq integer NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
)`,
    `INSERT INTO ${p}generator (id, namespace, slot, token, node_bits, last_tick, seq)
VALUES (1, ${lit(o.namespace)}, ${o.slot}, ${lit(o.token)}, ${o.nodeBits}, ${c.floorTick}, ${c.maxSeq})
ON CONFLICT (id) DO UPDATE SET namespace = EXCLUDED.namespace, slot = EXCLUDED.slot, token = EXCLUDED.token,
  node_bits = EXCLUDED.node_bits, last_tick = GREATEST(${p}generator.last_tick, EXCLUDED.last_tick), seq = ${c.maxSeq}, updated_at = now()`,
    `CREATE OR REPLACE FUNCTION ${p}now_ms() RETURNS bigint LANGUAGE sql VOLATILE AS $flurry$
SELECT COALESCE(NULLIF(current_setting('flurry.now_ms', true), '')::bigint, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)
$flurry$`,
    `CREATE OR REPLACE FUNCTION ${p}next_id() RETURNS ${idType} LANGUAGE plpgsql VOLATILE AS $flurry$
DECLARE
  st ${p}generator%ROWTYPE;
  now_ms bigint;
  tick bigint;
  s integer;
  deadline bigint;
  real_ms bigint;
BEGIN
  -- Fast path, one statement: a later tick, or the next sequence of the last tick (also when
  -- the clock is behind it). The UPDATE takes the row lock and sees the latest state.
  now_ms := ${p}now_ms();
  tick := (now_ms - ${c.epoch}) / ${c.unit};
  IF now_ms >= ${c.epoch} AND tick <= ${c.maxTick} THEN
    UPDATE ${p}generator g SET last_tick = GREATEST(g.last_tick, tick),
           seq = CASE WHEN tick > g.last_tick THEN 0 ELSE g.seq + 1 END
     WHERE g.id = 1 AND g.token IS NOT NULL AND (tick > g.last_tick OR g.seq < ${c.maxSeq})
     RETURNING g.* INTO st;
    IF FOUND THEN
      PERFORM 1 FROM ${c.registry} r WHERE r.namespace = st.namespace AND r.slot = st.slot AND r.token = st.token AND r.expires_at > now();
      IF NOT FOUND THEN
        ${raise("FLURRY_E_LEASE_LOST: slot %s of %s in the registry table %s no longer holds this generator's lease (released or taken over); IDs are fenced. Run flurry sql --generate again.", 'st.slot', 'st.namespace', lit(o.registryTable))};
      END IF;
      tick := st.last_tick;
      s := st.seq;
      RETURN ${compose};
    END IF;
  END IF;
  -- Slow path: released, before the epoch, expired, or the last tick used up (wait).
  SELECT * INTO st FROM ${p}generator WHERE id = 1 FOR UPDATE;
  IF NOT FOUND OR st.token IS NULL THEN
    ${raise(RELEASED(p))};
  END IF;
  PERFORM 1 FROM ${c.registry} r WHERE r.namespace = st.namespace AND r.slot = st.slot AND r.token = st.token AND r.expires_at > now();
  IF NOT FOUND THEN
    ${raise("FLURRY_E_LEASE_LOST: slot %s of %s in the registry table %s no longer holds this generator's lease (released or taken over); IDs are fenced. Run flurry sql --generate again.", 'st.slot', 'st.namespace', lit(o.registryTable))};
  END IF;
  LOOP
    now_ms := ${p}now_ms();
    IF now_ms < ${c.epoch} THEN
      ${raise(`FLURRY_E_CLOCK_BEFORE_EPOCH: the database clock (Unix ms %s) is before the ${c.name} layout's epoch (Unix ms ${c.epoch}).`, 'now_ms')};
    END IF;
    tick := (now_ms - ${c.epoch}) / ${c.unit};
    IF tick > st.last_tick THEN
      s := 0;
      EXIT;
    ELSIF st.seq < ${c.maxSeq} THEN
      tick := st.last_tick; -- the same tick, or a clock stepped back: keep counting in the last tick
      s := st.seq + 1;
      EXIT;
    END IF;
    real_ms := floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint;
    IF deadline IS NULL THEN
      deadline := real_ms + ${c.maxWaitMs};
    ELSIF real_ms > deadline THEN
      IF tick < st.last_tick THEN
        ${raise(`FLURRY_E_CLOCK_BACKWARDS: the database clock is %s ms behind the last tick issued and its sequence is used up; waited ${c.maxWaitMs} ms (maxWaitMs). Retry later.`, `(st.last_tick - tick) * ${c.unit}`)};
      END IF;
      ${raise(`FLURRY_E_SEQUENCE_EXHAUSTED: all ${c.maxSeq + 1} IDs of the tick are used and the clock did not move on within ${c.maxWaitMs} ms (maxWaitMs).`)};
    END IF;
    PERFORM pg_sleep(0.0002);
  END LOOP;
  IF tick > ${c.maxTick} THEN
    ${raise(`FLURRY_E_LAYOUT_EXPIRED: the ${c.name} layout's timestamp field is used up (end of life ${layout.expiresAt.toISOString()}).`)};
  END IF;
  UPDATE ${p}generator SET last_tick = tick, seq = s WHERE id = 1;
  RETURN ${compose};
END
$flurry$`,
    `CREATE OR REPLACE FUNCTION ${p}next_ids(n integer) RETURNS SETOF ${idType} LANGUAGE plpgsql VOLATILE AS $flurry$
BEGIN
  IF n IS NULL OR n < 1 OR n > 100000 THEN
    RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = format('FLURRY_E_BATCH_COUNT: n = %s; ask for 1 to 100000 IDs.', n);
  END IF;
  FOR i IN 1..n LOOP
    RETURN NEXT ${p}next_id();
  END LOOP;
END
$flurry$`,
    `CREATE OR REPLACE FUNCTION ${p}release_node() RETURNS bigint LANGUAGE plpgsql VOLATILE AS $flurry$
DECLARE
  st ${p}generator%ROWTYPE;
  hw bigint;
  n integer;
BEGIN
  SELECT * INTO st FROM ${p}generator WHERE id = 1 FOR UPDATE;
  IF NOT FOUND OR st.token IS NULL THEN
    ${raise(RELEASED(p))};
  END IF;
  hw := GREATEST(0, ${c.epoch} + (st.last_tick + 1) * ${c.unit} - 1); -- the last ms of the last tick issued
  UPDATE ${c.registry} SET token = NULL, expires_at = NULL, holder = NULL, high_water_ms = GREATEST(high_water_ms, hw),
    released_cleanly = true, ttl_ms = 0, version = version + 1, updated_at = now()
   WHERE namespace = st.namespace AND slot = st.slot AND token = st.token;
  GET DIAGNOSTICS n = ROW_COUNT;
  UPDATE ${p}generator SET token = NULL, updated_at = now() WHERE id = 1;
  IF n = 0 THEN
    RAISE WARNING 'FLURRY_E_LEASE_LOST: the registry row no longer held this generator''s lease; nothing to free there';
  END IF;
  RETURN hw;
END
$flurry$`,
  ];
  const script =
    `-- Flurry in-database generator for the layout ${c.name} (${c.spec}); node slot ${o.slot} of ${o.namespace}\n` +
    `-- leased in ${o.registryTable}. Free it with: SELECT ${p}release_node();  See docs/sql.md.\n` +
    statements.map((s) => s + ';\n').join('\n');
  return { functions: fns, statements, script };
}

function mysql(c: Consts): GeneratorSql {
  const { p, o } = c;
  const sig = (msg: string): string => `SIGNAL SQLSTATE '55000' SET MESSAGE_TEXT = ${lit(msg.slice(0, 128))}`;
  const fns: SqlFunction[] = [
    {
      name: `${p}now_ms`,
      signature: `${p}now_ms()`,
      returns: 'BIGINT',
      description: 'The generator clock: @flurry_now_ms if set (tests), else SYSDATE(3).',
    },
    {
      name: `${p}next_id`,
      signature: `${p}next_id()`,
      returns: 'BIGINT UNSIGNED',
      description: 'The next ID of the leased node.',
    },
    {
      name: `${p}release_node`,
      signature: `${p}release_node()`,
      returns: 'BIGINT',
      description: 'Frees the node in the registry after writing its high-water mark; next_id() raises from then on.',
    },
  ];
  const statements = [
    `CREATE TABLE IF NOT EXISTS ${p}generator (
  id TINYINT NOT NULL PRIMARY KEY,
  namespace VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  slot INT NOT NULL,
  token VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL,
  node_bits BIGINT UNSIGNED NOT NULL,
  last_tick BIGINT NOT NULL,
  seq INT NOT NULL,
  updated_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)
) ENGINE=InnoDB`,
    `INSERT INTO ${p}generator (id, namespace, slot, token, node_bits, last_tick, seq)
VALUES (1, ${lit(o.namespace)}, ${o.slot}, ${lit(o.token)}, ${o.nodeBits}, ${c.floorTick}, ${c.maxSeq})
ON DUPLICATE KEY UPDATE namespace = VALUES(namespace), slot = VALUES(slot), token = VALUES(token), node_bits = VALUES(node_bits),
  last_tick = GREATEST(last_tick, VALUES(last_tick)), seq = ${c.maxSeq}, updated_at = CURRENT_TIMESTAMP(3)`,
    `DROP FUNCTION IF EXISTS ${p}now_ms`,
    `CREATE FUNCTION ${p}now_ms() RETURNS BIGINT NOT DETERMINISTIC NO SQL
RETURN COALESCE(@flurry_now_ms, FLOOR(UNIX_TIMESTAMP(SYSDATE(3)) * 1000))`,
    `DROP FUNCTION IF EXISTS ${p}next_id`,
    `CREATE FUNCTION ${p}next_id() RETURNS BIGINT UNSIGNED NOT DETERMINISTIC MODIFIES SQL DATA
BEGIN
  DECLARE v_ns VARCHAR(255) DEFAULT NULL;
  DECLARE v_slot INT DEFAULT NULL;
  DECLARE v_token VARCHAR(64) DEFAULT NULL;
  DECLARE v_node BIGINT UNSIGNED DEFAULT 0;
  DECLARE v_last BIGINT DEFAULT 0;
  DECLARE v_seq INT DEFAULT 0;
  DECLARE v_now BIGINT;
  DECLARE v_tick BIGINT;
  DECLARE v_s INT;
  DECLARE v_ok INT DEFAULT 0;
  DECLARE v_deadline BIGINT DEFAULT NULL;
  DECLARE v_real BIGINT;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_token = NULL;
  SELECT namespace, slot, token, node_bits, last_tick, seq INTO v_ns, v_slot, v_token, v_node, v_last, v_seq
    FROM ${p}generator WHERE id = 1 FOR UPDATE;
  IF v_token IS NULL THEN
    ${sig(`FLURRY_E_SQL_NODE_RELEASED: this database's generator holds no node; run flurry sql --generate again`)};
  END IF;
  SELECT COUNT(*) INTO v_ok FROM ${c.registry}
   WHERE \`namespace\` = v_ns AND \`slot\` = v_slot AND \`token\` = v_token AND \`expires_at\` > CURRENT_TIMESTAMP(3);
  IF v_ok = 0 THEN
    ${sig("FLURRY_E_LEASE_LOST: the registry row no longer holds this generator's lease; IDs are fenced. Run flurry sql --generate")};
  END IF;
  l: LOOP
    SET v_now = ${p}now_ms();
    IF v_now < ${c.epoch} THEN
      ${sig(`FLURRY_E_CLOCK_BEFORE_EPOCH: the database clock is before the layout's epoch (Unix ms ${c.epoch})`)};
    END IF;
    SET v_tick = (v_now - ${c.epoch}) DIV ${c.unit};
    IF v_tick > v_last THEN
      SET v_s = 0;
      LEAVE l;
    ELSEIF v_seq < ${c.maxSeq} THEN
      SET v_tick = v_last;
      SET v_s = v_seq + 1;
      LEAVE l;
    END IF;
    SET v_real = FLOOR(UNIX_TIMESTAMP(SYSDATE(3)) * 1000);
    IF v_deadline IS NULL THEN
      SET v_deadline = v_real + ${c.maxWaitMs};
    ELSEIF v_real > v_deadline THEN
      IF v_tick < v_last THEN
        ${sig(`FLURRY_E_CLOCK_BACKWARDS: the database clock is behind the last tick issued, its sequence used up; waited ${c.maxWaitMs} ms`)};
      END IF;
      ${sig(`FLURRY_E_SEQUENCE_EXHAUSTED: the tick's ${c.maxSeq + 1} IDs are used and the clock did not move on within ${c.maxWaitMs} ms`)};
    END IF;
    DO SLEEP(0.0005);
  END LOOP;
  IF v_tick > ${c.maxTick} THEN
    ${sig(`FLURRY_E_LAYOUT_EXPIRED: the ${c.name} layout's timestamp field is used up`)};
  END IF;
  UPDATE ${p}generator SET last_tick = v_tick, seq = v_s WHERE id = 1;
  RETURN (CAST(v_tick AS UNSIGNED) << ${c.tsShift}) | (CAST(v_s AS UNSIGNED) << ${c.seqShift}) | v_node;
END`,
    `DROP FUNCTION IF EXISTS ${p}release_node`,
    `CREATE FUNCTION ${p}release_node() RETURNS BIGINT NOT DETERMINISTIC MODIFIES SQL DATA
BEGIN
  DECLARE v_ns VARCHAR(255) DEFAULT NULL;
  DECLARE v_slot INT DEFAULT NULL;
  DECLARE v_token VARCHAR(64) DEFAULT NULL;
  DECLARE v_last BIGINT DEFAULT 0;
  DECLARE v_hw BIGINT;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_token = NULL;
  SELECT namespace, slot, token, last_tick INTO v_ns, v_slot, v_token, v_last FROM ${p}generator WHERE id = 1 FOR UPDATE;
  IF v_token IS NULL THEN
    ${sig(`FLURRY_E_SQL_NODE_RELEASED: this database's generator holds no node (already released)`)};
  END IF;
  SET v_hw = GREATEST(0, ${c.epoch} + (v_last + 1) * ${c.unit} - 1);
  UPDATE ${c.registry} SET \`token\` = NULL, \`expires_at\` = NULL, \`holder\` = NULL, \`high_water_ms\` = GREATEST(\`high_water_ms\`, v_hw),
    \`released_cleanly\` = TRUE, \`ttl_ms\` = 0, \`version\` = \`version\` + 1, \`updated_at\` = CURRENT_TIMESTAMP(3)
   WHERE \`namespace\` = v_ns AND \`slot\` = v_slot AND \`token\` = v_token;
  UPDATE ${p}generator SET token = NULL, updated_at = CURRENT_TIMESTAMP(3) WHERE id = 1;
  RETURN v_hw;
END`,
  ];
  const script =
    `-- Flurry in-database generator for the layout ${c.name} (${c.spec}); node slot ${o.slot} of ${o.namespace}\n` +
    `-- leased in ${o.registryTable}. Free it with: SELECT ${p}release_node();  See docs/sql.md.\n` +
    `DELIMITER $$\n` +
    statements.map((s) => s + ' $$\n').join('\n') +
    `DELIMITER ;\n`;
  return { functions: fns, statements, script };
}
