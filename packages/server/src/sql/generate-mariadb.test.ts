// flurry_next_id() on MariaDB: see generate-cases.ts.
import { runGeneratorTests } from './generate-cases.js';

runGeneratorTests('mariadb');
