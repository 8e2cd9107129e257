/**
 * What the database launchers share: the system account a server runs as, running a
 * command-line client, and the shape of a launch plan.
 */
import { spawnSync } from 'node:child_process';

/** The system account a server runs as (when the tests run as root). */
export interface Account {
  uid: number;
  gid: number;
}

/** The uid/gid to run a server as: the system user when we are root, else ourselves. */
export function accountFor(user: string, pkg: string): Account | undefined {
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

/**
 * Runs a command (as `account` when given) and returns its stdout; throws naming `what` and
 * the tail of stderr when it fails.
 */
export function run(cmd: string, args: string[], account: Account | undefined, what: string, input?: string): string {
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

/** An SQL string literal. */
export function quoteLiteral(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

/** How to initialise, start, probe and stop one kind of database server. */
export interface Plan {
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

/** The test role's name. */
export const USER = 'flurry';
/** The test database's name (owned by the test role). */
export const DATABASE = 'flurry';
