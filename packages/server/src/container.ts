/**
 * Does `flurry serve` run in a container with the default `file:` registry? That
 * registry lives in the container's own file system, so every replica sees an empty
 * registry and takes node ID 0: two replicas issue the same IDs. {@link defaultRegistryWarning}
 * gives the start-up warning for that case; the detection reads its evidence through an
 * injectable {@link ContainerProbe} so it can be tested.
 */
import { existsSync, readFileSync } from 'node:fs';

/** Where the container evidence is read from. */
export interface ContainerProbe {
  /** The process environment (`KUBERNETES_SERVICE_HOST`). */
  readonly env: NodeJS.ProcessEnv;
  /** Whether a file exists (`/.dockerenv`, `/run/.containerenv`). */
  exists(path: string): boolean;
  /** A file's text, or undefined when it cannot be read (`/proc/1/cgroup`). */
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

/**
 * Why this process looks like it runs in a container, or undefined: `$KUBERNETES_SERVICE_HOST`
 * set (a Kubernetes pod), `/.dockerenv` (Docker) or `/run/.containerenv` (Podman) present,
 * or `/proc/1/cgroup` naming docker, kubepods, containerd, libpod or lxc.
 */
export function containerEvidence(probe: ContainerProbe): string | undefined {
  if (probe.env.KUBERNETES_SERVICE_HOST) return 'KUBERNETES_SERVICE_HOST is set (a Kubernetes pod)';
  for (const f of ['/.dockerenv', '/run/.containerenv']) if (probe.exists(f)) return `${f} exists`;
  const m = /\b(docker|kubepods|containerd|libpod|lxc)\b/.exec(probe.readFile('/proc/1/cgroup') ?? '');
  if (m) return `/proc/1/cgroup mentions ${m[1]}`;
  return undefined;
}

/**
 * The start-up warning when the registry is the default `file:` (not set by flag, variable
 * or config file) and the process looks like it runs in a container; otherwise undefined.
 * It says why (each replica takes node 0 of its own private directory: duplicate IDs) and
 * what to set.
 */
export function defaultRegistryWarning(registryIsDefault: boolean, probe: ContainerProbe): string | undefined {
  if (!registryIsDefault) return undefined;
  const evidence = containerEvidence(probe);
  if (evidence === undefined) return undefined;
  return (
    `flurry serve runs in a container (${evidence}) with the default registry file:, a directory inside this container: ` +
    'every replica sees its own empty registry and takes node ID 0, so two replicas issue the same IDs. ' +
    'Set FLURRY_REGISTRY (or --registry): k8s: for a StatefulSet, or a registry all replicas share ' +
    '(etcd://h:2379/flurry, zookeeper://h:2181/flurry, redis://h:6379/0). ' +
    'Set FLURRY_REGISTRY=file: (or file:/shared/mount) explicitly to keep a file registry and silence this warning.'
  );
}
