// `npm start` under a supervisor (issue 24): a real process tree — npm → scripts/start.mjs → flurry serve —
// gets a signal at its top; the server must stop gracefully (its lease released), the port must be free, and the
// top process must exit with the server's status. `npm start --ignore-scripts` runs the start script itself
// (not prestart's dependency check and build: the test suite has built already).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { tempDir } from './test-support.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

interface Tree {
  readonly top: ChildProcess;
  readonly logs: Array<Record<string, unknown>>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly ready: Record<string, unknown>;
  output(): string;
}

/** Starts `cmd args` in the repository root and waits (bounded) for the server's `ready` line. */
async function startTree(cmd: string, args: string[]): Promise<Tree> {
  const top = spawn(cmd, args, {
    cwd: ROOT,
    env: { ...process.env, FLURRY_ALLOW_ROOT: '1', TZ: 'UTC' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Array<Record<string, unknown>> = [];
  let text = '';
  let buf = '';
  let onLine: () => void = () => undefined;
  top.stdout?.setEncoding('utf8');
  top.stdout?.on('data', (d: string) => {
    text += d;
    buf += d;
    let nl: number;
    while ((nl = buf.indexOf('\n')) !== -1) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      try {
        logs.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // npm's banner lines
      }
    }
    onLine();
  });
  top.stderr?.setEncoding('utf8');
  top.stderr?.on('data', (d: string) => (text += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    top.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const ready = await new Promise<Record<string, unknown>>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no ready line within 30 s: ${text.slice(-2000)}`)), 30_000);
    onLine = () => {
      const r = logs.find((l) => l.msg === 'ready');
      if (r) {
        clearTimeout(t);
        resolve(r);
      }
    };
    void exited.then((x) => {
      clearTimeout(t);
      reject(new Error(`exited (${x.code}/${x.signal}) before ready: ${text.slice(-2000)}`));
    });
  });
  return { top, logs, exited, ready, output: () => text };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** Sends `signal` to the top process; checks it exits with `code`, the server is gone and its port free. */
async function stopTree(tree: Tree, signal: NodeJS.Signals, code: number): Promise<void> {
  const serverPid = Number(tree.ready.pid);
  const port = Number(tree.ready.port);
  assert.ok(serverPid > 0 && serverPid !== tree.top.pid, 'the server runs in its own process');
  tree.top.kill(signal);
  const timer = setTimeout(() => tree.top.kill('SIGKILL'), 20_000);
  const exit = await tree.exited;
  clearTimeout(timer);
  for (let i = 0; i < 100 && alive(serverPid); i++) await new Promise((r) => setTimeout(r, 50));
  const orphan = alive(serverPid);
  if (orphan) process.kill(serverPid, 'SIGKILL');
  assert.equal(orphan, false, `the server (pid ${serverPid}) outlived ${signal} of its parent: ${tree.output()}`);
  assert.equal(await portFree(port), true, `port ${port} is free`);
  assert.deepEqual(exit, { code, signal: null }, tree.output());
  const msgs = tree.logs.map((l) => l.msg);
  assert.ok(msgs.includes('lease released with the final high-water mark'), msgs.join(' | '));
  assert.equal(msgs.at(-1), 'stopped');
}

test('GIVEN node scripts/start.mjs WHEN its process gets SIGTERM THEN the server stops gracefully, frees the port, and start.mjs exits 0', async () => {
  const dir = tempDir('start-term');
  try {
    const tree = await startTree(process.execPath, [
      path.join(ROOT, 'scripts', 'start.mjs'),
      '--port',
      '0',
      '--registry',
      `file:${dir}`,
    ]);
    await stopTree(tree, 'SIGTERM', 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('GIVEN node scripts/start.mjs WHEN its process gets SIGHUP THEN the server is asked to stop as by SIGTERM (lease released), not orphaned', async () => {
  const dir = tempDir('start-hup');
  try {
    const tree = await startTree(process.execPath, [
      path.join(ROOT, 'scripts', 'start.mjs'),
      '--port',
      '0',
      '--registry',
      `file:${dir}`,
    ]);
    await stopTree(tree, 'SIGHUP', 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('GIVEN node scripts/start.mjs WHEN the server exits with a status or dies of a signal THEN start.mjs exits with that status or dies of that signal', async () => {
  const script = path.join(ROOT, 'scripts', 'start.mjs');
  const bad = spawnSync(process.execPath, [script, '--port', 'eighty'], {
    cwd: ROOT,
    env: { ...process.env, FLURRY_ALLOW_ROOT: '1' },
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(bad.status, 2, bad.stderr);
  assert.match(bad.stderr, /FLURRY_E_CONFIG/);
  const dir = tempDir('start-kill');
  try {
    const tree = await startTree(process.execPath, [script, '--port', '0', '--registry', `file:${dir}`]);
    process.kill(Number(tree.ready.pid), 'SIGKILL');
    assert.deepEqual(await tree.exited, { code: null, signal: 'SIGKILL' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('GIVEN npm start (npm → its script shell → start.mjs → flurry serve) WHEN npm gets SIGTERM THEN no process is left holding the port', async () => {
  const dir = tempDir('start-npm');
  try {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const tree = await startTree(npm, ['start', '--ignore-scripts', '--', '--port', '0', '--registry', `file:${dir}`]);
    await stopTree(tree, 'SIGTERM', 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
