// `GET /v1/events`: the console's Server-Sent Events (console/events.ts); this route alone also takes `?token=`.
import { consoleOf, consoleRoute } from './feature.js';
import type { HttpContext } from '../http/context.js';
import { COMMON, FENCED, param } from '../http/openapi-parts.js';
import { ISSUE, type Route } from '../http/route.js';

const TOKEN_HELP = 'The bearer token, for clients that cannot send headers (EventSource). Only on this route.';

export const eventsRoute: Route = consoleRoute({
  name: 'events',
  path: '/v1/events',
  // GET only: a HEAD would open a stream nobody reads.
  methods: ISSUE,
  auth: 'token-or-query',
  create: (ctx: HttpContext) => (res) => consoleOf(ctx).streams.open(res),
  openapi: {
    operationId: 'events',
    summary:
      'Server-Sent Events for the console: `event: status` (the /v1/status body) and `event: cluster` (the /v1/cluster body, or `event: cluster-error` with {code, message}) at least every second, a `: ping` comment every 15 s. At most 64 streams per service (then 503 with Retry-After). Besides the Authorization header, this route alone accepts the token as the `token` query parameter, because EventSource cannot send headers.',
    parameters: [param('query', 'token', false, { type: 'string' }, TOKEN_HELP)],
    responses: {
      '200': {
        description: 'The event stream (until the client disconnects or the service stops).',
        content: { 'text/event-stream': { schema: { type: 'string' } } },
      },
      ...COMMON,
      ...FENCED,
    },
  },
});
