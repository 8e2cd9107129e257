#!/usr/bin/env node
// `npm start`: runs `flurry serve` (127.0.0.1:8080, twitter layout, embedded file registry)
// with any arguments given after `npm start --`. `flurry serve` refuses to run as root; a
// fresh machine's first command is often typed as root, so when this script is run as root
// and no choice was made (`--allow-root` / FLURRY_ALLOW_ROOT), it passes `--allow-root` and
// says so. In production run `flurry serve` as an unprivileged user (docs/operations.md).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
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
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => {
  process.exitCode = code ?? (signal ? 128 : 1);
});
