/**
 * The web console: `GET /` and `GET /console` (the page) and `GET /console/assets/{file}`
 * (its scripts, styles and uPlot). Public (the page asks for the token and sends it on the
 * data routes), read-only, served from the package with a strict Content-Security-Policy,
 * versioned asset names cached for a year, the HTML revalidated on every load, and gzip or
 * brotli when the browser takes them. Off (404 saying why) when `console` decides so
 * (`access.ts`), as the console's data routes are (`consoleRoute` in feature.ts).
 */
import { consoleRoute } from './feature.js';
import type { ServerResponse } from 'node:http';
import { serverError } from '../errors.js';
import { consoleAssets, type ConsoleAsset } from './assets.js';
import { COMMON } from '../http/openapi-parts.js';
import { pathSegment } from '../http/routes/ids.js';
import { READ, type Route, type RouteHandler, type RouteInput } from '../http/route.js';

/** The console's Content-Security-Policy: only this origin, no inline script or style, no eval, never framed. */
export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; font-src 'self'; " +
  "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const SECURITY: Readonly<Record<string, string>> = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  vary: 'Accept-Encoding',
};

function send(res: ServerResponse, asset: ConsoleAsset, input: RouteInput, cache: string): number {
  const accept = input.headers.acceptEncoding ?? '';
  const encoding = /\bbr\b/.test(accept) ? 'br' : /\bgzip\b/.test(accept) ? 'gzip' : undefined;
  const body = encoding ? asset[encoding] : asset.raw;
  const headers: Record<string, string | number> = {
    ...SECURITY,
    'content-type': asset.type,
    'content-length': body.length,
    'cache-control': cache,
  };
  if (encoding) headers['content-encoding'] = encoding;
  res.writeHead(200, headers);
  res.end(body);
  return 200;
}

// The assets are read and compressed on the first request for them (consoleAssets() loads
// once), not at start: a service whose console nobody opens never holds them.
function page(): RouteHandler {
  return (res, input) => send(res, consoleAssets().html, input, 'no-cache');
}

const pageRoute = (name: string, path: string, operationId: string): Route =>
  consoleRoute({
    name,
    path,
    methods: READ,
    auth: 'none',
    create: page,
    openapi: {
      operationId,
      summary: 'The web console (HTML; public, read-only; see docs/console.md). 404 when the console is off.',
      security: [{}],
      responses: {
        '200': { description: 'The page.', content: { 'text/html': { schema: { type: 'string' } } } },
        ...COMMON,
      },
    },
  });

export const consoleRootRoute: Route = pageRoute('console_root', '/', 'consoleRoot');

export const consolePageRoute: Route = pageRoute('console', '/console', 'console');

/**
 * `GET /console/assets/{file}` → one of the console's files: versioned names
 * (`app.<hash>.js`) are cached for a year, plain names revalidated.
 */
export const consoleAssetRoute: Route = consoleRoute({
  name: 'console_asset',
  path: '/console/assets/{file}',
  methods: READ,
  auth: 'none',
  create: () => (res, input) => {
    const name = pathSegment(input.params[0]);
    const asset = consoleAssets().get(name);
    if (asset === undefined)
      throw serverError(
        'NOT_FOUND',
        `the console has no asset ${name.slice(0, 80)}; reload the page (GET /) to get the current asset names`,
      );
    return send(res, asset, input, asset.versioned ? 'public, max-age=31536000, immutable' : 'no-cache');
  },
  openapi: {
    operationId: 'consoleAsset',
    summary: "A file of the web console (script, style sheet, uPlot's files).",
    security: [{}],
    parameters: [{ name: 'file', in: 'path', required: true, schema: { type: 'string' } }],
    responses: {
      '200': { description: 'The file.', content: { 'text/javascript': {}, 'text/css': {} } },
      ...COMMON,
    },
  },
});
