#!/usr/bin/env node
// Installs the Debian packages an npm command needs before it runs (wired as the npm `pre*`
// scripts): `node scripts/provision.mjs test` (also `torture`, `bench`, `bench:service`, …).
// Each need is checked by path first, so a provisioned machine pays nothing. A missing one is
// installed as the engine harness does (packages/coordination/src/testing/harness.ts
// ensureDebianPackage): `apt-get install -y`, and once more after one `apt-get update` when
// that fails. Without root or without apt-get, it stops at once with ONE line naming the
// missing package(s) and the command that installs them.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';

/** A need: the Debian package and the paths that prove it is there (any one of them). */
const P = {
  curl: { pkg: 'curl', probes: ['/usr/bin/curl'] },
  faketime: { pkg: 'faketime', probes: ['/usr/bin/faketime'] },
  libfaketime: {
    pkg: 'libfaketime',
    probes: [
      '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1',
      '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1',
    ],
  },
  redis: { pkg: 'redis-server', probes: ['/usr/bin/redis-server'] },
  etcd: { pkg: 'etcd-server', probes: ['/usr/bin/etcd'] },
  zookeeper: { pkg: 'zookeeper', probes: ['/usr/share/zookeeper/bin/zkServer.sh'] },
  java: { pkg: 'default-jre-headless', probes: ['/usr/bin/java'] },
  // The server binary itself (pg_wrapper belongs to postgresql-client-common).
  postgresql: { pkg: 'postgresql', probes: [() => postgresServers().length > 0] },
  mariadb: { pkg: 'mariadb-server', probes: ['/usr/sbin/mariadbd'] },
  mariadbClient: { pkg: 'mariadb-client', probes: ['/usr/bin/mariadb'] },
  wrk: { pkg: 'wrk', probes: ['/usr/bin/wrk'] },
  hey: { pkg: 'hey', probes: ['/usr/bin/hey'] },
  // The console's browser tests and first-paint figure (driven by playwright-core).
  chromium: { pkg: 'chromium', probes: ['/usr/bin/chromium'] },
  // memcached clients others wrote, for the memcached endpoint's tests (Debian 12+ names the tool memccat).
  memcat: { pkg: 'libmemcached-tools', probes: ['/usr/bin/memccat', '/usr/bin/memcat'] },
  pymemcache: { pkg: 'python3-pymemcache', probes: ['/usr/lib/python3/dist-packages/pymemcache/__init__.py'] },
  // The gRPC port's Python client test (src/grpc/python.test.ts): grpcio and its protoc.
  pythonGrpc: { pkg: 'python3-grpcio', probes: ['/usr/lib/python3/dist-packages/grpc/__init__.py'] },
  pythonGrpcTools: { pkg: 'python3-grpc-tools', probes: ['/usr/lib/python3/dist-packages/grpc_tools/protoc.py'] },
};

const engines = [P.redis, P.etcd, P.zookeeper, P.java];
const databases = [P.postgresql, P.mariadb, P.mariadbClient];
const clocks = [P.faketime, P.libfaketime];

/** What each npm command needs. */
export const NEEDS = {
  test: [
    P.curl,
    P.chromium,
    P.memcat,
    P.pymemcache,
    P.pythonGrpc,
    P.pythonGrpcTools,
    ...engines,
    ...databases,
    ...clocks,
  ],
  torture: [...engines, ...databases, ...clocks],
  'torture:short': [...engines, ...databases, ...clocks],
  // bench runs benchmarks/segments.mjs too: PostgreSQL and Redis through the harness, wrk for its HTTP part.
  bench: [P.postgresql, P.redis, P.wrk],
  'bench:leases': [...engines, ...databases],
  'bench:service': [P.wrk, P.hey, P.chromium],
  'bench:client': [],
  'bench:segments': [P.postgresql, P.redis, P.wrk],
};

const command = process.argv[2];
if (!command || !(command in NEEDS)) {
  console.error(`provision: name one of ${Object.keys(NEEDS).join(', ')}; got ${command ?? 'nothing'}`);
  process.exit(2);
}

function postgresServers() {
  try {
    return readdirSync('/usr/lib/postgresql').filter((v) => existsSync(`/usr/lib/postgresql/${v}/bin/postgres`));
  } catch {
    return [];
  }
}

const present = (n) => n.probes.some((p) => (typeof p === 'function' ? p() : existsSync(p)));
const missing = () => [...new Set(NEEDS[command].filter((n) => !present(n)).map((n) => n.pkg))];

let pkgs = missing();
if (pkgs.length === 0) process.exit(0);

const line = `apt-get install -y ${pkgs.join(' ')}`;
const canInstall = process.getuid?.() === 0 && existsSync('/usr/bin/apt-get');
if (!canInstall) {
  const how = process.getuid?.() === 0 ? 'apt-get is not available' : 'not root';
  console.error(`npm run ${command}: missing Debian package(s) ${pkgs.join(', ')} (${how}); install: sudo ${line}`);
  process.exit(1);
}

console.error(`npm run ${command}: installing Debian package(s) ${pkgs.join(', ')}`);
const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
const install = () => spawnSync('apt-get', ['install', '-y', '-qq', ...pkgs], { env, encoding: 'utf8' });
let r = install();
if (r.status !== 0) {
  spawnSync('apt-get', ['update', '-qq'], { env, encoding: 'utf8' });
  r = install();
}
pkgs = missing();
if (r.status !== 0 || pkgs.length > 0) {
  const why = (r.stderr || r.error?.message || '').trim().split('\n').pop()?.slice(0, 300) ?? '';
  console.error(
    `npm run ${command}: could not install Debian package(s) ${pkgs.join(', ') || line} (${why}); install: ${line}`,
  );
  process.exit(1);
}
