/**
 * One etcd lease keep-alive round trip, for the etcd driver's renewals (moved out of
 * `etcd.ts` to keep that file to one concept: claims and their records).
 */
import { castGrpcError, isRecoverableError, type Etcd3 } from 'etcd3';

async function keepAliveOn(client: Etcd3, leaseId: string, deadline: number): Promise<number> {
  const budget = Math.max(1, deadline - Date.now());
  const stream = await client.leaseClient.leaseKeepAlive({ deadline });
  return new Promise<number>((resolve, reject) => {
    let done = false;
    const finish = (f: () => void): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      try {
        stream.end();
      } catch {
        /* already closed */
      }
      f();
    };
    const timer = setTimeout(
      () => finish(() => reject(new Error(`keep-alive got no answer within ${budget} ms`))),
      Math.max(1, deadline - Date.now() + 100),
    );
    stream.on('data', (res: { TTL: string }) => finish(() => resolve(Number(res.TTL))));
    stream.on('error', (err: Error) => finish(() => reject(err)));
    stream.on('end', () => finish(() => reject(new Error('keep-alive stream ended without an answer'))));
    stream.write({ ID: leaseId });
  });
}

/**
 * One keep-alive round trip; resolves with the TTL etcd reports (0 = gone). etcd3 does not
 * fail streams over to another host, so a recoverable failure is retried once per host.
 */
export async function keepAliveOnce(client: Etcd3, hosts: number, leaseId: string, deadline: number): Promise<number> {
  let last: unknown;
  for (let i = 0; i < hosts && Date.now() < deadline; i++) {
    try {
      return await keepAliveOn(client, leaseId, deadline);
    } catch (e) {
      last = e instanceof Error ? castGrpcError(e) : e;
      if (!(last instanceof Error) || !isRecoverableError(last)) throw last;
    }
  }
  const failure: unknown = last ?? new Error('keep-alive deadline passed before it could be sent');
  throw failure;
}
