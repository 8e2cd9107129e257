/**
 * Serving one request in-process, without a socket: {@link inject} hands a request to a
 * `(req, res)` handler and returns what it wrote. The response goes through Node's own
 * `ServerResponse` onto an in-memory duplex, and is parsed back from the bytes that
 * would have crossed the wire (status line, headers, `Content-Length` body), so headers
 * such as `Allow`, `Retry-After` or `Connection: close` are tested as a client sees them.
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { serverError } from '../errors.js';

/** A request to inject. */
export interface InjectRequest {
  /** Default `GET`. */
  method?: string;
  /** The request target: path and query. */
  url: string;
  /** Header names as sent (their case is kept in `rawHeaders`). */
  headers?: Record<string, string>;
  /** A request body (the service reads none; it is offered to the request stream). */
  body?: string;
  /** How long to wait for the response; default 5000 ms. */
  timeoutMs?: number;
}

/** What the handler answered. */
export interface InjectResponse {
  status: number;
  /** Lower-cased names. */
  headers: Record<string, string>;
  body: string;
}

/**
 * Serves `request` with `handler` in-process.
 *
 * @throws FlurryError `FLURRY_E_INTERNAL` when the handler does not finish the response within `timeoutMs`.
 */
export function inject(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  request: InjectRequest,
): Promise<InjectResponse> {
  const chunks: Buffer[] = [];
  const wire = new Duplex({
    read() {},
    write(chunk: Buffer | string, _enc, cb) {
      chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk);
      cb();
    },
  });
  const req = new IncomingMessage(wire as unknown as Socket);
  req.method = request.method ?? 'GET';
  req.url = request.url;
  req.httpVersion = '1.1';
  req.httpVersionMajor = 1;
  req.httpVersionMinor = 1;
  const raw: string[] = ['Host', 'localhost'];
  for (const [k, v] of Object.entries(request.headers ?? {})) raw.push(k, v);
  req.rawHeaders = raw;
  for (let i = 0; i < raw.length; i += 2) req.headers[raw[i].toLowerCase()] = raw[i + 1];
  if (request.body !== undefined) req.push(request.body);
  req.push(null);
  const res = new ServerResponse(req);
  res.assignSocket(wire as unknown as Socket);
  const timeoutMs = request.timeoutMs ?? 5000;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(serverError('INTERNAL', `inject: no response to ${request.url} within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const settle = () => {
      clearTimeout(timer);
      try {
        resolve(parse(Buffer.concat(chunks), req.method === 'HEAD'));
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    };
    res.once('finish', settle);
    res.once('close', () => {
      if (!res.writableFinished) settle();
    });
    handler(req, res);
  });
}

function parse(bytes: Buffer, head: boolean): InjectResponse {
  const text = bytes.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) return { status: 0, headers: {}, body: '' }; // destroyed before the head was written
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const status = Number(statusLine.split(' ')[1]);
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const c = l.indexOf(':');
    headers[l.slice(0, c).toLowerCase()] = l.slice(c + 1).trim();
  }
  let body = bytes.subarray(Buffer.byteLength(text.slice(0, end + 4), 'latin1'));
  if (head) body = Buffer.alloc(0);
  else if (headers['content-length'] !== undefined) body = body.subarray(0, Number(headers['content-length']));
  return { status, headers, body: body.toString('utf8') };
}
