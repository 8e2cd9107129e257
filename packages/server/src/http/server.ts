// The HTTP port's server: limits, and coded answers (431, 408, 400) for requests Node cannot parse,
// never a bare reset. With TLS, `node:http2`'s secure server (h2 and HTTP/1.1 by ALPN, one handler).
import { createServer, Server } from 'node:http';
import { createSecureServer, type Http2SecureServer, type ServerHttp2Session } from 'node:http2';
import type { Duplex } from 'node:stream';
import type { TlsFiles } from '../tls.js';
import type { HttpContext } from './context.js';
import { createRequestHandler } from './handler.js';
import { JSON_TYPE } from './respond.js';
import { UNMATCHED_ROUTE } from './routes/index.js';

/** Largest header block (request line included) Node will parse; beyond is 431. */
export const MAX_HEADER_BYTES = 32 * 1024;

export type HttpServer = Server | (Http2SecureServer & Pick<Server, 'closeIdleConnections' | 'closeAllConnections'>);

type HttpTls = Pick<TlsFiles, 'pair' | 'onReload'>;

/** Creates the HTTP server (not yet listening); with `tls` HTTPS (h2 and HTTP/1.1) taking each reloaded certificate. */
export function createHttpServer(ctx: HttpContext, tls?: HttpTls): HttpServer {
  const limits = {
    maxHeaderSize: MAX_HEADER_BYTES,
    keepAliveTimeout: 65_000,
    headersTimeout: 20_000,
    requestTimeout: 30_000,
  };
  const server = tls
    ? secureServer(ctx, tls, limits)
    : createServer({ ...limits, keepAlive: true, noDelay: true }, createRequestHandler(ctx));
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    const code = err.code ?? '';
    const inFlight = (socket as unknown as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (code === 'ECONNRESET' || code === 'EPIPE' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    let [status, reason, errorCode] = [400, 'Bad Request', 'FLURRY_E_BAD_REQUEST'];
    let message = `the request is not valid HTTP/1.1 (${code || 'parse error'}); send a well-formed request`;
    if (code === 'HPE_HEADER_OVERFLOW') {
      [status, reason, errorCode] = [431, 'Request Header Fields Too Large', 'FLURRY_E_HEADERS_TOO_LARGE'];
      message = `the request line and headers exceed ${MAX_HEADER_BYTES} bytes; send a shorter URL (at most ${ctx.limits.maxUrlBytes} bytes) and fewer or smaller headers`;
    } else if (code === 'ERR_HTTP_REQUEST_TIMEOUT' || code === 'HPE_HEADERS_TIMEOUT') {
      [status, reason] = [408, 'Request Timeout'];
      message = 'the request did not arrive in time; send the whole request promptly';
    }
    const body = JSON.stringify({ error: { code: errorCode, message } });
    ctx.metrics.request(UNMATCHED_ROUTE, status, 0);
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\ncontent-type: ${JSON_TYPE}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
  return server;
}

/**
 * h2 and HTTP/1.1 over TLS: HTTP/1.1 connections get the plain server's limits, h2 sessions its keep-alive
 * timeout; `closeIdleConnections` sends each h2 session a GOAWAY, `closeAllConnections` cuts them.
 */
function secureServer(ctx: HttpContext, tls: HttpTls, limits: { keepAliveTimeout: number }): HttpServer {
  // The handler uses only what node:http's and node:http2's compatibility objects share.
  const handler = createRequestHandler(ctx) as unknown as Parameters<typeof createSecureServer>[1];
  const server = createSecureServer(
    {
      ...tls.pair(),
      allowHTTP1: true, // ALPN offers h2 and http/1.1
      noDelay: true,
      settings: { maxHeaderListSize: MAX_HEADER_BYTES },
    },
    handler,
  );
  Object.assign(server, limits);
  tls.onReload((pair) => server.setSecureContext(pair));
  const sessions = new Set<ServerHttp2Session>();
  server.on('session', (s) => {
    sessions.add(s);
    s.once('close', () => sessions.delete(s));
    s.setTimeout(limits.keepAliveTimeout, () => s.close()); // idle as long as an HTTP/1.1 keep-alive: GOAWAY
  });
  return Object.assign(server, {
    closeIdleConnections(): void {
      Server.prototype.closeIdleConnections.call(server); // HTTP/1.1 connections, as node:http2 itself does
      for (const s of sessions) s.close(); // GOAWAY; the session ends when its open streams do
    },
    closeAllConnections(): void {
      Server.prototype.closeAllConnections.call(server);
      for (const s of sessions) s.destroy();
    },
  });
}
