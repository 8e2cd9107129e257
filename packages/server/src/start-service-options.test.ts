/** `startService` refuses a config with a key it does not know (issue 17, part 1). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FlurryError, assertKnownOptions } from '@flurry/core';
import { loadServeConfig, SERVE_CONFIG_KEYS } from './config/index.js';
import { startService, type ServiceLogger } from './service.js';
import { startThriftServer } from './thrift/server.js';

const quiet: ServiceLogger = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  debug: () => undefined,
  child: () => quiet,
};

test('GIVEN startService with a config holding clustr THEN FLURRY_E_UNKNOWN_OPTION suggesting cluster, nothing started', async () => {
  const config = loadServeConfig(['--port', '0', '--registry', 'static:1'], {});
  await assert.rejects(startService({ ...config, clustr: 'orders' } as never, quiet), (e: unknown) => {
    assert.ok(e instanceof FlurryError, String(e));
    assert.equal(e.code, 'FLURRY_E_UNKNOWN_OPTION');
    assert.equal(e.details.option, 'clustr');
    assert.equal(e.details.suggestion, 'cluster');
    assert.match(e.message, /^startService config has the unknown option "clustr"; did you mean "cluster"\?/);
    return true;
  });
});

test('GIVEN the config loadServeConfig builds THEN every key of it is a known key (the list matches the loader)', () => {
  const config = loadServeConfig(['--port', '0', '--registry', 'static:1', '--public-key-file', '/nonexistent'], {});
  assertKnownOptions(config, SERVE_CONFIG_KEYS, 'startService config');
  assert.deepEqual(Object.keys(config).sort(), [...SERVE_CONFIG_KEYS].sort());
});

test('GIVEN startThriftServer with maxConnection THEN FLURRY_E_UNKNOWN_OPTION suggesting maxConnections, nothing listening', async () => {
  await assert.rejects(
    startThriftServer({
      port: 0,
      generator: { next: () => 1n },
      layout: { nodeFields: [], totalBits: 64 },
      node: {},
      maxConnection: 5,
    } as never),
    (e: unknown) => {
      assert.ok(e instanceof FlurryError, String(e));
      assert.equal(e.code, 'FLURRY_E_UNKNOWN_OPTION');
      assert.equal(e.details.suggestion, 'maxConnections');
      assert.match(
        e.message,
        /^startThriftServer options has the unknown option "maxConnection"; did you mean "maxConnections"\?/,
      );
      return true;
    },
  );
});
