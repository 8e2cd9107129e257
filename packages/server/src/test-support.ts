/**
 * Helpers for the service's end-to-end tests: start the real `flurry serve` process on
 * 127.0.0.1 with a free port (`--port 0`, read back from its `ready` log line) and a
 * temporary `file:` registry directory; run the real CLI; make HTTP requests with
 * `node:http` and over raw sockets. Every wait is bounded.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The compiled bin (`dist/bin.cjs`), as users run it: the offline commands from the CLI's
 * bundles when they are fresh (`npm run build` makes them), every other command through the
 * dispatcher.
 */
export const FLURRY_BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), 'bin.cjs');

/** Parses a JSON response body as the shape the test expects (a test then asserts on it). */
export function jsonBody<T>(text: string): T {
  return JSON.parse(text) as T;
}

/** A temporary directory for a `file:` registry (removed with `rm`). */
export function tempDir(label: string): string {
  return mkdtempSync(path.join(tmpdir(), `flurry-server-${label}-`));
}

/** A running `flurry serve` process. */
export interface FlurryProcess {
  readonly port: number;
  readonly thriftPort: number | undefined;
  /** The memcached port (`--memcached-port`), when on. */
  readonly memcachedPort: number | undefined;
  readonly process: ChildProcess;
  /** The registry directory (`file:` URL target). */
  readonly registryDir: string;
  /** Every JSON log line so far. */
  readonly logs: Array<Record<string, unknown>>;
  /** Stderr so far. */
  stderr(): string;
  /** Sends a signal and waits (bounded) for the exit. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves once a log line matching `pred` has appeared (bounded). */
  waitForLog(pred: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
}

/** Options of {@link startFlurry}. */
export interface StartOptions {
  /** Extra `flurry serve` arguments. */
  args?: string[];
  /** Extra environment. */
  env?: Record<string, string>;
  /** Registry directory; default a new temp dir (removed on stop). */
  registryDir?: string;
  /** Registry URL; default `file:<registryDir>`. */
  registry?: string;
  /** Start-up bound; default 20 s. */
  timeoutMs?: number;
  /** Resolve at the `ready` log line (default) or already at `http listening` (a start that waits out an outage). */
  until?: 'ready' | 'listening';
}

/** Starts `flurry serve --port 0 --allow-root` and waits for its `ready` log line. */
export async function startFlurry(opts: StartOptions = {}): Promise<FlurryProcess> {
  const ownDir = opts.registryDir === undefined;
  const registryDir = opts.registryDir ?? tempDir('reg');
  const registry = opts.registry ?? `file:${registryDir}`;
  const child = spawn(
    process.execPath,
    [FLURRY_BIN, 'serve', '--port', '0', '--registry', registry, ...(opts.args ?? [])],
    {
      env: { ...process.env, FLURRY_ALLOW_ROOT: '1', TZ: 'UTC', ...(opts.env ?? {}) },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const logs: Array<Record<string, unknown>> = [];
  const waiters: Array<{
    pred: (l: Record<string, unknown>) => boolean;
    resolve: (l: Record<string, unknown>) => void;
  }> = [];
  let err = '';
  let buf = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d: string) => {
    buf += d;
    let nl: number;
    while ((nl = buf.indexOf('\n')) !== -1) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      let obj: Record<string, unknown>;
      try {
        obj = JSON.parse(line) as Record<string, unknown>;
      } catch {
        obj = { unparsed: line };
      }
      logs.push(obj);
      for (let i = waiters.length - 1; i >= 0; i--) {
        if (waiters[i].pred(obj)) {
          waiters[i].resolve(obj);
          waiters.splice(i, 1);
        }
      }
    }
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d: string) => (err += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );

  const waitForLog = (
    pred: (l: Record<string, unknown>) => boolean,
    timeoutMs = 20_000,
  ): Promise<Record<string, unknown>> => {
    const found = logs.find(pred);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const t = setTimeout(
        () =>
          reject(
            new Error(
              `no matching log line within ${timeoutMs} ms; stderr: ${err.slice(-2000)}; logs: ${JSON.stringify(logs.slice(-10))}`,
            ),
          ),
        timeoutMs,
      );
      waiters.push({
        pred,
        resolve: (l) => {
          clearTimeout(t);
          resolve(l);
        },
      });
      void exited.then((x) => {
        clearTimeout(t);
        reject(
          new Error(
            `flurry serve exited (${x.code}/${x.signal}) before the expected log line; stderr: ${err.slice(-2000)}`,
          ),
        );
      });
    });
  };

  let ready: Record<string, unknown>;
  try {
    const wanted = opts.until === 'listening' ? /^http listening/ : /^ready$/;
    ready = await waitForLog((l) => typeof l.msg === 'string' && wanted.test(l.msg), opts.timeoutMs ?? 20_000);
  } catch (e) {
    child.kill('SIGKILL');
    if (ownDir) rmSync(registryDir, { recursive: true, force: true });
    throw e;
  }

  const stop = async (signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 15_000) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    const t = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const r = await exited;
    clearTimeout(t);
    if (ownDir) rmSync(registryDir, { recursive: true, force: true });
    return r;
  };

  return {
    port: ready.port as number,
    thriftPort: ready.thriftPort as number | undefined,
    memcachedPort: ready.memcachedPort as number | undefined,
    process: child,
    registryDir,
    logs,
    stderr: () => err,
    stop,
    waitForLog,
  };
}

/** The outcome of running the CLI. */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `flurry ARGS…` as a process (bounded by `timeoutMs`, default 30 s). */
export function runFlurry(args: string[], env: Record<string, string> = {}, timeoutMs = 30_000): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [FLURRY_BIN, ...args], {
      env: { ...process.env, TZ: 'UTC', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const t = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`flurry ${args.join(' ')} did not finish within ${timeoutMs} ms`));
    }, timeoutMs);
    child.once('close', (code) => {
      clearTimeout(t);
      resolve({ code, stdout, stderr });
    });
  });
}

/** An HTTP response. */
export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTP request to 127.0.0.1:port (no keep-alive; bounded by 10 s). */
export function httpGet(
  port: number,
  pathAndQuery: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: pathAndQuery, method, headers, agent: false, timeout: 10_000 },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${pathAndQuery.slice(0, 80)} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * Writes raw bytes to 127.0.0.1:port and collects everything until the server closes the
 * connection or `idleMs` pass without data (bounded by `timeoutMs`).
 */
export function rawRequest(port: number, data: string | Buffer, idleMs = 300, timeoutMs = 5_000): Promise<string> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    let out = '';
    let idle: NodeJS.Timeout | undefined;
    const done = () => {
      clearTimeout(idle);
      clearTimeout(hard);
      s.destroy();
      resolve(out);
    };
    const hard = setTimeout(done, timeoutMs);
    const arm = () => {
      clearTimeout(idle);
      idle = setTimeout(done, idleMs);
    };
    s.on('connect', () => {
      s.write(data);
      arm();
    });
    s.on('data', (d) => {
      out += d.toString('latin1');
      arm();
    });
    s.on('error', done);
    s.on('close', done);
  });
}

/** The status codes of every HTTP response in a raw byte stream (pipelined responses). */
export function statusesOf(raw: string): number[] {
  return [...raw.matchAll(/HTTP\/1\.[01] (\d{3}) /g)].map((m) => Number(m[1]));
}
