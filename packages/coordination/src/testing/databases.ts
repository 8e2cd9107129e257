/**
 * Test harness for real SQL databases (PostgreSQL, MariaDB), beside the engine harness in
 * `harness.ts`: installs the Debian package when it is missing, initialises a fresh data
 * directory in a temporary directory, starts the server on a free loopback port, creates a
 * test role with a password and a database, and stops everything afterwards. It never
 * skips: when a database cannot be had it throws, naming the Debian package.
 *
 * Both servers refuse to run as root, so when the tests run as root the server runs as the
 * package's system user (`postgres`, `mysql`) and the temporary directory is handed to it.
 *
 * @example
 * ```ts
 * import { startDatabase } from '@flurry/coordination/testing';
 * const pg = await startDatabase('postgres');
 * try { console.log(pg.connection.port); } finally { await pg.stop(); }
 * ```
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ensureDebianPackage, freePort, waitForPort, waitStopped } from './harness.js';

/**
 * The databases the harness can start.
 *
 * @example
 * ```ts
 * for (const kind of ['postgres', 'mariadb'] satisfies DatabaseKind[]) await (await startDatabase(kind)).stop();
 * ```
 */
export type DatabaseKind = 'postgres' | 'mariadb';

/**
 * How to reach a running test database as its (non-superuser) test role.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * const db = await startDatabase('postgres');
 * const client = new pg.Client(db.connection);
 * ```
 */
export interface DatabaseConnection {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly password: string;
  readonly database: string;
}

/**
 * A running test database.
 *
 * @example
 * ```ts
 * const db: RunningDatabase = await startDatabase('mariadb');
 * db.sql("CREATE DATABASE other"); // as the superuser, through the server's own client
 * db.pause(); // a stalled database: every query hangs until resume()
 * db.resume();
 * await db.kill(); // crash…
 * await db.restart(); // …and recovery, same port and data
 * await db.stop();
 * ```
 */
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

interface Account {
  uid: number;
  gid: number;
}

/** The uid/gid to run a server as: the system user when we are root, else ourselves. */
function accountFor(user: string, pkg: string): Account | undefined {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  const uid = spawnSync('id', ['-u', user], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', user], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) {
    throw new Error(
      `the system user "${user}" is missing (it comes with the Debian package "${pkg}"); ` +
        `reinstall it: apt-get install --reinstall -y ${pkg}`,
    );
  }
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

function run(cmd: string, args: string[], account: Account | undefined, what: string, input?: string): string {
  const r = spawnSync(cmd, args, {
    encoding: 'utf8',
    input,
    timeout: 120_000,
    ...(account ? { uid: account.uid, gid: account.gid } : {}),
    env: { ...process.env, LC_ALL: 'C', LANG: 'C' },
    cwd: '/',
  });
  if (r.status !== 0) {
    throw new Error(
      `${what} failed (${cmd} exited ${r.status ?? r.signal}): ` +
        `${(r.stderr || r.error?.message || r.stdout || '').trim().slice(-1500)}`,
    );
  }
  return r.stdout;
}

/** The newest installed PostgreSQL's bin directory, installing Debian's `postgresql` when none is. */
function postgresBin(): string {
  const find = (): string | undefined => {
    const root = '/usr/lib/postgresql';
    if (!existsSync(root)) return undefined;
    const versions = readdirSync(root)
      .filter((v) => existsSync(path.join(root, v, 'bin', 'postgres')))
      .sort((a, b) => Number(b) - Number(a));
    return versions.length ? path.join(root, versions[0], 'bin') : undefined;
  };
  let bin = find();
  if (!bin) {
    ensureDebianPackage('postgresql', '/usr/share/postgresql-common/pg_wrapper');
    bin = find();
  }
  if (!bin) {
    throw new Error(
      'the Debian package "postgresql" is installed but no server binary was found under /usr/lib/postgresql/*/bin; ' +
        'reinstall it: apt-get install --reinstall -y postgresql',
    );
  }
  return bin;
}

function quoteLiteral(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

interface Plan {
  pkg: string;
  /** One-time initialisation of the data directory (before the first start). */
  init(): void;
  command(): { cmd: string; args: string[] };
  /** Waits until the server answers queries (not only accepts TCP). */
  ready(): Promise<void>;
  /** Creates the test role and database (after the first start). */
  setup(): void;
  sql(statement: string): string;
  url: string;
  /** The signal for a clean, fast shutdown. */
  stopSignal: NodeJS.Signals;
}

const USER = 'flurry';
const DATABASE = 'flurry';

function postgresPlan(dir: string, port: number, password: string, account: Account | undefined): Plan {
  const bin = postgresBin();
  const data = path.join(dir, 'data');
  const sock = path.join(dir, 'sock');
  const psql = (statement: string, db = 'postgres'): string =>
    run(
      path.join(bin, 'psql'),
      [
        '-X',
        '-q',
        '-A',
        '-t',
        '-F',
        '\t',
        '-v',
        'ON_ERROR_STOP=1',
        '-h',
        sock,
        '-p',
        String(port),
        '-U',
        'postgres',
        '-d',
        db,
      ],
      account,
      'psql',
      statement,
    );
  return {
    pkg: 'postgresql',
    init() {
      mkdirSync(sock, { recursive: true });
      if (account) chownSync(sock, account.uid, account.gid);
      run(
        path.join(bin, 'initdb'),
        [
          '-D',
          data,
          '-U',
          'postgres',
          '--auth-local=trust',
          '--auth-host=scram-sha-256',
          '--no-sync',
          '-E',
          'UTF8',
          '--locale=C',
        ],
        account,
        'initdb (Debian package "postgresql")',
      );
    },
    command: () => ({
      cmd: path.join(bin, 'postgres'),
      args: [
        '-D',
        data,
        '-p',
        String(port),
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        `unix_socket_directories=${sock}`,
        '-c',
        'fsync=off',
        '-c',
        'max_connections=200',
        '-c',
        'shared_buffers=32MB',
        '-c',
        'log_min_messages=warning',
      ],
    }),
    async ready() {
      const until = Date.now() + 30_000;
      for (;;) {
        const r = spawnSync(path.join(bin, 'pg_isready'), ['-q', '-h', '127.0.0.1', '-p', String(port)]);
        if (r.status === 0) return;
        if (Date.now() > until) throw new Error(`PostgreSQL on port ${port} did not become ready within 30 s`);
        await new Promise((r2) => setTimeout(r2, 100));
      }
    },
    setup() {
      psql(`CREATE ROLE ${USER} LOGIN PASSWORD ${quoteLiteral(password)}; CREATE DATABASE ${DATABASE} OWNER ${USER};`);
    },
    sql: (statement) => psql(statement, DATABASE),
    url: `postgres://${USER}:${password}@127.0.0.1:${port}/${DATABASE}`,
    stopSignal: 'SIGINT',
  };
}

function mariadbPlan(dir: string, port: number, password: string, account: Account | undefined): Plan {
  ensureDebianPackage('mariadb-server', '/usr/sbin/mariadbd');
  ensureDebianPackage('mariadb-client', '/usr/bin/mariadb');
  const data = path.join(dir, 'data');
  const sock = path.join(dir, 'mariadb.sock');
  // A private tmpdir: a MariaDB starting elsewhere on the machine deletes stale "#sql*" files in
  // its tmpdir, and with the shared /tmp that broke concurrent bootstraps.
  const tmp = path.join(dir, 'tmp');
  const client = (statement: string): string =>
    run(
      '/usr/bin/mariadb',
      ['--no-defaults', '-uroot', `--socket=${sock}`, '--batch', '--skip-column-names'],
      undefined, // root over the socket: trusted by unix_socket authentication or an empty password
      'mariadb client',
      statement,
    );
  return {
    pkg: 'mariadb-server',
    init() {
      mkdirSync(tmp, { recursive: true });
      if (account) chownSync(tmp, account.uid, account.gid);
      run(
        '/usr/bin/mariadb-install-db',
        [
          '--no-defaults',
          `--datadir=${data}`,
          `--tmpdir=${tmp}`,
          '--auth-root-authentication-method=normal',
          '--skip-test-db',
          ...(account ? ['--user=mysql'] : []),
        ],
        undefined,
        'mariadb-install-db (Debian package "mariadb-server")',
      );
      if (account) chownSync(data, account.uid, account.gid);
    },
    command: () => ({
      cmd: '/usr/sbin/mariadbd',
      args: [
        '--no-defaults',
        `--datadir=${data}`,
        `--tmpdir=${tmp}`,
        `--port=${port}`,
        '--bind-address=127.0.0.1',
        `--socket=${sock}`,
        `--pid-file=${path.join(dir, 'mariadb.pid')}`,
        `--log-error=${path.join(dir, 'mariadb.err')}`,
        '--skip-name-resolve',
        '--skip-log-bin',
        '--max-connections=300',
        '--innodb-buffer-pool-size=32M',
        '--innodb-flush-log-at-trx-commit=2',
        '--performance-schema=OFF',
      ],
    }),
    async ready() {
      const until = Date.now() + 60_000;
      for (;;) {
        const r = spawnSync('/usr/bin/mariadb', ['--no-defaults', '-uroot', `--socket=${sock}`, '-e', 'SELECT 1'], {
          encoding: 'utf8',
        });
        if (r.status === 0) return;
        if (Date.now() > until) {
          throw new Error(`MariaDB on port ${port} did not answer within 60 s: ${(r.stderr || '').trim().slice(-500)}`);
        }
        await new Promise((r2) => setTimeout(r2, 100));
      }
    },
    setup() {
      client(
        `CREATE USER '${USER}'@'%' IDENTIFIED BY ${quoteLiteral(password)};` +
          ` CREATE DATABASE ${DATABASE}; GRANT ALL PRIVILEGES ON ${DATABASE}.* TO '${USER}'@'%'; FLUSH PRIVILEGES;`,
      );
    },
    sql: (statement) => client(`USE ${DATABASE}; ${statement}`),
    url: `mysql://${USER}:${password}@127.0.0.1:${port}/${DATABASE}`,
    stopSignal: 'SIGTERM',
  };
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
      await launch();
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
