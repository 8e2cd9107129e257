#!/usr/bin/env node
// `npm start`: runs `flurry serve` (127.0.0.1:8080, twitter layout, embedded file registry)
// with any arguments given after `npm start --`. `flurry serve` refuses to run as root; a
// fresh machine's first command is often typed as root, so when this script is run as root
// and no choice was made (`--allow-root` / FLURRY_ALLOW_ROOT), it passes `--allow-root` and
// says so. In production run `flurry serve` as an unprivileged user (docs/operations.md).
//
// Under a supervisor the signal goes to this process (npm's script shell execs it, see
// package.json): SIGINT and SIGTERM are passed on to the server, which stops gracefully
// (in-flight requests, lease released); SIGHUP, which the server has no handler for (it
// would die without releasing its lease), asks it to stop as SIGTERM does. This script
// then exits with the server's status, or dies of the same signal when the server did.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(root, 'packages', 'server', 'dist', 'cli', 'main.js');
const args = ['serve', ...process.argv.slice(2)];
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const chosen = args.includes('--allow-root') || (process.env.FLURRY_ALLOW_ROOT ?? '') !== '';
if (isRoot && !chosen) {
  console.error(
    'flurry: npm start was run as root: starting with --allow-root. In production run `flurry serve` as an unprivileged user (see docs/operations.md).',
  );
  args.push('--allow-root');
}

const child = spawn(process.execPath, [cli, ...args], { stdio: 'inherit' });
// What each signal received here asks of the server.
const forward = { SIGINT: 'SIGINT', SIGTERM: 'SIGTERM', SIGHUP: 'SIGTERM' };
const handlers = new Map();
for (const [sig, toChild] of Object.entries(forward)) {
  const onSignal = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(toChild);
  };
  handlers.set(sig, onSignal);
  process.on(sig, onSignal);
}
child.on('error', (err) => {
  console.error(`flurry: npm start could not run the server (${err.message})`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  if (code !== null) process.exit(code);
  // The server died of a signal: die of the same one, so a supervisor sees what happened.
  for (const [sig, h] of handlers) process.off(sig, h);
  process.exitCode = 128 + (os.constants.signals[signal] ?? 15); // if that signal is ignored here
  process.kill(process.pid, signal ?? 'SIGTERM');
});
