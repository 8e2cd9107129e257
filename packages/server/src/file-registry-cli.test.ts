/** `flurry next --registry file:/proc/reg` fails with a coded message instead of spinning forever (issue 17, part 3). */
import { test } from 'node:test';
import { rmSync } from 'node:fs';
import assert from 'node:assert/strict';
import { runFlurry, tempDir } from './test-support.js';

test('GIVEN flurry next --registry file:/proc/reg THEN it exits 1 with FLURRY_E_REGISTRY_UNREACHABLE naming /proc/reg, within its connect timeout', async () => {
  const state = tempDir('proc-reg');
  // Bounded: before the fix this never returned (Node's recursive mkdir loops on /proc) and runFlurry rejected.
  const r = await runFlurry(['next', '--registry', 'file:/proc/reg'], { XDG_STATE_HOME: state }, 20_000).finally(() =>
    rmSync(state, { recursive: true, force: true }),
  );
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /FLURRY_E_REGISTRY_UNREACHABLE/);
  assert.match(r.stderr, /\/proc\/reg/);
  assert.equal(r.stdout, '');
});
