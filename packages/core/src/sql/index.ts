// SQL that decodes, bounds (and, with a leased node, issues) IDs inside PostgreSQL and MySQL/MariaDB: docs/sql.md.
export * from './ddl.js';
export * from './generate.js';
export * from './uuid-ddl.js';
