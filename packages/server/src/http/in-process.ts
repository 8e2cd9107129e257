/**
 * A service core serving in-process for tests: a real `file:` registry in a temporary
 * directory, a real leased generator, and the request handler fed by {@link inject}
 * (no socket, no process).
 */
import { rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import type { ManualClock } from '@flurry/core';
import { loadServeConfig } from '../config/index.js';
import { createServiceCore, httpContext, type ServiceCore } from '../service-core.js';
import { leaseGenerator, type ServiceLogger } from '../service.js';
import { tempDir } from '../test-support.js';
import type { HttpContext } from './context.js';
import { createRequestHandler } from './handler.js';
import { inject, type InjectResponse } from './inject.js';

/** A `node:http` request handler. */
export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A service serving in-process. */
export interface InProcess {
  handler: Handler;
  core: ServiceCore;
  /** The routes' view of the service. */
  ctx: HttpContext;
  /** What the service logged at error level. */
  errors: Array<Record<string, unknown>>;
  /** Every log line (`level`, `msg` and the fields). */
  logs: Array<Record<string, unknown>>;
  get(url: string, headers?: Record<string, string>, method?: string): Promise<InjectResponse>;
  stop(): Promise<void>;
}

/**
 * Starts a service core on a temporary `file:` registry, serving in-process. `args` and
 * `env` are `flurry serve`'s flags and `FLURRY_*` variables; with a manual `clock` the
 * lease is renewed only by hand (never, here), so its deadline passes when the clock is
 * advanced; `registry` adds registry options (e.g. `ttlMs`); with `lease: false` no
 * lease is acquired (the service as it is while starting).
 */
export async function inProcess(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  clock?: ManualClock,
  registry: Record<string, unknown> = {},
  lease = true,
): Promise<InProcess> {
  const dir = tempDir('inject');
  const logs: Array<Record<string, unknown>> = [];
  const errors: Array<Record<string, unknown>> = [];
  const line = (level: string) => (o: object, msg?: string) => {
    logs.push({ level, ...o, msg });
    if (level === 'error') errors.push({ ...o, msg });
  };
  const logger: ServiceLogger = {
    info: line('info'),
    warn: line('warn'),
    debug: line('debug'),
    error: line('error'),
    child: () => logger,
  };
  const config = loadServeConfig(['--registry', `file:${path.join(dir, 'reg')}`, ...args], env);
  const core = createServiceCore(config, logger, clock ? { clock } : {});
  const ctx = httpContext(config, core, logger);
  if (lease) {
    await leaseGenerator(config, core, 0, logger, {
      stateDir: path.join(dir, 'state'),
      ...(clock ? { clock, autoRenew: false } : {}),
      ...registry,
    });
  }
  const handler = createRequestHandler(ctx);
  return {
    handler,
    core,
    ctx,
    errors,
    logs,
    get: (url, headers = {}, method = 'GET') => inject(handler, { url, headers, method }),
    stop: async () => {
      core.console.streams.close();
      core.console.data.close();
      await core.uuids.close();
      await core.issuer.leased?.close();
      await core.registry?.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
