/**
 * Test harness for real SQL databases (PostgreSQL, MariaDB), beside the engine harness in
 * `harness.ts`: installs the Debian package when it is missing, initialises a fresh data
 * directory in a temporary directory, starts the server on a free loopback port, creates a
 * test role with a password and a database, and stops everything afterwards. It never
 * skips: when a database cannot be had it throws, naming the Debian package.
 *
 * Both servers refuse to run as root, so when the tests run as root the server runs as the
 * package's system user (`postgres`, `mysql`) and the temporary directory is handed to it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DATABASE, USER, accountFor, type Plan } from './database-common.js';
import { freePort, waitForPort, waitStopped } from './harness.js';
import { mariadbPlan } from './mariadb-launcher.js';
import { postgresPlan } from './postgres-launcher.js';

/** The databases the harness can start. */
export type DatabaseKind = 'postgres' | 'mariadb';

/** How to reach a running test database as its (non-superuser) test role. */
export interface DatabaseConnection {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly password: string;
  readonly database: string;
}

/** A running test database. */
export interface RunningDatabase {
  readonly kind: DatabaseKind;
  readonly port: number;
  /** `host:port` */
  readonly address: string;
  /** The test role, its password and its database (the role owns the database). */
  readonly connection: DatabaseConnection;
  /** A URL with the test role's credentials: `postgres://flurry:PW@127.0.0.1:PORT/flurry` or `mysql://…`. */
  readonly url: string;
  /** The temporary directory holding data, socket and logs (removed by stop()). */
  readonly dataDir: string;
  /** The server process, leader of its own process group. */
  readonly process: ChildProcess;
  /** Runs SQL as the superuser through the server's command-line client; returns its output (tab-separated rows). */
  sql(statement: string): string;
  /** SIGKILLs the server's whole process group without removing its data. */
  kill(): Promise<void>;
  /** Starts it again on the same port and data directory (kills it first if it runs). */
  restart(): Promise<void>;
  /** SIGSTOP / SIGCONT the whole process group (a stalled database: connections stay open, nothing answers). */
  pause(): void;
  resume(): void;
  /** Stops the server (fast shutdown, SIGKILL after 5 s) and removes its data directory. */
  stop(): Promise<void>;
}

const running = new Set<RunningDatabase>();
let exitHookInstalled = false;
function killGroup(child: ChildProcess, signal: NodeJS.Signals | 0): boolean {
  if (child.pid === undefined) return false;
  try {
    process.kill(-child.pid, signal);
    return true;
  } catch {
    return false;
  }
}
/**
 * Every process descending from `root` (by /proc parent links). PostgreSQL's backends make
 * themselves leaders of their own process groups (setsid), so signalling the server's group
 * misses them.
 */
function descendants(root: number | undefined): number[] {
  if (root === undefined) return [];
  const parent = new Map<number, number[]>();
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    return [];
  }
  for (const e of entries) {
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = parent.get(ppid) ?? [];
      list.push(Number(e));
      parent.set(ppid, list);
    } catch {
      /* exited meanwhile */
    }
  }
  const out: number[] = [];
  const queue = [root];
  for (let i = 0; i < queue.length && i < 10_000; i++) {
    for (const c of parent.get(queue[i]) ?? []) {
      out.push(c);
      queue.push(c);
    }
  }
  return out;
}
/** Signals the server's group and every descendant (see {@link descendants}). */
function signalAll(child: ChildProcess, signal: NodeJS.Signals): void {
  killGroup(child, signal);
  for (const pid of descendants(child.pid)) {
    try {
      process.kill(pid, signal);
    } catch {
      /* exited meanwhile */
    }
  }
}
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const db of running) {
      killGroup(db.process, 'SIGCONT');
      killGroup(db.process, 'SIGKILL');
      try {
        rmSync(db.dataDir, { recursive: true, force: true });
      } catch {
        /* best effort */
      }
    }
  });
}

/**
 * Starts a real database on a free loopback port with a fresh temporary data directory,
 * installing its Debian package first if needed (`postgresql`, `mariadb-server`), and creates
 * the role `flurry` (random password) owning the database `flurry`.
 *
 * @example
 * ```ts
 * const pg = await startDatabase('postgres');
 * const registry = await openRegistry(`${pg.url}?table=flurry_nodes`, { cluster: 'test' });
 * await registry.close();
 * await pg.stop();
 * ```
 */
export async function startDatabase(kind: DatabaseKind): Promise<RunningDatabase> {
  const pkg = kind === 'postgres' ? 'postgresql' : 'mariadb-server';
  const account = accountFor(kind === 'postgres' ? 'postgres' : 'mysql', pkg);
  const port = await freePort();
  const dataDir = mkdtempSync(path.join(tmpdir(), `flurry-${kind}-`));
  if (account) chownSync(dataDir, account.uid, account.gid);
  const password = randomBytes(12).toString('hex');
  let plan: Plan;
  try {
    plan = (kind === 'postgres' ? postgresPlan : mariadbPlan)(dataDir, port, password, account);
    plan.init();
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  let child!: ChildProcess;
  let output = '';

  const launch = async (): Promise<void> => {
    const { cmd, args } = plan.command();
    output = '';
    child = spawn(cmd, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // its own process group, so signals reach every backend process
      cwd: dataDir,
      env: { ...process.env, LC_ALL: 'C', LANG: 'C' },
      ...(account ? { uid: account.uid, gid: account.gid } : {}),
    });
    const keep = (d: Buffer): void => {
      output = (output + d.toString()).slice(-4000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    const exited = new Promise<never>((_, reject) =>
      child.once('exit', (code, sig) =>
        reject(new Error(`${kind} exited during start-up (code ${code}, signal ${sig}): ${output}`)),
      ),
    );
    exited.catch(() => undefined);
    await Promise.race([
      (async () => {
        await waitForPort(port, 60_000);
        await plan.ready();
      })(),
      exited,
    ]);
  };

  const alive = (): boolean => child.exitCode === null && child.signalCode === null;
  const waitExit = (): Promise<void> =>
    new Promise((resolve) => {
      if (!alive()) return resolve();
      child.once('exit', () => resolve());
    });
  /** Waits (bounded) until no process of the group is left, so a restart finds its resources free. */
  const waitGroupGone = async (): Promise<void> => {
    const until = Date.now() + 5000;
    while (Date.now() < until && killGroup(child, 0)) {
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  try {
    await launch();
    plan.setup();
  } catch (err) {
    killGroup(child, 'SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }

  const db: RunningDatabase = {
    kind,
    port,
    address: `127.0.0.1:${port}`,
    connection: { host: '127.0.0.1', port, user: USER, password, database: DATABASE },
    url: plan.url,
    dataDir,
    get process() {
      return child;
    },
    sql: (statement) => plan.sql(statement),
    async kill() {
      signalAll(child, 'SIGCONT');
      signalAll(child, 'SIGKILL');
      await waitExit();
      await waitGroupGone();
    },
    async restart() {
      if (alive()) await db.kill();
      // After a SIGKILL the kernel may still count the old server's System V interlock segment
      // as attached for a moment on a loaded machine; PostgreSQL then refuses to start
      // ("pre-existing shared memory block … is still in use"). Retry that one refusal, bounded.
      for (let attempt = 1; ; attempt++) {
        try {
          await launch();
          return;
        } catch (e) {
          if (attempt >= 10 || !/pre-existing shared memory block/.test(String(e))) throw e;
          await new Promise((r) => setTimeout(r, 500));
        }
      }
    },
    pause() {
      signalAll(child, 'SIGSTOP');
      // kill(2) returns before the target has stopped: on a loaded machine a server thread
      // may still answer a query sent right after (seen with MariaDB under load). Wait
      // (bounded) until every thread of every server process is stopped.
      for (const pid of [child.pid, ...descendants(child.pid)]) if (pid !== undefined) waitStopped(pid, 2_000);
    },
    resume() {
      signalAll(child, 'SIGCONT');
    },
    async stop() {
      running.delete(db);
      if (alive()) {
        killGroup(child, 'SIGCONT');
        child.kill(plan.stopSignal); // the leader shuts its own children down
        const t = setTimeout(() => killGroup(child, 'SIGKILL'), 5000);
        await waitExit();
        clearTimeout(t);
      }
      killGroup(child, 'SIGKILL'); // any straggler of the group
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  running.add(db);
  installExitHook();
  return db;
}
