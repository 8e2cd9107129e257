// flurry_next_id() on PostgreSQL 15: see generate-cases.ts.
import { runGeneratorTests } from './generate-cases.js';

runGeneratorTests('postgres');
