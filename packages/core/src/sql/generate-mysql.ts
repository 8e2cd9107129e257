// The MySQL/MariaDB in-database generator (see generate.ts and docs/sql.md): lanes held with `GET_LOCK` named locks
// (session-scoped), one InnoDB state row per lane.
import { lit } from './functions.js';
import { generatorFunctions, type GeneratorConsts, type GeneratorDdl } from './generate-shared.js';

/** Builds the MySQL/MariaDB generator DDL from validated constants (called by `generatorSql`). */
export function mysqlGenerator(c: GeneratorConsts): GeneratorDdl {
  const { p, o, layout, lanes, laneSize: k } = c;
  const sig = (msg: string): string => `SIGNAL SQLSTATE '55000' SET MESSAGE_TEXT = ${lit(msg.slice(0, 128))}`;
  /** `IF cond THEN SIGNAL … END IF;` at the indentation `at`. */
  const sigIf = (cond: string, msg: string, at = '  ') => `IF ${cond} THEN\n${at}  ${sig(msg)};\n${at}END IF;`;
  const laneVar = `@${p}lane`;
  /** The name of a lane's lock (lane i, 0 … lanes − 2) and of the shared lane's lock of session `id`. */
  const laneLock = (i: string) => `LEFT(CONCAT(${lit(`${p}lane`)}, ${i}, '@', DATABASE()), 64)`;
  const sharedLock = (id: string) => `LEFT(CONCAT(${lit(`${p}lanes#`)}, ${id}, '@', DATABASE()), 64)`;
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
    `CREATE TABLE IF NOT EXISTS ${p}lanes (
  lane INT NOT NULL PRIMARY KEY,
  active TINYINT(1) NOT NULL,
  last_tick BIGINT NOT NULL,
  seq INT NOT NULL
) ENGINE=InnoDB`,
    `INSERT INTO ${p}generator (id, namespace, slot, token, node_bits, last_tick, seq)
VALUES (1, ${lit(o.namespace)}, ${o.slot}, ${lit(o.token)}, ${o.nodeBits}, ${c.floorTick}, ${layout.maxSequence})
ON DUPLICATE KEY UPDATE namespace = VALUES(namespace), slot = VALUES(slot), token = VALUES(token), node_bits = VALUES(node_bits),
  last_tick = GREATEST(last_tick, VALUES(last_tick)), seq = ${layout.maxSequence}, updated_at = CURRENT_TIMESTAMP(3)`,
    // Every lane starts past the floor and past anything any lane issued before.
    `SET @flurry_lane_floor = GREATEST(${c.floorTick}, COALESCE((SELECT MAX(last_tick) FROM ${p}lanes), -1))`,
    `INSERT INTO ${p}lanes (lane, active, last_tick, seq) VALUES ${Array.from({ length: lanes }, (_, i) => `(${i}, 1, @flurry_lane_floor, ${k - 1})`).join(', ')}
ON DUPLICATE KEY UPDATE active = 1, last_tick = VALUES(last_tick), seq = ${k - 1}`,
    `UPDATE ${p}lanes SET active = 0 WHERE lane >= ${lanes}`,
    `DROP FUNCTION IF EXISTS ${p}now_ms`,
    `CREATE FUNCTION ${p}now_ms() RETURNS BIGINT NOT DETERMINISTIC NO SQL
RETURN COALESCE(@flurry_now_ms, FLOOR(UNIX_TIMESTAMP(SYSDATE(3)) * 1000))`,
    `DROP FUNCTION IF EXISTS ${p}lane`,
    `CREATE FUNCTION ${p}lane() RETURNS INT NOT DETERMINISTIC NO SQL
BEGIN
  DECLARE i INT DEFAULT 0;
  DECLARE v INT DEFAULT ${lanes - 1};
  w: WHILE i < ${lanes - 1} DO
    IF GET_LOCK(${laneLock('i')}, 0) = 1 THEN
      SET v = i;
      LEAVE w;
    END IF;
    SET i = i + 1;
  END WHILE;
  IF v = ${lanes - 1} THEN
    -- The shared lane: a lock named after this session marks it as a user (release_node() looks).
    SET @flurry_lock = GET_LOCK(${sharedLock('CONNECTION_ID()')}, 0);
  END IF;
  SET ${laneVar} = v;
  RETURN v;
END`,
    `DROP FUNCTION IF EXISTS ${p}next_id`,
    `CREATE FUNCTION ${p}next_id() RETURNS BIGINT UNSIGNED NOT DETERMINISTIC MODIFIES SQL DATA
BEGIN
  DECLARE v_l INT DEFAULT ${laneVar};
  DECLARE v_active INT DEFAULT NULL;
  DECLARE v_last BIGINT DEFAULT 0;
  DECLARE v_seq INT DEFAULT 0;
  DECLARE v_now BIGINT;
  DECLARE v_tick BIGINT;
  DECLARE v_s INT;
  DECLARE v_ok INT DEFAULT 0;
  DECLARE v_deadline BIGINT DEFAULT NULL;
  DECLARE v_real BIGINT;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_active = NULL;
  IF v_l IS NULL OR v_l < 0 OR v_l >= ${lanes} THEN
    SET v_l = ${p}lane();
  END IF;
  SELECT active, last_tick, seq INTO v_active, v_last, v_seq FROM ${p}lanes WHERE lane = v_l FOR UPDATE;
  ${sigIf('v_active IS NULL OR v_active = 0', `FLURRY_E_SQL_NODE_RELEASED: this database's generator holds no node; run flurry sql --generate again`)}
  SELECT COUNT(*) INTO v_ok FROM ${c.registry}
   WHERE \`namespace\` = ${lit(o.namespace)} AND \`slot\` = ${o.slot} AND \`token\` = ${lit(o.token)} AND \`expires_at\` > CURRENT_TIMESTAMP(3);
  ${sigIf('v_ok = 0', "FLURRY_E_LEASE_LOST: the registry row no longer holds this generator's lease; IDs are fenced. Run flurry sql --generate")}
  l: LOOP
    SET v_now = ${p}now_ms();
    ${sigIf(`v_now < ${c.epoch}`, `FLURRY_E_CLOCK_BEFORE_EPOCH: the database clock is before the layout's epoch (Unix ms ${c.epoch})`, '    ')}
    SET v_tick = (v_now - ${c.epoch}) DIV ${c.unit};
    IF v_tick > v_last THEN
      SET v_s = 0;
      LEAVE l;
    ELSEIF v_seq < ${k - 1} THEN
      SET v_tick = v_last;
      SET v_s = v_seq + 1;
      LEAVE l;
    END IF;
    SET v_real = FLOOR(UNIX_TIMESTAMP(SYSDATE(3)) * 1000);
    IF v_deadline IS NULL THEN
      SET v_deadline = v_real + ${c.maxWaitMs};
    ELSEIF v_real > v_deadline THEN
      ${sigIf('v_tick < v_last', `FLURRY_E_CLOCK_BACKWARDS: the database clock is behind the last tick issued, this lane's sequence used up; waited ${c.maxWaitMs} ms`, '      ')}
      ${sig(`FLURRY_E_SEQUENCE_EXHAUSTED: the lane's ${k} IDs of the tick are used and the clock did not move on within ${c.maxWaitMs} ms`)};
    END IF;
    DO SLEEP(0.0005);
  END LOOP;
  ${sigIf(`v_tick > ${layout.maxTick}`, `FLURRY_E_LAYOUT_EXPIRED: the ${layout.name} layout's timestamp field is used up`)}
  UPDATE ${p}lanes SET last_tick = v_tick, seq = v_s WHERE lane = v_l;
  RETURN (CAST(v_tick AS UNSIGNED) << ${layout.timestampField.shift}) | (CAST(v_l * ${k} + v_s AS UNSIGNED) << ${layout.sequenceField.shift}) | ${o.nodeBits};
END`,
    `DROP FUNCTION IF EXISTS ${p}release_node`,
    `CREATE FUNCTION ${p}release_node() RETURNS BIGINT NOT DETERMINISTIC MODIFIES SQL DATA
BEGIN
  DECLARE v_ns VARCHAR(255) DEFAULT NULL;
  DECLARE v_slot INT DEFAULT NULL;
  DECLARE v_token VARCHAR(64) DEFAULT NULL;
  DECLARE v_last BIGINT DEFAULT 0;
  DECLARE v_lanes BIGINT DEFAULT NULL;
  DECLARE v_hw BIGINT;
  DECLARE v_busy INT DEFAULT 0;
  DECLARE v_msg VARCHAR(128);
  DECLARE i INT DEFAULT 0;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_token = NULL;
  SELECT namespace, slot, token, last_tick INTO v_ns, v_slot, v_token, v_last FROM ${p}generator WHERE id = 1 FOR UPDATE;
  ${sigIf('v_token IS NULL', `FLURRY_E_SQL_NODE_RELEASED: this database's generator holds no node (already released)`)}
  -- Refuse while another session holds a lane (its own, or the shared one: PROCESSLIST shows
  -- this user's sessions, all of them with the PROCESS privilege): it still uses the node.
  WHILE i < ${lanes - 1} DO
    IF IFNULL(IS_USED_LOCK(${laneLock('i')}), CONNECTION_ID()) <> CONNECTION_ID() THEN
      SET v_busy = v_busy + 1;
    END IF;
    SET i = i + 1;
  END WHILE;
  SELECT v_busy + COUNT(*) INTO v_busy FROM information_schema.PROCESSLIST s
   WHERE s.ID <> CONNECTION_ID() AND IS_USED_LOCK(${sharedLock('s.ID')}) = s.ID;
  IF v_busy > 0 THEN
    SET v_msg = CONCAT('FLURRY_E_SQL_NODE_IN_USE: ', v_busy, ' other session(s) hold a lane; end them (close the pool, or KILL), then release again');
    SIGNAL SQLSTATE '55006' SET MESSAGE_TEXT = v_msg;
  END IF;
  -- Close every lane: waits for the calls in flight (they hold their lane row), fences the rest.
  UPDATE ${p}lanes SET active = 0 WHERE active = 1;
  SELECT MAX(last_tick) INTO v_lanes FROM ${p}lanes FOR UPDATE;
  SET v_last = GREATEST(v_last, COALESCE(v_lanes, -1));
  SET v_hw = GREATEST(0, ${c.epoch} + (v_last + 1) * ${c.unit} - 1);
  UPDATE ${c.registry} SET \`token\` = NULL, \`expires_at\` = NULL, \`holder\` = NULL, \`high_water_ms\` = GREATEST(\`high_water_ms\`, v_hw),
    \`released_cleanly\` = TRUE, \`ttl_ms\` = 0, \`version\` = \`version\` + 1, \`updated_at\` = CURRENT_TIMESTAMP(3)
   WHERE \`namespace\` = v_ns AND \`slot\` = v_slot AND \`token\` = v_token;
  UPDATE ${p}generator SET token = NULL, last_tick = v_last, updated_at = CURRENT_TIMESTAMP(3) WHERE id = 1;
  RETURN v_hw;
END`,
  ];
  return { functions: generatorFunctions(c, false, 'BIGINT UNSIGNED'), statements };
}
