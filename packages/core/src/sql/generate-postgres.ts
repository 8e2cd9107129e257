// The PostgreSQL in-database generator: lanes held with advisory locks, a session's cursor under its lane row's
// reservation, the shared last lane (docs/sql.md#issuing-ids-inside-the-database).
import { lit } from './functions.js';
import {
  GENERATOR_RESERVE_MS,
  generatorFunctions,
  type GeneratorConsts,
  type GeneratorDdl,
} from './generate-shared.js';

const RELEASED = (p: string) =>
  `FLURRY_E_SQL_NODE_RELEASED: this database's generator holds no node (released, or never set up); run flurry sql --generate again (${p}next_id)`;

/** Builds the PostgreSQL generator DDL from validated constants (called by `generatorSql`). */
export function postgresGenerator(c: GeneratorConsts): GeneratorDdl {
  const { p, o, layout, lanes, laneSize: k } = c;
  const wide = layout.totalBits === 64;
  const idType = wide ? 'numeric(20,0)' : 'bigint';
  const nodeBits = wide ? `${o.nodeBits}::numeric` : `${o.nodeBits}::bigint`;
  // The sequence field of lane l, sequence s: l * k + s.
  const compose = (tick: string, lane: string, s: string) =>
    wide
      ? `${tick}::numeric * ${1n << BigInt(layout.timestampField.shift)} + (${lane} * ${k} + ${s})::numeric * ${1n << BigInt(layout.sequenceField.shift)} + ${nodeBits}`
      : `(${tick} << ${layout.timestampField.shift}) | ((${lane} * ${k} + ${s})::bigint << ${layout.sequenceField.shift}) | ${nodeBits}`;
  const guc = `flurry.${p}lane`;
  const cursorGuc = `flurry.${p}cursor`;
  const cursor = `pg_temp.${p}cursor`;
  const reserveTicks = Math.max(1, Math.ceil(GENERATOR_RESERVE_MS / c.unit));
  // The cursor belongs to one lane of one set-up (the token is new at each --generate).
  const cursorTag = (lane: string) => `${lane}::text || ${lit(':' + o.token)}`;
  const raise = (msg: string, ...args: string[]) =>
    `RAISE EXCEPTION USING ERRCODE = '55000', MESSAGE = format(${lit(msg)}${args.map((a) => ', ' + a).join('')})`;
  /** `IF cond THEN RAISE … END IF;` at a function body's indentation. */
  const raiseIf = (cond: string, msg: string, ...args: string[]) => `IF ${cond} THEN
    ${raise(msg, ...args)};
  END IF;`;
  const expired = (t: string) =>
    raiseIf(
      `${t} > ${layout.maxTick}`,
      `FLURRY_E_LAYOUT_EXPIRED: the ${layout.name} layout's timestamp field is used up (end of life ${layout.expiresAt.toISOString()}).`,
    );
  const beforeEpoch = `FLURRY_E_CLOCK_BEFORE_EPOCH: the database clock (Unix ms %s) is before the ${layout.name} layout's epoch (Unix ms ${c.epoch}).`;
  const exhausted = raise(
    `FLURRY_E_SEQUENCE_EXHAUSTED: all ${k} IDs of the tick in this session's lane are used and the clock did not move on within ${c.maxWaitMs} ms (maxWaitMs).`,
  );
  /** The end of a wait loop's turn: start the deadline, or past it run `giveUp` (which raises), else sleep. */
  const sleepOrGiveUp = (giveUp: string) => `real_ms := floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint;
    IF deadline IS NULL THEN
      deadline := real_ms + ${c.maxWaitMs};
    ELSIF real_ms > deadline THEN
      ${giveUp}
    END IF;
    PERFORM pg_sleep(0.0002);`;
  const leaseCheck = `PERFORM 1 FROM ${c.registry} r WHERE r.namespace = ${lit(o.namespace)} AND r.slot = ${o.slot} AND r.token = ${lit(o.token)} AND r.expires_at > now();
  ${raiseIf('NOT FOUND', `FLURRY_E_LEASE_LOST: slot ${o.slot} of ${o.namespace} in the registry table ${o.registryTable} no longer holds this generator's lease (released or taken over); IDs are fenced. Run flurry sql --generate again.`.replace(/%/g, '%%'))}`;
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
    `CREATE TABLE IF NOT EXISTS ${p}lanes (
  lane integer PRIMARY KEY,
  active boolean NOT NULL,
  last_tick bigint NOT NULL,
  seq integer NOT NULL
)`,
    `INSERT INTO ${p}generator (id, namespace, slot, token, node_bits, last_tick, seq)
VALUES (1, ${lit(o.namespace)}, ${o.slot}, ${lit(o.token)}, ${o.nodeBits}, ${c.floorTick}, ${layout.maxSequence})
ON CONFLICT (id) DO UPDATE SET namespace = EXCLUDED.namespace, slot = EXCLUDED.slot, token = EXCLUDED.token,
  node_bits = EXCLUDED.node_bits, last_tick = GREATEST(${p}generator.last_tick, EXCLUDED.last_tick), seq = ${layout.maxSequence}, updated_at = now()`,
    // Every lane starts past the floor and past anything any lane issued before (a lane count or node that changed
    // between set-ups cannot go back); extra lanes are closed.
    `INSERT INTO ${p}lanes (lane, active, last_tick, seq)
SELECT g, true, GREATEST(${c.floorTick}, (SELECT COALESCE(max(last_tick), -1) FROM ${p}lanes)), ${k - 1}
  FROM generate_series(0, ${lanes - 1}) g
ON CONFLICT (lane) DO UPDATE SET active = true, last_tick = EXCLUDED.last_tick, seq = ${k - 1}`,
    `UPDATE ${p}lanes SET active = false WHERE lane >= ${lanes}`,
    `CREATE OR REPLACE FUNCTION ${p}now_ms() RETURNS bigint LANGUAGE sql VOLATILE AS $flurry$
SELECT COALESCE(NULLIF(current_setting('flurry.now_ms', true), '')::bigint, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)
$flurry$`,
    `CREATE OR REPLACE FUNCTION ${p}lane() RETURNS integer LANGUAGE plpgsql VOLATILE AS $flurry$
DECLARE
  l integer;
BEGIN
  -- A lane this session already holds (its setting is rolled back with a failed transaction;
  -- the advisory lock is not).
  SELECT k.objid::integer INTO l FROM pg_locks k
   WHERE k.locktype = 'advisory' AND k.pid = pg_backend_pid() AND k.classid = ${c.lockKey} AND k.objsubid = 2 AND k.granted
     AND k.database = (SELECT d.oid FROM pg_database d WHERE d.datname = current_database())
   ORDER BY k.objid LIMIT 1;
  IF l IS NULL OR l >= ${lanes} THEN
    l := NULL;
    FOR i IN 0..${lanes - 2} LOOP
      IF pg_try_advisory_lock(${c.lockKey}, i) THEN
        l := i;
        EXIT;
      END IF;
    END LOOP;
    IF l IS NULL THEN
      PERFORM pg_advisory_lock_shared(${c.lockKey}, ${lanes - 1}); -- the shared lane (never held exclusively)
      l := ${lanes - 1};
    END IF;
  END IF;
  PERFORM set_config(${lit(guc)}, l::text, false);
  RETURN l;
END
$flurry$`,
    `CREATE OR REPLACE FUNCTION ${p}cursor(l integer) RETURNS void LANGUAGE plpgsql VOLATILE AS $flurry$
DECLARE
  st ${p}lanes%ROWTYPE;
BEGIN
  -- The session's cursor on its own lane: a temporary sequence (private, non-transactional)
  -- started right after the lane row's reservation, which covers every ID the lane's earlier
  -- holders issued. Made again whenever the session's lane or the set-up (token) changes; a
  -- rolled-back first call rolls back the setting and the sequence together.
  SELECT * INTO st FROM ${p}lanes WHERE lane = l;
  ${raiseIf('NOT FOUND OR NOT st.active', RELEASED(p))}
  IF to_regclass(${lit(cursor)}) IS NOT NULL THEN
    DROP SEQUENCE ${cursor};
  END IF;
  CREATE TEMPORARY SEQUENCE ${p}cursor AS bigint MINVALUE -1 START WITH -1;
  PERFORM setval(${lit(cursor)}, GREATEST(-1, st.last_tick * ${k} + st.seq), true);
  PERFORM set_config(${lit(cursorGuc)}, ${cursorTag('l')}, false);
END
$flurry$`,
    `CREATE OR REPLACE FUNCTION ${p}cursor_wait(t bigint) RETURNS void LANGUAGE plpgsql VOLATILE AS $flurry$
DECLARE
  now_ms bigint;
  tick bigint;
  deadline bigint;
  real_ms bigint;
BEGIN
  -- The cursor is past the clock's tick: the lane's share of the tick is used up, or the clock
  -- is behind the lane's last tick (stepped back, or a reservation of the lane's last holder).
  LOOP
    now_ms := ${p}now_ms();
    tick := (now_ms - ${c.epoch}) / ${c.unit};
    IF now_ms >= ${c.epoch} AND tick >= t THEN
      RETURN;
    END IF;
    ${sleepOrGiveUp(`-- Give the tick's first ID back to the cursor (non-transactional, so it stays back), so
      -- that the next call waits for this tick again instead of counting on in it.
      PERFORM setval(${lit(cursor)}, t * ${k} - 1, true);
      IF now_ms < ${c.epoch} OR tick < t - 1 THEN
        ${raise(`FLURRY_E_CLOCK_BACKWARDS: the database clock is %s ms behind the next tick this session's lane may issue in; waited ${c.maxWaitMs} ms (maxWaitMs). Retry later.`, `${c.epoch} + t * ${c.unit} - now_ms`)};
      END IF;
      ${exhausted};`)}
  END LOOP;
END
$flurry$`,
    `CREATE OR REPLACE FUNCTION ${p}next_id_wait(l integer) RETURNS ${idType} LANGUAGE plpgsql VOLATILE AS $flurry$
DECLARE
  st ${p}lanes%ROWTYPE;
  now_ms bigint;
  tick bigint;
  s integer;
  deadline bigint;
  real_ms bigint;
BEGIN
  -- Slow path of next_id: released, before the epoch, or the lane's share of the tick used up (wait).
  SELECT * INTO st FROM ${p}lanes WHERE lane = l FOR UPDATE;
  ${raiseIf('NOT FOUND OR NOT st.active', RELEASED(p))}
  ${leaseCheck}
  LOOP
    now_ms := ${p}now_ms();
    IF now_ms < ${c.epoch} THEN
      ${raise(beforeEpoch, 'now_ms')};
    END IF;
    tick := (now_ms - ${c.epoch}) / ${c.unit};
    IF tick > st.last_tick THEN
      s := 0;
      EXIT;
    ELSIF st.seq < ${k - 1} THEN
      tick := st.last_tick; -- the same tick, or a clock stepped back: keep counting in the last tick
      s := st.seq + 1;
      EXIT;
    END IF;
    ${sleepOrGiveUp(`IF tick < st.last_tick THEN
        ${raise(`FLURRY_E_CLOCK_BACKWARDS: the database clock is %s ms behind the last tick issued and this lane's sequence is used up; waited ${c.maxWaitMs} ms (maxWaitMs). Retry later.`, `(st.last_tick - tick) * ${c.unit}`)};
      END IF;
      ${exhausted};`)}
  END LOOP;
  ${expired('tick')}
  UPDATE ${p}lanes SET last_tick = tick, seq = s WHERE lane = l;
  RETURN ${compose('tick', 'l', 's')};
END
$flurry$`,
    `CREATE OR REPLACE FUNCTION ${p}next_id() RETURNS ${idType} LANGUAGE plpgsql VOLATILE AS $flurry$
DECLARE
  l integer;
  now_ms bigint;
  tick bigint;
  t bigint;
  s integer;
  pos bigint;
  lane_open boolean;
  reserved bigint;
  fresh boolean := false;
BEGIN
  l := NULLIF(current_setting(${lit(guc)}, true), '')::integer;
  IF l IS NULL OR l >= ${lanes} THEN
    l := ${p}lane();
  END IF;
  IF l = ${lanes - 1} THEN
    -- The shared lane: one statement on its row, a later tick or the next sequence of the
    -- last tick (also when the clock is behind it).
    tick := ${p}now_ms();
    IF tick >= ${c.epoch} THEN
      tick := (tick - ${c.epoch}) / ${c.unit};
      UPDATE ${p}lanes g SET last_tick = GREATEST(g.last_tick, tick),
             seq = CASE WHEN tick > g.last_tick THEN 0 ELSE g.seq + 1 END
       WHERE g.lane = l AND g.active AND tick <= ${layout.maxTick} AND (tick > g.last_tick OR g.seq < ${k - 1})
       RETURNING g.last_tick, g.seq INTO t, s;
      IF FOUND THEN
        ${leaseCheck}
        RETURN ${compose('t', 'l', 's')};
      END IF;
    END IF;
    RETURN ${p}next_id_wait(l);
  END IF;
  -- A lane of this session's own: count in the session's cursor.
  IF current_setting(${lit(cursorGuc)}, true) IS DISTINCT FROM ${cursorTag('l')} OR to_regclass(${lit(cursor)}) IS NULL THEN
    PERFORM ${p}cursor(l);
    fresh := true;
  END IF;
  now_ms := ${p}now_ms();
  ${raiseIf(`now_ms < ${c.epoch}`, beforeEpoch, 'now_ms')}
  tick := (now_ms - ${c.epoch}) / ${c.unit};
  pos := nextval(${lit(cursor)});
  t := div(pos, ${k});
  IF t < tick THEN
    -- A later tick: jump the cursor to its first ID (only this session moves it).
    PERFORM setval(${lit(cursor)}, tick * ${k}, true);
    t := tick;
    s := 0;
  ELSE
    s := mod(pos, ${k});
    -- Past the clock's tick: the first ID of a tick no ID was issued in yet waits for the
    -- clock; later IDs of a tick this session already issued in (a clock stepped back behind
    -- it) keep counting there. A new cursor starts after its lane's reservation, at most one
    -- reservation ahead of the clock when the lane's last session just ended: it takes that
    -- tick at once (a session per request would otherwise wait on every first call).
    IF t > tick AND s = 0 AND NOT (fresh AND t - tick <= ${reserveTicks}) THEN
      PERFORM ${p}cursor_wait(t);
    END IF;
  END IF;
  ${expired('t')}
  -- Fencing and the reservation: the lane open, the lease held, the tick reserved in the row.
  SELECT g.active, g.last_tick INTO lane_open, reserved FROM ${p}lanes g WHERE g.lane = l;
  ${raiseIf('NOT FOUND OR NOT lane_open', RELEASED(p))}
  ${leaseCheck}
  IF t > reserved THEN
    UPDATE ${p}lanes SET last_tick = GREATEST(last_tick, t + ${reserveTicks - 1}), seq = ${k - 1} WHERE lane = l AND active;
    IF NOT FOUND THEN
      ${raise(RELEASED(p))};
    END IF;
  END IF;
  RETURN ${compose('t', 'l', 's')};
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
  last_t bigint;
  hw bigint;
  n integer;
  pids text;
BEGIN
  SELECT * INTO st FROM ${p}generator WHERE id = 1 FOR UPDATE;
  ${raiseIf('NOT FOUND OR st.token IS NULL', RELEASED(p))}
  -- Refuse while another session holds a lane (its own or the shared one): it still uses the node.
  SELECT count(DISTINCT k.pid), string_agg(DISTINCT k.pid::text, ', ') INTO n, pids FROM pg_locks k
   WHERE k.locktype = 'advisory' AND k.classid = ${c.lockKey} AND k.objsubid = 2 AND k.granted AND k.pid <> pg_backend_pid()
     AND k.database = (SELECT d.oid FROM pg_database d WHERE d.datname = current_database());
  IF n > 0 THEN
    RAISE EXCEPTION USING ERRCODE = '55006', MESSAGE = format(${lit(`FLURRY_E_SQL_NODE_IN_USE: %s other session(s) still hold a lane of this generator (pids %s) and may call ${p}next_id() again; end them (close the pool, or SELECT pg_terminate_backend(pid)), then release again.`)}, n, pids);
  END IF;
  -- Close every lane: waits for the calls in flight (they hold their lane row), fences the rest.
  UPDATE ${p}lanes SET active = false WHERE active;
  SELECT GREATEST(st.last_tick, COALESCE(max(last_tick), -1)) INTO last_t FROM ${p}lanes;
  hw := GREATEST(0, ${c.epoch} + (last_t + 1) * ${c.unit} - 1); -- the last ms of the last tick issued
  UPDATE ${c.registry} SET token = NULL, expires_at = NULL, holder = NULL, high_water_ms = GREATEST(high_water_ms, hw),
    released_cleanly = true, ttl_ms = 0, version = version + 1, updated_at = now()
   WHERE namespace = st.namespace AND slot = st.slot AND token = st.token;
  GET DIAGNOSTICS n = ROW_COUNT;
  UPDATE ${p}generator SET token = NULL, last_tick = last_t, updated_at = now() WHERE id = 1;
  IF n = 0 THEN
    RAISE WARNING 'FLURRY_E_LEASE_LOST: the registry row no longer held this generator''s lease; nothing to free there';
  END IF;
  RETURN hw;
END
$flurry$`,
  ];
  return { functions: generatorFunctions(c, true, idType), statements };
}
