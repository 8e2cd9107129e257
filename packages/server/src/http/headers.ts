// One pass over the raw headers for the few the service reads, without building Node's `req.headers` on the hot path.

/** The headers the service reads. Reused across requests (filled by {@link scanHeaders}). */
export class RequestHeaders {
  authorization: string | undefined = undefined;
  accept: string | undefined = undefined;
  acceptEncoding: string | undefined = undefined;
  contentLength: string | undefined = undefined;
  transferEncoding: string | undefined = undefined;
}

/**
 * Fills `out` from `req.rawHeaders`. A repeated header: the first wins, but of `Content-Length` the
 * largest (a smuggled second length cannot hide a big body).
 */
export function scanHeaders(raw: readonly string[], out: RequestHeaders): RequestHeaders {
  out.authorization = undefined;
  out.accept = undefined;
  out.acceptEncoding = undefined;
  out.contentLength = undefined;
  out.transferEncoding = undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i];
    switch (name.length) {
      case 6:
        if (out.accept === undefined && name.toLowerCase() === 'accept') out.accept = raw[i + 1];
        break;
      case 13:
        if (out.authorization === undefined && name.toLowerCase() === 'authorization') out.authorization = raw[i + 1];
        break;
      case 14:
        if (name.toLowerCase() === 'content-length') {
          const v = raw[i + 1];
          if (out.contentLength === undefined || Number(v) > Number(out.contentLength)) out.contentLength = v;
        }
        break;
      case 15:
        if (out.acceptEncoding === undefined && name.toLowerCase() === 'accept-encoding')
          out.acceptEncoding = raw[i + 1];
        break;
      case 17:
        if (out.transferEncoding === undefined && name.toLowerCase() === 'transfer-encoding')
          out.transferEncoding = raw[i + 1];
        break;
    }
  }
  return out;
}
