// The gRPC port of `flurry serve --grpc-port P` (docs/grpc.md): IdService, Health and reflection in gRPC, gRPC-Web
// and Connect on one port through Connect's Node adapter. Node 20's cleartext HTTP/2 server does not take HTTP/1.1,
// so each connection's first bytes pick the server (routeByPreface); both run the same handler.
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import type { ConnectRouter } from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import type { FlurryLogger } from '@flurry/core';
import { IdService, file_flurry_v1_id_service } from './gen-proto/flurry/v1/id_service_pb.js';
import { Health, file_grpc_health_v1_health } from './gen-proto/grpc/health/v1/health_pb.js';
import { ServerReflection, file_grpc_reflection_v1_reflection } from './gen-proto/grpc/reflection/v1/reflection_pb.js';
import { healthHandlers } from './health.js';
import { idServiceHandlers, type IdServiceContext } from './id-service.js';
import { reflectionHandlers } from './reflection.js';
import { hotCalls } from './hot-calls.js';
import { bearerToken, callMetrics, type CallRecorder } from './status.js';
import { checkIntOption, serveTcp, tcpLimits } from '../tcp-listener.js';

/** Options of {@link startGrpcServer}. */
export interface GrpcServerOptions {
  host?: string; // default 127.0.0.1
  port: number; // 0: a free one
  ids: IdServiceContext;
  /** True while the service may issue (the rule of `/readyz`): Health answers SERVING. */
  ready: () => boolean;
  /** The bearer token every IdService call (and Health's with `authHealth`) must carry. */
  token?: string | undefined;
  authHealth?: boolean;
  record?: CallRecorder;
  logger?: Pick<FlurryLogger, 'warn'> & Partial<FlurryLogger>;
  /** Largest request message in bytes, 64 to 16 MiB; default 65,536 (a real request is under 300 bytes). */
  maxMessageBytes?: number;
  maxConnections?: number; // default 10,000
  /** Closes a connection with no open call (or no first bytes) for this long in ms (0 = never); default 120,000. */
  idleTimeoutMs?: number;
  healthWatchMs?: number; // how often Health's Watch re-reads readiness; default 500
  /** The certificate and key in use, and a hook for a reloaded pair (new connections get it). Default: cleartext. */
  tls?: { pair(): { cert: Buffer; key: Buffer }; onReload(fn: (pair: { cert: Buffer; key: Buffer }) => void): void };
}

/** A running gRPC port; `close()` stops accepting, lets calls in flight end (cut after a second), closes all. */
export interface GrpcServer {
  readonly port: number;
  close(): Promise<void>;
}

const PREFACE = Buffer.from('PRI * HTTP/2.0');
const CORS_ENTRIES = Object.entries({
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'POST, GET, OPTIONS',
  'access-control-allow-headers':
    'authorization, content-type, connect-protocol-version, connect-timeout-ms, grpc-timeout, x-grpc-web, x-user-agent',
  'access-control-expose-headers': 'grpc-status, grpc-message, grpc-status-details-bin, flurry-error-code',
  'access-control-max-age': '7200',
});

/** Starts the port; rejects with `FLURRY_E_INVALID_OPTION` for bad options, or the listen error (`EADDRINUSE`…). */
export async function startGrpcServer(opts: GrpcServerOptions): Promise<GrpcServer> {
  const limits = tcpLimits('gRPC server', opts, 120_000);
  const idleTimeoutMs = limits.idleTimeoutMs;
  const maxMessageBytes = opts.maxMessageBytes ?? 65_536;
  checkIntOption('gRPC server', 'maxMessageBytes', maxMessageBytes, 64, 16_777_216);
  const logger = opts.logger;
  const handler = grpcHandler(opts, maxMessageBytes);

  // With TLS, ALPN picks h2 (gRPC) or http/1.1 (allowHTTP1: the same handler) for Connect JSON and gRPC-Web.
  const settings = { maxConcurrentStreams: 1000 };
  const secure = opts.tls
    ? http2.createSecureServer(
        { settings, allowHTTP1: true, ALPNProtocols: ['h2', 'http/1.1'], ...opts.tls.pair() },
        handler,
      )
    : undefined;
  if (secure) opts.tls?.onReload((pair) => secure.setSecureContext(pair));
  const h2 = (secure as http2.Http2Server | undefined) ?? http2.createServer({ settings }, handler);
  answerHotCallsFirst(h2, opts, maxMessageBytes);
  h2.on('sessionError', (err) => logger?.warn({ err: err.message }, 'gRPC connection closed: HTTP/2 error'));
  // Idle means no open call: a quiet stream or Watch is not cut.
  const openCalls = new WeakMap<http2.Http2Session, number>();
  h2.on('stream', (stream) => {
    const session = stream.session;
    if (!session) return;
    openCalls.set(session, (openCalls.get(session) ?? 0) + 1);
    stream.once('close', () => openCalls.set(session, (openCalls.get(session) ?? 1) - 1));
  });
  h2.on('session', (s) => {
    s.on('error', () => undefined);
    if (idleTimeoutMs > 0) s.setTimeout(idleTimeoutMs, () => openCalls.get(s) || s.close());
  });
  const h1 = http.createServer({ maxHeaderSize: 16_384 }, handler);
  if (idleTimeoutMs > 0) h1.keepAliveTimeout = Math.min(idleTimeoutMs, 5_000);
  h1.on('clientError', (err: NodeJS.ErrnoException, socket: net.Socket) => {
    if (socket.writable && err.code !== 'ECONNRESET')
      socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  });

  // Idleness is timed per call (above), not by the sweep.
  const tcp = await serveTcp('gRPC server', { ...limits, idleTimeoutMs: 0 }, logger, (socket) => {
    if (secure) secure.emit('connection', socket);
    else {
      if (idleTimeoutMs > 0) socket.setTimeout(idleTimeoutMs, () => socket.destroy());
      routeByPreface(socket, h2, h1);
    }
  });
  logger?.info?.({ host: limits.host, port: tcp.port }, 'gRPC, gRPC-Web and Connect listening');

  let closing: Promise<void> | undefined;
  const close = async (): Promise<void> => {
    const closed = Promise.all([tcp.server, h2, h1].map((s) => new Promise((resolve) => s.close(resolve))));
    h1.closeIdleConnections();
    for (const s of tcp.sockets) if (s.listenerCount('readable') > 0 && !s.readableFlowing) s.destroy();
    // Calls still running a second later (open streams, Watch) are cut.
    setTimeout(() => {
      for (const s of tcp.sockets) s.destroy();
      h1.closeAllConnections();
    }, 1_000).unref();
    await closed;
  };
  return { port: tcp.port, close: () => (closing ??= close()) };
}

/** Connect's handler for IdService, Health and reflection, behind the token check and CORS. */
function grpcHandler(
  opts: GrpcServerOptions,
  maxMessageBytes: number,
): (
  req: http.IncomingMessage | http2.Http2ServerRequest,
  res: http.ServerResponse | http2.Http2ServerResponse,
) => void {
  const token = opts.token;
  const guarded = new Set([IdService.typeName, ...(opts.authHealth ? [Health.typeName] : [])]);
  const routes = (router: ConnectRouter): void => {
    router.service(IdService, idServiceHandlers(opts.ids));
    router.service(Health, healthHandlers(opts.ready, [IdService.typeName], opts.healthWatchMs));
    router.service(
      ServerReflection,
      reflectionHandlers([file_flurry_v1_id_service, file_grpc_health_v1_health, file_grpc_reflection_v1_reflection]),
    );
  };
  const connect = connectNodeAdapter({
    routes,
    readMaxBytes: maxMessageBytes,
    interceptors: [
      callMetrics(opts.record),
      ...(token !== undefined ? [bearerToken(token, (s) => guarded.has(s))] : []),
    ],
  });
  return (req, res) => {
    // Only browsers send Origin; gRPC clients pay nothing for CORS.
    if (req.headers.origin !== undefined) for (const [k, v] of CORS_ENTRIES) res.setHeader(k, v);
    if (req.method === 'OPTIONS') res.writeHead(204).end();
    else connect(req, res);
  };
}

/** NextId and StreamIds over gRPC skip Connect (./hot-calls.ts); node's own listener passes on every other stream. */
function answerHotCallsFirst(h2: http2.Http2Server, opts: GrpcServerOptions, maxMessageBytes: number): void {
  const { ids, token, record } = opts;
  const hot = hotCalls({ ids: ids.ids, maxBatch: ids.maxBatch, maxMessageBytes, token, record });
  const [compat] = h2.listeners('stream') as ((...a: unknown[]) => void)[];
  if (!compat) return;
  h2.off('stream', compat);
  h2.on('stream', (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, ...rest: unknown[]) => {
    if (!hot(stream, headers)) compat.call(h2, stream, headers, ...rest);
  });
}

/** Hands a cleartext connection to the HTTP/2 server when its first bytes are the HTTP/2 preface, else to the HTTP/1.1 one. */
function routeByPreface(socket: net.Socket, h2: net.Server, h1: net.Server): void {
  let seen = Buffer.alloc(0);
  const sniff = (): void => {
    let chunk: Buffer | null;
    while ((chunk = socket.read() as Buffer | null) !== null) seen = Buffer.concat([seen, chunk]);
    const n = Math.min(seen.length, PREFACE.length);
    if (n === 0) return;
    const looksH2 = seen.subarray(0, n).equals(PREFACE.subarray(0, n));
    if (looksH2 && n < PREFACE.length) return; // wait for the rest of the preface
    socket.off('readable', sniff);
    socket.setTimeout(0); // from here on, the HTTP/2 session's or the HTTP/1.1 server's timeouts
    socket.unshift(seen);
    (looksH2 ? h2 : h1).emit('connection', socket);
  };
  socket.on('readable', sniff);
}
