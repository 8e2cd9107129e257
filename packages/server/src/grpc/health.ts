// `grpc.health.v1.Health`: SERVING while ready (as `GET /readyz`); `Watch` sends the state, then each change it polls.
import { setTimeout as sleep } from 'node:timers/promises';
import { Code, ConnectError, type ServiceImpl } from '@connectrpc/connect';
import { Health, HealthCheckResponse_ServingStatus as Status } from './gen-proto/grpc/health/v1/health_pb.js';

export function healthHandlers(
  ready: () => boolean,
  services: readonly string[],
  watchMs = 500,
): ServiceImpl<typeof Health> {
  const known = new Set(['', ...services]);
  const status = (service: string): Status => {
    if (known.has(service)) return ready() ? Status.SERVING : Status.NOT_SERVING;
    throw new ConnectError(
      `FLURRY_E_NOT_FOUND: this server has no service ${JSON.stringify(service.slice(0, 128))}; it serves ${services.join(', ')} ("" for the whole server)`,
      Code.NotFound,
      { 'flurry-error-code': 'FLURRY_E_NOT_FOUND' },
    );
  };
  return {
    check: (req) => ({ status: status(req.service) }),
    async *watch(req, hc) {
      let last: Status | undefined;
      while (!hc.signal.aborted) {
        const now = status(req.service);
        if (now !== last) yield { status: (last = now) };
        await sleep(watchMs, undefined, { signal: hc.signal }).catch(() => undefined);
      }
    },
  };
}
