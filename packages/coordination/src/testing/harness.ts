/**
 * Test harness for real engines (ZooKeeper, etcd, Redis): installs the Debian package
 * when it is missing, starts the server on a free loopback port with a temporary data
 * directory, and stops it afterwards. Used by the tests of every package and by the
 * torture suite. It never skips: when an engine cannot be had it throws, naming the
 * Debian package that is missing.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * Returns a TCP port that is free on 127.0.0.1 right now.
 *
 * @example
 * ```ts
 * const port = await freePort();
 * ```
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Resolves once `host:port` accepts TCP connections, or rejects after `timeoutMs`.
 *
 * @example
 * ```ts
 * await waitForPort(2181, 10_000);
 * ```
 */
export async function waitForPort(port: number, timeoutMs: number, host = '127.0.0.1'): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect({ host, port });
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => {
        s.destroy();
        resolve(false);
      });
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`port ${host}:${port} did not open within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Makes sure a Debian package is installed (checked by the presence of `probe`), running
 * `apt-get install -y PKG` as needed. Throws, naming the package, when that fails.
 *
 * @example
 * ```ts
 * ensureDebianPackage('redis-server', '/usr/bin/redis-server');
 * ```
 */
export function ensureDebianPackage(pkg: string, probe: string): void {
  if (existsSync(probe)) return;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  let r = spawnSync('apt-get', ['install', '-y', '-qq', pkg], { env, encoding: 'utf8' });
  if (r.status !== 0) {
    spawnSync('apt-get', ['update', '-qq'], { env, encoding: 'utf8' });
    r = spawnSync('apt-get', ['install', '-y', '-qq', pkg], { env, encoding: 'utf8' });
  }
  if (r.status !== 0 || !existsSync(probe)) {
    throw new Error(
      `the Debian package "${pkg}" is missing and could not be installed (apt-get install -y ${pkg}: ` +
        `${(r.stderr || r.error?.message || '').trim().slice(0, 500)}). Install it as root and run the tests again.`,
    );
  }
}

/** The engines the harness can start. */
export type EngineKind = 'redis' | 'etcd' | 'zookeeper';

/** A running engine. */
export interface RunningEngine {
  readonly kind: EngineKind;
  readonly port: number;
  /** A registry URL for it, e.g. `redis://127.0.0.1:PORT/0`. */
  readonly url: string;
  /** `host:port` */
  readonly address: string;
  readonly dataDir: string;
  /** The server process (for SIGSTOP/SIGCONT/SIGKILL in fault tests). */
  readonly process: ChildProcess;
  /** Kills the server (SIGKILL) without removing its data. */
  kill(): Promise<void>;
  /** Starts it again on the same port and data directory (after kill()). */
  restart(): Promise<void>;
  /** SIGSTOP / SIGCONT the server (a stalled engine). */
  pause(): void;
  resume(): void;
  /** Stops the server and removes its data directory. */
  stop(): Promise<void>;
}

interface EngineDef {
  pkg: string;
  probe: string;
  startTimeoutMs: number;
  command(
    port: number,
    dataDir: string,
    extraPort: number,
  ): { cmd: string; args: string[]; env?: Record<string, string> };
  url(port: number): string;
  ready?(port: number): Promise<void>;
}

const ZK_HOME = '/usr/share/zookeeper';

const DEFS: Record<EngineKind, EngineDef> = {
  redis: {
    pkg: 'redis-server',
    probe: '/usr/bin/redis-server',
    startTimeoutMs: 15_000,
    command: (port, dir) => ({
      cmd: '/usr/bin/redis-server',
      args: [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--save',
        '',
        '--appendonly',
        'yes',
        // What the segment store and the lease registry demand (they refuse a Redis that can lose acknowledged writes).
        '--appendfsync',
        'always',
        '--daemonize',
        'no',
        '--protected-mode',
        'no',
        '--logfile',
        '',
      ],
    }),
    url: (port) => `redis://127.0.0.1:${port}/0`,
  },
  etcd: {
    pkg: 'etcd-server',
    probe: '/usr/bin/etcd',
    startTimeoutMs: 30_000,
    command: (port, dir, peer) => ({
      cmd: '/usr/bin/etcd',
      args: [
        '--name',
        'flurry-test',
        '--data-dir',
        dir,
        '--listen-client-urls',
        `http://127.0.0.1:${port}`,
        '--advertise-client-urls',
        `http://127.0.0.1:${port}`,
        '--listen-peer-urls',
        `http://127.0.0.1:${peer}`,
        '--initial-advertise-peer-urls',
        `http://127.0.0.1:${peer}`,
        '--initial-cluster',
        `flurry-test=http://127.0.0.1:${peer}`,
        '--log-level',
        'error',
      ],
      env: { ETCD_UNSUPPORTED_ARCH: process.arch === 'x64' ? '' : process.arch },
    }),
    url: (port) => `etcd://127.0.0.1:${port}/flurry`,
  },
  zookeeper: {
    pkg: 'zookeeper',
    probe: `${ZK_HOME}/bin/zkServer.sh`,
    startTimeoutMs: 60_000,
    command: (port, dir) => {
      const cfg = path.join(dir, 'zoo.cfg');
      const data = path.join(dir, 'data');
      // Written synchronously before spawn by startEngine (see writeZkConfig).
      writeZkConfig(cfg, data, port);
      const cp = ['/etc/zookeeper/conf', '/usr/share/java/zookeeper.jar'].join(':');
      return {
        cmd: 'java',
        args: [
          '-Xmx256m',
          '-XX:+UseSerialGC',
          '-Dzookeeper.log.dir=' + dir,
          '-Dzookeeper.root.logger=WARN,CONSOLE',
          '-Dzookeeper.admin.enableServer=false',
          '-cp',
          cp,
          'org.apache.zookeeper.server.quorum.QuorumPeerMain',
          cfg,
        ],
      };
    },
    url: (port) => `zookeeper://127.0.0.1:${port}/flurry`,
  },
};

function writeZkConfig(cfg: string, dataDir: string, port: number): void {
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(
    cfg,
    [
      `tickTime=500`,
      `dataDir=${dataDir}`,
      `clientPort=${port}`,
      `clientPortAddress=127.0.0.1`,
      `minSessionTimeout=1000`,
      `maxSessionTimeout=60000`,
      `maxClientCnxns=0`,
      `admin.enableServer=false`,
      `4lw.commands.whitelist=ruok,srvr,stat`,
      `standaloneEnabled=true`,
      '',
    ].join('\n'),
  );
}

const running = new Set<RunningEngine>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const e of running) {
      try {
        e.process.kill('SIGKILL');
      } catch {
        /* already gone */
      }
      try {
        rmSync(e.dataDir, { recursive: true, force: true });
      } catch {
        /* best effort */
      }
    }
  });
}

/**
 * Starts a real engine on a free loopback port with a fresh temporary data directory,
 * installing its Debian package first if needed.
 *
 * @example
 * ```ts
 * const zk = await startEngine('zookeeper');
 * // … registry URL: zk.url
 * await zk.stop();
 * ```
 */
export async function startEngine(kind: EngineKind): Promise<RunningEngine> {
  const def = DEFS[kind];
  ensureDebianPackage(def.pkg, def.probe);
  if (kind === 'zookeeper') ensureDebianPackage('default-jre-headless', '/usr/bin/java');
  const port = await freePort();
  const extra = await freePort();
  const dataDir = mkdtempSync(path.join(tmpdir(), `flurry-${kind}-`));
  let child: ChildProcess;
  let output = '';

  const launch = async (): Promise<void> => {
    const { cmd, args, env } = def.command(port, dataDir, extra);
    output = '';
    child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...(env ?? {}) } });
    child.stdout?.on('data', (d: Buffer) => {
      output = (output + d.toString()).slice(-4000);
    });
    child.stderr?.on('data', (d: Buffer) => {
      output = (output + d.toString()).slice(-4000);
    });
    const exited = new Promise<never>((_, reject) =>
      child.once('exit', (code, sig) =>
        reject(new Error(`${kind} exited during start-up (code ${code}, signal ${sig}): ${output}`)),
      ),
    );
    exited.catch(() => undefined);
    await Promise.race([waitForPort(port, def.startTimeoutMs), exited]);
    if (def.ready) await def.ready(port);
  };
  await launch();

  const waitExit = (): Promise<void> =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
    });

  const engine: RunningEngine = {
    kind,
    port,
    url: def.url(port),
    address: `127.0.0.1:${port}`,
    dataDir,
    get process() {
      return child;
    },
    async kill() {
      try {
        child.kill('SIGCONT');
      } catch {
        /* not stopped */
      }
      child.kill('SIGKILL');
      await waitExit();
    },
    async restart() {
      if (child.exitCode === null && child.signalCode === null) await engine.kill();
      await launch();
    },
    pause() {
      child.kill('SIGSTOP');
      // kill(2) returns before the target has stopped: on a loaded machine an engine thread
      // may still answer a request sent right after. Wait (bounded) until every thread of
      // the process is in the stopped state, so "paused" means paused.
      if (child.pid !== undefined) waitStopped(child.pid, 2_000);
    },
    resume() {
      child.kill('SIGCONT');
    },
    async stop() {
      running.delete(engine);
      if (child.exitCode === null && child.signalCode === null) {
        try {
          child.kill('SIGCONT');
        } catch {
          /* fine */
        }
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 5000);
        await waitExit();
        clearTimeout(t);
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  running.add(engine);
  installExitHook();
  return engine;
}

/**
 * Spins (bounded by `timeoutMs`) until every thread of `pid` is stopped (state T), per /proc:
 * kill(2) with SIGSTOP returns before the target has stopped.
 *
 * @example
 * ```ts
 * process.kill(pid, 'SIGSTOP');
 * waitStopped(pid, 2_000); // now no thread of pid answers a request
 * ```
 */
export function waitStopped(pid: number, timeoutMs: number): void {
  const until = Date.now() + timeoutMs;
  const stopped = (): boolean => {
    try {
      return readdirSync(`/proc/${pid}/task`).every((t) => {
        const stat = readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
        const state = stat.charAt(stat.lastIndexOf(')') + 2);
        return state === 'T' || state === 't';
      });
    } catch {
      return true; // gone, or no /proc: nothing to wait for
    }
  };
  while (!stopped() && Date.now() < until) {
    /* spin: stopping takes microseconds to a few milliseconds */
  }
}
