#!/usr/bin/env node
// `npm run bench:service`: every peer of the service in one run, one step after another on
// the same machine: benchmarks/service.mjs (HTTP, console, memcached) and then
// benchmarks/grpc.mjs (gRPC unary and StreamIds against a bare server of the same library).
// The options of service.mjs pass to it unchanged; --duration, --rounds and --no-write pass
// to grpc.mjs too (its --connections means HTTP/2 connections, so it keeps its own default).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const shared = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--no-write') shared.push(args[i]);
  else if (args[i] === '--duration' || args[i] === '--rounds') shared.push(args[i], args[i + 1]);
}
for (const [script, argv] of [
  ['service.mjs', args],
  ['grpc.mjs', shared],
]) {
  const r = spawnSync(process.execPath, [path.join(here, script), ...argv], { stdio: 'inherit' });
  if (r.status !== 0) {
    process.stderr.write(`bench:service: ${script} exited with ${r.status ?? r.signal}\n`);
    process.exit(r.status ?? 1);
  }
}
