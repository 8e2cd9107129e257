/**
 * Test support: runs a real `flurry serve` process (the server package's built CLI) on
 * 127.0.0.1 and waits until it logs that it is ready; plus a delaying HTTP proxy in front
 * of one, for the slow-server and timeout cases. Not exported from the package's index.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The built CLI of @flurry/server in this repository. */
export const FLURRY_MAIN = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../server/dist/cli/main.js',
);

const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const p of live) p.kill('SIGKILL');
});

/** A running `flurry serve`. */
export interface FlurryProcess {
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** SIGTERM and wait for the exit (SIGKILL after 10 s). */
  stop(): Promise<void>;
  /** SIGKILL and wait for the exit. */
  kill(): Promise<void>;
  /** `GET /metrics` → the value of `flurry_http_requests_total{route=…,status=…}` (0 when absent). */
  requests(route: string, status?: number): Promise<number>;
}

/** Starts `flurry serve` and resolves once it is ready (lease held), within 20 s. */
export function startFlurry(opts: { registryDir: string; port?: number; args?: string[] }): Promise<FlurryProcess> {
  const args = [
    FLURRY_MAIN,
    'serve',
    '--host',
    '127.0.0.1',
    '--port',
    String(opts.port ?? 0),
    '--registry',
    `file:${opts.registryDir}`,
    '--allow-root',
    '--log-level',
    'info',
    ...(opts.args ?? []),
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      live.delete(child);
      resolve();
    }),
  );
  let out = '';
  return new Promise<FlurryProcess>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`flurry serve did not become ready within 20 s; output:\n${out}`));
    }, 20_000);
    const onEarlyExit = (code: number | null): void => {
      clearTimeout(timer);
      reject(new Error(`flurry serve exited with ${code} before it was ready; output:\n${out}`));
    };
    child.once('exit', onEarlyExit);
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    let port = 0;
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      for (const line of out.split('\n')) {
        if (!line.startsWith('{')) continue;
        let rec: { msg?: string; port?: number };
        try {
          rec = JSON.parse(line) as { msg?: string; port?: number };
        } catch {
          continue;
        }
        if (typeof rec.port === 'number' && rec.port > 0) port = rec.port;
        if (rec.msg === 'ready' && port > 0) {
          clearTimeout(timer);
          child.off('exit', onEarlyExit);
          child.stdout.removeAllListeners('data');
          child.stdout.resume();
          child.stderr.resume();
          const url = `http://127.0.0.1:${port}`;
          resolve({
            url,
            port,
            pid: child.pid!,
            async stop() {
              if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
              const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
              await exited;
              clearTimeout(t);
            },
            async kill() {
              if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
              await exited;
            },
            requests: (route, status = 200) => scrapeRequests(url, route, status),
          });
          return;
        }
      }
    });
  });
}

async function scrapeRequests(url: string, route: string, status: number): Promise<number> {
  // A fresh connection, closed after the answer, so no idle keep-alive socket delays the server's graceful stop.
  const text = await new Promise<string>((resolve, reject) => {
    http
      .get(`${url}/metrics`, { agent: false, headers: { connection: 'close' } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve(body));
        res.on('error', reject);
      })
      .on('error', reject);
  });
  const re = new RegExp(`^flurry_http_requests_total\\{([^}]*)\\}\\s+(\\d+)`, 'gm');
  let total = 0;
  for (const m of text.matchAll(re)) {
    const labels = m[1];
    if (labels.includes(`route="${route}"`) && labels.includes(`status="${status}"`)) total += Number(m[2]);
  }
  return total;
}

/**
 * A real HTTP server that forwards every request to `target` after `delayMs` (changeable
 * at run time), for slow-server and timeout tests.
 */
export async function startDelayProxy(
  target: string,
  delayMs: number,
): Promise<{ url: string; delayMs: number; requests: number; close(): Promise<void> }> {
  const agent = new http.Agent({ keepAlive: true });
  const state = {
    url: '',
    delayMs,
    requests: 0,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      agent.destroy();
    },
  };
  const server = http.createServer((req, res) => {
    state.requests++;
    const timer = setTimeout(() => {
      const up = http.request(target + req.url, { method: req.method, headers: req.headers, agent }, (ur) => {
        res.writeHead(ur.statusCode ?? 502, ur.headers);
        ur.pipe(res);
      });
      up.on('error', () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
      up.end();
    }, state.delayMs);
    res.on('close', () => clearTimeout(timer));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  state.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return state;
}
