/**
 * How many workers `flurry serve --workers N|auto` runs, and the start-up check that the layout
 * and the registry have a free node ID for each (docs/operations.md#worker-processes).
 */
import { availableParallelism } from 'node:os';
import { openRegistry, parseRegistryUrl } from '@flurry/coordination';
import type { Layout } from '@flurry/core';
import { registryOptionsOf, type ServeConfig } from '../config/index.js';
import { serverError } from '../errors.js';
import type { ServiceLogger } from '../service-steps.js';

/**
 * The number of workers a `workers` setting asks for: `auto` is one per core
 * (`os.availableParallelism()`), else the number itself (the setting's pattern allows 1–999).
 */
export function resolveWorkers(value: string | undefined, cores: () => number = availableParallelism): number {
  if (value === undefined) return 1;
  if (value === 'auto') return Math.max(1, cores());
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) {
    throw serverError('CONFIG', `invalid setting workers: "${value}"; allowed: a number from 1 to 999, or auto`);
  }
  return n;
}

/** How many node IDs the layout leaves to lease once the `--node` pins are fixed. */
export function nodeIdCapacity(layout: Layout, pin: Readonly<Record<string, number>>): number {
  return layout.nodeFields.reduce((n, f) => (pin[f.name] === undefined ? n * 2 ** f.bits : n), 1);
}

/**
 * Refuses to start `workers` processes when the layout, the registry kind or the registry's
 * current holders leave fewer free node IDs than that. A registry that does not answer is
 * not a refusal (the workers wait it out like a single service); `log` warns of it.
 *
 * @throws FlurryError `FLURRY_E_WORKERS_NODE_IDS` naming the free count and what to do.
 */
export async function checkNodeIds(
  config: ServeConfig,
  workers: number,
  log: Pick<ServiceLogger, 'warn'>,
): Promise<void> {
  const fix = 'lower --workers (FLURRY_WORKERS), or use a registry and layout with more free node IDs';
  const kind = parseRegistryUrl(config.registry).kind;
  if (kind === 'static' || kind === 'k8s') {
    throw serverError(
      'WORKERS_NODE_IDS',
      `--workers ${workers} needs ${workers} node IDs, but a ${kind}: registry assigns one fixed node ID to the service; run one worker per ${kind}: node ID, or ${fix}`,
      { workers, free: 1 },
    );
  }
  if (kind === 'zookeeper+leaf') {
    // Leaf's scheme keys a worker ID by the holder's ip:port, which every worker shares.
    throw serverError(
      'WORKERS_NODE_IDS',
      `--workers ${workers} cannot run on a zookeeper+leaf: registry: Leaf's scheme keys each worker ID by the service's ip:port, which all workers share, so they would claim one worker ID; run one flurry serve per port there, or use the zookeeper: registry (Flurry's own scheme) with --workers`,
      { workers, free: 1 },
    );
  }
  const capacity = nodeIdCapacity(config.layout, config.node);
  if (capacity < workers) {
    throw serverError(
      'WORKERS_NODE_IDS',
      `--workers ${workers} needs ${workers} node IDs, but the layout ${config.layout.name} leaves ${capacity} once the --node pins are fixed; ${fix}`,
      { workers, free: capacity },
    );
  }
  let held: number;
  try {
    const registry = await openRegistry(config.registry, registryOptionsOf(config));
    try {
      held = (await registry.holders({ layout: config.layout, pin: { ...config.node } })).length;
    } finally {
      await registry.close();
    }
  } catch (err) {
    log.warn(
      { error: String(err) },
      'the registry does not answer; not checking free node IDs, the workers wait for it',
    );
    return;
  }
  if (capacity - held < workers) {
    throw serverError(
      'WORKERS_NODE_IDS',
      `--workers ${workers} needs ${workers} free node IDs, but the registry ${parseRegistryUrl(config.registry).redacted} (cluster ${config.cluster}) has ${Math.max(0, capacity - held)} free (${held} of ${capacity} held); ${fix}, or stop services that hold node IDs`,
      { workers, free: Math.max(0, capacity - held), held, capacity },
    );
  }
}
