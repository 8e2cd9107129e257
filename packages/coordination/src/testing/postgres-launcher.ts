/**
 * How to launch a throw-away PostgreSQL server: `initdb`, `postgres` on a loopback port
 * and a socket directory of its own, and `psql` as the superuser.
 */
import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { DATABASE, USER, quoteLiteral, run, type Account, type Plan } from './database-common.js';
import { ensureDebianPackage } from './harness.js';

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

/** The launch plan of a PostgreSQL server in `dir` on `port`, with the test role's `password`. */
export function postgresPlan(dir: string, port: number, password: string, account: Account | undefined): Plan {
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
