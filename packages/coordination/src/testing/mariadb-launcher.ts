/**
 * How to launch a throw-away MariaDB server: `mariadb-install-db`, `mariadbd` on a loopback
 * port and a socket of its own, and the `mariadb` client as root.
 */
import { spawnSync } from 'node:child_process';
import { chownSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { DATABASE, USER, quoteLiteral, run, type Account, type Plan } from './database-common.js';
import { ensureDebianPackage } from './harness.js';

/** The launch plan of a MariaDB server in `dir` on `port`, with the test role's `password`. */
export function mariadbPlan(dir: string, port: number, password: string, account: Account | undefined): Plan {
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
