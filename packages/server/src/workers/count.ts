// How many workers `--workers N|auto` runs, and the check that each has a free node ID (docs/operations.md#worker-processes).
import { availableParallelism } from 'node:os';
import { openRegistry, parseRegistryUrl } from '@flurry/coordination';
import type { Layout } from '@flurry/core';
import { registryOptionsOf, type ServeConfig } from '../config/index.js';
import { serverError } from '../errors.js';
import type { ServiceLogger } from '../service.js';

/** The number of workers a `workers` setting asks for: `auto` is one per core. */
export function resolveWorkers(value: string | undefined, cores: () => number = availableParallelism): number {
  if (value === undefined) return 1;
  if (value === 'auto') return Math.max(1, cores());
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw serverError('CONFIG', `invalid setting workers: "${value}"; allowed: a number from 1 to 999, or auto`);
  return n;
}

/** How many node IDs the layout leaves to lease once the `--node` pins are fixed. */
export function nodeIdCapacity(layout: Layout, pin: Readonly<Record<string, number>>): number {
  return layout.nodeFields.reduce((n, f) => (pin[f.name] === undefined ? n * 2 ** f.bits : n), 1);
}

/** `FLURRY_E_WORKERS_NODE_IDS` when the layout, registry kind or holders leave fewer free node IDs than `workers` (no answer: a warning). */
export async function checkNodeIds(
  config: ServeConfig,
  workers: number,
  log: Pick<ServiceLogger, 'warn'>,
): Promise<void> {
  const fix = 'lower --workers (FLURRY_WORKERS), or use a registry and layout with more free node IDs';
  const refuse = (message: string, details: Record<string, number> = { free: 1 }) =>
    serverError('WORKERS_NODE_IDS', `--workers ${workers} ${message}`, { workers, ...details });
  const { kind, redacted } = parseRegistryUrl(config.registry);
  if (kind === 'static' || kind === 'k8s')
    throw refuse(
      `needs ${workers} node IDs, but a ${kind}: registry assigns one fixed node ID to the service; run one worker per ${kind}: node ID, or ${fix}`,
    );
  if (kind === 'zookeeper+leaf')
    throw refuse(
      `cannot run on a zookeeper+leaf: registry: Leaf's scheme keys each worker ID by the service's ip:port, which all workers share, so they would claim one worker ID; run one flurry serve per port there, or use the zookeeper: registry (Flurry's own scheme) with --workers`,
    );
  const capacity = nodeIdCapacity(config.layout, config.node);
  if (capacity < workers)
    throw refuse(
      `needs ${workers} node IDs, but the layout ${config.layout.name} leaves ${capacity} once the --node pins are fixed; ${fix}`,
      { free: capacity },
    );
  let held: number;
  try {
    const registry = await openRegistry(config.registry, registryOptionsOf(config));
    const holders = registry.holders({ layout: config.layout, pin: { ...config.node } });
    held = (await holders.finally(() => registry.close())).length;
  } catch (err) {
    log.warn(
      { error: String(err) },
      'the registry does not answer; not checking free node IDs, the workers wait for it',
    );
    return;
  }
  const free = Math.max(0, capacity - held);
  if (free < workers)
    throw refuse(
      `needs ${workers} free node IDs, but the registry ${redacted} (cluster ${config.cluster}) has ${free} free (${held} of ${capacity} held); ${fix}, or stop services that hold node IDs`,
      { free, held, capacity },
    );
}
