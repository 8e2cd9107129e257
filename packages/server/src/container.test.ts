import { test } from 'node:test';
import assert from 'node:assert/strict';
import { containerEvidence, defaultRegistryWarning, hostProbe, type ContainerProbe } from './container.js';

function probe(opts: { env?: NodeJS.ProcessEnv; files?: string[]; cgroup?: string } = {}): ContainerProbe {
  const files = new Set(opts.files ?? []);
  return {
    env: opts.env ?? {},
    exists: (p) => files.has(p),
    readFile: (p) => (p === '/proc/1/cgroup' ? opts.cgroup : undefined),
  };
}

test('GIVEN each sign of a container THEN containerEvidence names it; a plain host gives undefined', () => {
  assert.equal(containerEvidence(probe()), undefined);
  assert.equal(containerEvidence(probe({ cgroup: '0::/init.scope\n' })), undefined, 'a systemd host');
  assert.equal(containerEvidence(probe({ cgroup: '0::/user.slice/user-1000.slice/session-2.scope\n' })), undefined);
  assert.equal(
    containerEvidence(probe({ env: { KUBERNETES_SERVICE_HOST: '10.96.0.1' } })),
    'KUBERNETES_SERVICE_HOST is set (a Kubernetes pod)',
  );
  assert.equal(
    containerEvidence(probe({ env: { KUBERNETES_SERVICE_HOST: '' } })),
    undefined,
    'an empty variable is unset',
  );
  assert.equal(containerEvidence(probe({ files: ['/.dockerenv'] })), '/.dockerenv exists');
  assert.equal(containerEvidence(probe({ files: ['/run/.containerenv'] })), '/run/.containerenv exists');
  assert.equal(containerEvidence(probe({ cgroup: '12:pids:/docker/3f2a9c\n' })), '/proc/1/cgroup mentions docker');
  assert.equal(
    containerEvidence(probe({ cgroup: '0::/kubepods/besteffort/pod1234/abcd\n' })),
    '/proc/1/cgroup mentions kubepods',
  );
  assert.equal(
    containerEvidence(probe({ cgroup: '0::/system.slice/containerd.service/x\n' })),
    '/proc/1/cgroup mentions containerd',
  );
});

test('GIVEN the default file: registry in a container THEN the warning says why and what to set; an explicit registry or a plain host gives none', () => {
  const inPod = probe({ env: { KUBERNETES_SERVICE_HOST: '10.96.0.1' } });
  const w = defaultRegistryWarning(true, inPod);
  assert.ok(w !== undefined);
  assert.match(w, /runs in a container \(KUBERNETES_SERVICE_HOST is set/);
  assert.match(w, /takes node ID 0, so two replicas issue the same IDs/);
  assert.match(w, /FLURRY_REGISTRY/);
  assert.match(w, /k8s: for a StatefulSet/);
  assert.match(w, /etcd:\/\/.*zookeeper:\/\/.*redis:\/\//);
  assert.equal(defaultRegistryWarning(false, inPod), undefined, 'a registry set explicitly (even file:) is a choice');
  assert.equal(defaultRegistryWarning(true, probe()), undefined, 'not in a container');
  assert.match(defaultRegistryWarning(true, probe({ files: ['/.dockerenv'] })) ?? '', /\/\.dockerenv exists/);
});

test('GIVEN the host probe THEN it reads the given environment and missing files as absent', () => {
  const p = hostProbe({ KUBERNETES_SERVICE_HOST: 'x' });
  assert.equal(p.env.KUBERNETES_SERVICE_HOST, 'x');
  assert.equal(p.exists('/nonexistent/flurry/.dockerenv'), false);
  assert.equal(p.readFile('/nonexistent/flurry/cgroup'), undefined);
});
