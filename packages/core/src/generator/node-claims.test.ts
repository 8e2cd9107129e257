import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const INDEX_URL = new URL('../index.js', import.meta.url).href;

/** Runs a short ES-module script in a fresh Node process; returns its stdout lines. */
function runNode(
  code: string,
  env: Record<string, string> = {},
): { lines: string[]; status: number | null; stderr: string } {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { lines: r.stdout.trim().split('\n'), status: r.status, stderr: r.stderr };
}

const SCRIPT = `
const { Generator } = await import(${JSON.stringify(INDEX_URL)});
const a = new Generator({ layout: 'twitter', node: { datacenter: 1, worker: 1 } });
try { new Generator({ layout: 'leaf', node: { worker: 33 } }); console.log('accepted'); } catch (e) { console.log(e.code); }
const fs = await import('node:fs');
console.log(process.pid);
console.log(fs.existsSync('/dev/shm') ? fs.readdirSync('/dev/shm').filter((n) => n.startsWith('flurry-claims-' + process.pid + '-')).length : 'no-shm');
`;

test('GIVEN an unusable TMPDIR THEN claims move to /dev/shm, a second generator is still refused, and the directory is removed at exit', (t) => {
  if (!existsSync('/dev/shm')) return t.skip('no /dev/shm on this machine');
  const r = runNode(SCRIPT, { TMPDIR: '/proc/flurry-no-such-dir' });
  assert.equal(r.status, 0, r.stderr);
  const [verdict, pid, count] = r.lines;
  assert.equal(verdict, 'FLURRY_E_NODE_IN_USE');
  assert.equal(count, '1');
  assert.deepEqual(
    readdirSync('/dev/shm').filter((n) => n.startsWith(`flurry-claims-${pid}-`)),
    [],
  );
});

test('GIVEN a claims directory left by a dead process THEN the next process sweeps it and removes its own at exit', () => {
  const dead = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' });
  const deadPid = Number(dead.stdout.trim());
  const stale = join(tmpdir(), `flurry-claims-${deadPid}-1`);
  mkdirSync(join(stale, 'e1288834974657-u1-t22.41-s0.12-n21000'), { recursive: true });
  const r = runNode(SCRIPT);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.lines[0], 'FLURRY_E_NODE_IN_USE');
  assert.equal(existsSync(stale), false, 'the dead process directory was swept');
  assert.deepEqual(
    readdirSync(tmpdir()).filter((n) => n.startsWith(`flurry-claims-${r.lines[1]}-`)),
    [],
  );
});
