// The HTTP part of `npm run bench:segments`: `GET /v1/sequences/{key}/next` against `GET /v1/ids/next` on the
// same `flurry serve --sequences` process, with wrk (Debian's package), runs interleaved (ids, sequences, ids, …),
// the median of each side. Target (issue 14): the sequence route within 5 % of the ID route.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { root } from './report.mjs';

const BIN = path.join(root, 'packages', 'server', 'dist', 'cli', 'main.js');
const WRK = '/usr/bin/wrk';

function parseRate(text) {
  const m = /Requests\/sec:\s+([0-9.]+)/.exec(text);
  if (!m) throw new Error(`wrk printed no rate: ${text.slice(0, 400)}`);
  return Number(m[1]);
}

function wrk(port, pathAndQuery, { connections, duration }) {
  return new Promise((resolve, reject) => {
    const c = spawn(WRK, ['-t1', `-c${connections}`, `-d${duration}s`, `http://127.0.0.1:${port}${pathAndQuery}`], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let text = '';
    c.stdout.on('data', (d) => (text += d));
    c.stderr.on('data', (d) => (text += d));
    c.on('exit', (code) =>
      code === 0 ? resolve(parseRate(text)) : reject(new Error(`wrk failed (${code}): ${text}`)),
    );
  });
}

async function startServer(dir) {
  const child = spawn(
    process.execPath,
    [
      BIN,
      'serve',
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--registry',
      `file:${dir}`,
      '--allow-root',
      '--log-level',
      'info',
      '--sequences',
      'memory://bench-http',
      '--auto-create',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  const port = await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`flurry serve not ready in 20 s: ${out}`)), 20_000);
    let seen = 0;
    child.stdout.on('data', (d) => {
      out += d;
      for (const line of out.split('\n')) {
        if (!line.startsWith('{')) continue;
        try {
          const rec = JSON.parse(line);
          if (typeof rec.port === 'number' && rec.port > 0) seen = rec.port;
          if (rec.msg === 'ready' && seen) {
            clearTimeout(t);
            child.stdout.removeAllListeners('data');
            child.stdout.resume();
            resolve(seen);
          }
        } catch {
          /* partial line */
        }
      }
    });
    child.once('exit', (code) => reject(new Error(`flurry serve exited (${code}): ${out}`)));
  });
  return { child, port };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Measures both routes; returns `{ ids, sequences, ratio, rounds, connections, duration }` (req/s medians),
 * or `{ error }` when wrk is missing.
 * @example const r = await httpComparison({ rounds: 3, duration: 3, connections: 64 });
 */
export async function httpComparison({ rounds = 3, duration = 3, connections = 64 } = {}) {
  if (!existsSync(WRK) && process.getuid?.() === 0 && existsSync('/usr/bin/apt-get')) {
    spawnSync('apt-get', ['install', '-y', '-qq', 'wrk'], { stdio: ['ignore', 'ignore', 'inherit'] });
  }
  if (!existsSync(WRK)) return { error: 'wrk is missing (apt-get install -y wrk)' };
  const dir = mkdtempSync(path.join(tmpdir(), 'flurry-bench-seg-'));
  const srv = await startServer(dir);
  try {
    const seqPath = '/v1/sequences/bench/next';
    // Warm-up (JIT, and the key's step adapts to the load).
    await wrk(srv.port, '/v1/ids/next', { connections, duration: 2 });
    await wrk(srv.port, seqPath, { connections, duration: 2 });
    const ids = [];
    const seqs = [];
    for (let r = 0; r < rounds; r++) {
      ids.push(await wrk(srv.port, '/v1/ids/next', { connections, duration }));
      seqs.push(await wrk(srv.port, seqPath, { connections, duration }));
    }
    const a = median(ids);
    const b = median(seqs);
    return { ids: a, sequences: b, ratio: b / a, idsRuns: ids, seqRuns: seqs, rounds, connections, duration };
  } finally {
    srv.child.kill('SIGTERM');
    await new Promise((r) => srv.child.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
}
