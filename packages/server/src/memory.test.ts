import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { pinYoungGeneration } from './memory.js';

// A child allocates 200 MB in small objects, a quarter of them kept across scavenges (what
// grows V8's new space), and prints the new space's size in MB.
const child = (pin: boolean, nodeArgs: string[] = []) => {
  const src = `
    import v8 from 'node:v8';
    import { pinYoungGeneration } from ${JSON.stringify(new URL('./memory.js', import.meta.url).href)};
    const pinned = ${pin} ? pinYoungGeneration() : false;
    let keep = [];
    for (let i = 0; i < 2_000_000; i++) {
      const o = { i, s: 'x' + i, a: [i, i] };
      if (i % 4 === 0) keep.push(o);
      if (keep.length > 40_000) keep = [];
    }
    const ns = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    console.log(JSON.stringify({ pinned, newSpaceMb: ns.space_size / 2 ** 20 }));`;
  const r = spawnSync(process.execPath, [...nodeArgs, '--input-type=module', '-e', src], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as { pinned: boolean; newSpaceMb: number };
};

describe('pinYoungGeneration', () => {
  it('GIVEN an allocating process WHEN pinned THEN its new space stays at its start size, and grows without the pin', () => {
    const free = child(false);
    const pinned = child(true);
    assert.equal(pinned.pinned, true);
    assert.ok(
      pinned.newSpaceMb <= 2.5,
      `pinned new space ${pinned.newSpaceMb} MB, want <= 2.5 (two 1 MiB semi-spaces)`,
    );
    assert.ok(
      free.newSpaceMb >= 8,
      `unpinned new space ${free.newSpaceMb} MB: the test's allocation no longer grows it`,
    );
  });

  it('GIVEN a young-generation flag of the operator THEN nothing is changed', () => {
    assert.equal(pinYoungGeneration(['--max-semi-space-size=8'], ''), false);
    assert.equal(pinYoungGeneration([], '--inspect --max_semi_space_size=8'), false);
    assert.equal(pinYoungGeneration([], '--semi-space-growth-factor=4'), false);
    const own = child(true, ['--max-semi-space-size=8']);
    assert.equal(own.pinned, false);
    assert.ok(own.newSpaceMb > 2.5, `new space ${own.newSpaceMb} MB under the operator's own --max-semi-space-size=8`);
  });
});
