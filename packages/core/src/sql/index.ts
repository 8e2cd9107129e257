/**
 * SQL generated from a layout: functions that decode, bound (and, with a leased node, issue) IDs inside PostgreSQL and
 * MySQL/MariaDB. See docs/sql.md.
 */
export * from './ddl.js';
export * from './generate.js';
export * from './uuid-ddl.js';
