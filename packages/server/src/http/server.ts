/**
 * The `node:http` server around the request handler: header-size and timeout limits, and
 * coded answers for requests Node cannot even parse (431 for an oversized header block
 * or request line, 400 for malformed HTTP), so no client ever sees a bare socket reset
 * or Node's default error page.
 */
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import type { HttpContext } from './context.js';
import { createRequestHandler } from './handler.js';
import { JSON_TYPE } from './respond.js';
import { UNMATCHED_ROUTE } from './routes/index.js';

/** Largest header block (request line included) Node will parse; beyond is 431. */
export const MAX_HEADER_BYTES = 32 * 1024;

/**
 * Creates the HTTP server (not yet listening); with `tls` (a certificate chain and key, PEM)
 * an HTTPS server (HTTP/1.1, offered by ALPN) whose pair `setSecureContext` can replace.
 *
 * @example
 * ```ts
 * const server = createHttpServer(ctx);
 * await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
 * ```
 */
export function createHttpServer(ctx: HttpContext, tls?: { cert: Buffer; key: Buffer }): Server {
  const options = {
    maxHeaderSize: MAX_HEADER_BYTES,
    keepAlive: true,
    keepAliveTimeout: 65_000,
    headersTimeout: 20_000,
    requestTimeout: 30_000,
    noDelay: true,
  };
  const server: Server = tls
    ? createHttpsServer({ ...options, ...tls, ALPNProtocols: ['http/1.1'] }, createRequestHandler(ctx))
    : createServer(options, createRequestHandler(ctx));
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    const code = err.code ?? '';
    if (code === 'ECONNRESET' || code === 'EPIPE' || !socket.writable) {
      socket.destroy();
      return;
    }
    const inFlight = (socket as unknown as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    let status = 400;
    let reason = 'Bad Request';
    let body: string;
    if (code === 'HPE_HEADER_OVERFLOW') {
      status = 431;
      reason = 'Request Header Fields Too Large';
      body = JSON.stringify({
        error: {
          code: 'FLURRY_E_HEADERS_TOO_LARGE',
          message: `the request line and headers exceed ${MAX_HEADER_BYTES} bytes; send a shorter URL (at most ${ctx.limits.maxUrlBytes} bytes) and fewer or smaller headers`,
        },
      });
    } else if (code === 'ERR_HTTP_REQUEST_TIMEOUT' || code === 'HPE_HEADERS_TIMEOUT') {
      status = 408;
      reason = 'Request Timeout';
      body = JSON.stringify({
        error: {
          code: 'FLURRY_E_BAD_REQUEST',
          message: 'the request did not arrive in time; send the whole request promptly',
        },
      });
    } else {
      body = JSON.stringify({
        error: {
          code: 'FLURRY_E_BAD_REQUEST',
          message: `the request is not valid HTTP/1.1 (${code || 'parse error'}); send a well-formed request`,
        },
      });
    }
    ctx.metrics.request(UNMATCHED_ROUTE, status, 0);
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\ncontent-type: ${JSON_TYPE}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
  return server;
}
