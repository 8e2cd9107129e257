/**
 * The registry conformance suite against a real Redis (started by the harness on a free
 * loopback port, stopped afterwards). Each test uses its own cluster name, so one engine
 * serves them all.
 */
import { after } from 'node:test';
import { startEngine } from '../testing/harness.js';
import { runHoldersConformance } from './holders.js';
import { runConformance } from './suite.js';

const engine = await startEngine('redis');
after(() => engine.stop());

runConformance({ name: 'redis', url: () => engine.url, engine });
runHoldersConformance({ name: 'redis', url: () => engine.url, engine });
