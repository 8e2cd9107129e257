// Talking to the service: the bearer token (sessionStorage, this tab only), JSON fetches
// with `Authorization: Bearer`, and the live stream /v1/events (with ?token= there only:
// EventSource cannot send headers), reconnected with backoff and backed by polling.

const KEY = 'flurry.console.token';

/** The token kept for this tab, or ''. */
export function token() {
  try {
    return sessionStorage.getItem(KEY) ?? '';
  } catch {
    return '';
  }
}

/** Keeps (or with '' forgets) the token for this tab. */
export function setToken(value) {
  try {
    if (value) sessionStorage.setItem(KEY, value);
    else sessionStorage.removeItem(KEY);
  } catch {
    /* storage off: the token lives until the page closes */
  }
}

/** An error from the service: its HTTP status and coded body. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** GET a JSON route of this service; throws ApiError with the service's code and message. */
export async function getJson(path) {
  const headers = { accept: 'application/json' };
  const t = token();
  if (t) headers.authorization = `Bearer ${t}`;
  let res;
  try {
    res = await fetch(path, { headers, cache: 'no-store', credentials: 'omit' });
  } catch {
    throw new ApiError(0, 'NETWORK', 'the service cannot be reached');
  }
  const text = await res.text();
  let body;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (!res.ok) {
    const e = body && body.error ? body.error : { code: `HTTP_${res.status}`, message: text.slice(0, 200) };
    throw new ApiError(res.status, e.code, e.message);
  }
  return body;
}

/**
 * Keeps the page fed: the SSE stream when it works; when it is cut, says so, polls
 * /v1/status and /v1/cluster every 2 s and reconnects after 1, 2, 4 … 30 s.
 * `on` gets { status(body), cluster(body), clusterError(err), state(kind, text) }.
 */
export function connect(on) {
  let source = null;
  let attempt = 0;
  let retryTimer = 0;
  let pollTimer = 0;
  let closed = false;
  let lastFrame = 0;
  let waitS = 0; // the current reconnection wait, for the status line

  const poll = async () => {
    try {
      on.status(await getJson('/v1/status'));
    } catch (e) {
      on.failure(e, waitS);
      return;
    }
    try {
      on.cluster(await getJson('/v1/cluster'));
    } catch (e) {
      on.clusterError(e);
    }
  };
  const startPolling = () => {
    if (pollTimer) return;
    void poll();
    pollTimer = setInterval(poll, 2000);
  };
  const stopPolling = () => {
    clearInterval(pollTimer);
    pollTimer = 0;
  };

  const open = () => {
    if (closed) return;
    const t = token();
    const url = t ? `/v1/events?token=${encodeURIComponent(t)}` : '/v1/events';
    source = new EventSource(url);
    source.addEventListener('open', () => {
      attempt = 0;
      lastFrame = Date.now(); // the watchdog counts silence from here, not from the last stream

      on.state('live', 'Live');
    });
    source.addEventListener('status', (ev) => {
      lastFrame = Date.now();
      stopPolling();
      on.status(JSON.parse(ev.data));
    });
    source.addEventListener('cluster', (ev) => on.cluster(JSON.parse(ev.data)));
    source.addEventListener('cluster-error', (ev) => on.clusterError(JSON.parse(ev.data)));
    source.addEventListener('error', () => {
      source.close();
      source = null;
      const wait = Math.min(30, 2 ** attempt) * 1000;
      attempt++;
      waitS = wait / 1000;
      on.state('cut', `Live stream cut; polling, reconnecting in ${waitS} s`);
      startPolling();
      retryTimer = setTimeout(open, wait);
    });
  };

  // A stream that stays silent for 5 s is as good as cut.
  const watchdog = setInterval(() => {
    if (source && source.readyState === EventSource.OPEN && lastFrame && Date.now() - lastFrame > 5000) {
      source.dispatchEvent(new Event('error'));
    }
  }, 1000);

  open();
  return () => {
    closed = true;
    clearTimeout(retryTimer);
    clearInterval(watchdog);
    stopPolling();
    source?.close();
  };
}
