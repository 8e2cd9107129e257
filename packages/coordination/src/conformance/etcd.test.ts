/**
 * The registry conformance suite against a real etcd (started by the harness on a free
 * loopback port, stopped afterwards). Each test uses its own cluster name, so one engine
 * serves them all.
 */
import { after } from 'node:test';
import { startEngine } from '../testing/harness.js';
import { runHoldersConformance } from './holders.js';
import { runConformance } from './suite.js';

const engine = await startEngine('etcd');
after(() => engine.stop());

// etcd leases are whole seconds and at least 2 s (its minimum with default election
// settings): a 2000 ms TTL is exactly what the server enforces, instead of 1500 ms rounded up.
runConformance({ name: 'etcd', url: () => engine.url, engine, ttlMs: 2000 });
runHoldersConformance({ name: 'etcd', url: () => engine.url, engine, ttlMs: 2000 });
