// The default `file:` registry in a container: each replica sees its own empty registry and takes
// node ID 0, so two replicas issue the same IDs; `flurry serve` warns.
import { existsSync, readFileSync } from 'node:fs';

/** Where the container evidence is read from; `readFile` gives undefined when the file cannot be read. */
export interface ContainerProbe {
  readonly env: NodeJS.ProcessEnv;
  exists(path: string): boolean;
  readFile(path: string): string | undefined;
}

/** The probe of this host: `process.env` and the real file system. */
export function hostProbe(env: NodeJS.ProcessEnv = process.env): ContainerProbe {
  return {
    env,
    exists: (p) => existsSync(p),
    readFile: (p) => {
      try {
        return readFileSync(p, 'utf8');
      } catch {
        return undefined;
      }
    },
  };
}

/** Why this process looks like it runs in a container (Kubernetes, Docker, Podman, a container cgroup), or undefined. */
export function containerEvidence(probe: ContainerProbe): string | undefined {
  if (probe.env.KUBERNETES_SERVICE_HOST) return 'KUBERNETES_SERVICE_HOST is set (a Kubernetes pod)';
  for (const f of ['/.dockerenv', '/run/.containerenv']) if (probe.exists(f)) return `${f} exists`;
  const m = /\b(docker|kubepods|containerd|libpod|lxc)\b/.exec(probe.readFile('/proc/1/cgroup') ?? '');
  return m ? `/proc/1/cgroup mentions ${m[1]}` : undefined;
}

/** The start-up warning when the registry is the default `file:` and the process runs in a container. */
export function defaultRegistryWarning(registryIsDefault: boolean, probe: ContainerProbe): string | undefined {
  const evidence = registryIsDefault ? containerEvidence(probe) : undefined;
  if (evidence === undefined) return undefined;
  return (
    `flurry serve runs in a container (${evidence}) with the default registry file:, a directory inside this container: ` +
    'every replica sees its own empty registry and takes node ID 0, so two replicas issue the same IDs. ' +
    'Set FLURRY_REGISTRY (or --registry): k8s: for a StatefulSet, or a registry all replicas share ' +
    '(etcd://h:2379/flurry, zookeeper://h:2181/flurry, redis://h:6379/0). ' +
    'Set FLURRY_REGISTRY=file: (or file:/shared/mount) explicitly to keep a file registry and silence this warning.'
  );
}
