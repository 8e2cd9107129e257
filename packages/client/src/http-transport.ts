// GETs over keep-alive connections with a deadline, a bounded body, and coded errors (docs/client.md, "Errors").
import http from 'node:http';
import https from 'node:https';
import { FlurryError } from '@flurry/core';
import { clientError, closedError } from './errors.js';

/** Largest response accepted: 10,000 IDs take about 230 KB; 16 MiB leaves room for larger server maxima. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** Sends GETs and returns the 200 body. */
export class HttpTransport {
  private readonly agents: readonly [http.Agent, https.Agent];
  private readonly inFlight = new Set<http.ClientRequest>();
  private readonly headers: Record<string, string>;
  private closed = false;

  constructor(private readonly opts: { timeoutMs: number; token?: string | undefined }) {
    const agentOpts = { keepAlive: true, maxSockets: 4, maxFreeSockets: 4, scheduling: 'lifo' as const };
    this.agents = [new http.Agent(agentOpts), new https.Agent(agentOpts)];
    this.headers = { accept: 'application/json', 'user-agent': 'flurry-client/0.1' };
    if (opts.token !== undefined) this.headers.authorization = `Bearer ${opts.token}`;
  }

  /** The body of a 200, else a coded error; one failing on a reused keep-alive socket before any answer is sent again (safe GETs). */
  get(base: URL, pathAndQuery: string, mayRetry = true): Promise<Buffer> {
    if (this.closed) return Promise.reject(closedError());
    const server = base.href.replace(/\/+$/, '');
    const isHttps = base.protocol === 'https:';
    return new Promise<Buffer>((resolve, reject) => {
      let settled = false;
      const settle = (then: () => void): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.inFlight.delete(req);
        then();
      };
      const finish = (err: FlurryError | undefined, body?: Buffer): void =>
        settle(() => (err ? reject(err) : resolve(body!)));
      const req = (isHttps ? https : http).request(server + pathAndQuery, {
        method: 'GET',
        agent: this.agents[isHttps ? 1 : 0],
        headers: this.headers,
      });
      this.inFlight.add(req);
      const timer = setTimeout(() => {
        const { timeoutMs } = this.opts;
        finish(clientError('TIMEOUT', `${server} did not answer within ${timeoutMs} ms`, { server, timeoutMs }));
        req.destroy();
      }, this.opts.timeoutMs);
      let answered = false;
      req.on('error', (e: NodeJS.ErrnoException) => {
        if (this.closed)
          finish(clientError('CLOSED', 'the client was closed while a request was in flight', { server }));
        else if (mayRetry && !answered && req.reusedSocket && (e.code === 'ECONNRESET' || e.code === 'EPIPE'))
          settle(() => void this.get(base, pathAndQuery, false).then(resolve, reject));
        else {
          const message = `${server}: ${e.code ?? ''} ${e.message}`.trim();
          finish(clientError('NETWORK', message, { server, errno: e.code ?? null }, e));
        }
      });
      req.on('response', (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_BODY_BYTES) {
            finish(clientError('BAD_RESPONSE', `${server} sent more than ${MAX_BODY_BYTES} bytes`, { server }));
            req.destroy();
            return;
          }
          chunks.push(c);
        });
        res.on('error', (e) => finish(clientError('NETWORK', `${server}: ${e.message}`, { server }, e)));
        res.on('aborted', () =>
          finish(clientError('NETWORK', `${server} closed the connection mid-answer`, { server })),
        );
        res.on('end', () => {
          const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
          const status = res.statusCode ?? 0;
          if (status === 200) return finish(undefined, body);
          finish(statusError(server, status, body, res.headers['retry-after']));
        });
      });
      req.end();
    });
  }

  /** Aborts requests in flight and closes every connection. */
  close(): void {
    this.closed = true;
    for (const req of this.inFlight) req.destroy();
    this.inFlight.clear();
    for (const agent of this.agents) agent.destroy();
  }
}

function statusError(
  server: string,
  status: number,
  body: Buffer,
  retryAfter: string | string[] | undefined,
): FlurryError {
  const retrySeconds = Number(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter);
  const retryAfterMs = Number.isFinite(retrySeconds) && retrySeconds > 0 ? Math.min(retrySeconds, 3_600) * 1000 : 0;
  let e: { code?: unknown; message?: unknown; details?: unknown } | undefined;
  try {
    e = (JSON.parse(body.toString('utf8')) as { error?: typeof e }).error;
  } catch {
    /* not the service's JSON error body */
  }
  const base = { server, status, retryAfterMs };
  if (e && typeof e.code === 'string' && e.code.startsWith('FLURRY_E_')) {
    const details = e.details && typeof e.details === 'object' ? e.details : {};
    const message = typeof e.message === 'string' ? e.message : '';
    return new FlurryError(e.code, `${server} answered ${status} ${e.code}: ${message}`, { ...details, ...base });
  }
  return clientError(
    'HTTP_STATUS',
    `${server} answered HTTP ${status}: ${JSON.stringify(body.toString('utf8', 0, 120))}`,
    base,
  );
}
