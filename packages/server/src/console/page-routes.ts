// The web console's page (`GET /`, `GET /console`) and files (`GET /console/assets/{file}`): public, read-only,
// with a strict CSP. Loaded on the first request: every asset gets a versioned name (`app.<hash>.js`, the hash of
// the whole set, so a year's max-age is safe), imports and the HTML are rewritten to them, each file precompressed.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { consoleRoute } from './routes.js';
import { serverError } from '../errors.js';
import { COMMON } from '../http/openapi-parts.js';
import { pathSegment } from '../http/routes/ids.js';
import { READ, type Route, type RouteInput } from '../http/route.js';

const TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.html': 'text/html; charset=utf-8',
};

const CONSOLE_DIR = fileURLToPath(new URL('../../console/', import.meta.url));

let loaded: ReturnType<typeof load> | undefined;

/** The console's files (the page, the hash, an asset by either name), loaded on the first request for them. */
export const consoleAssets = (): ReturnType<typeof load> => (loaded ??= load());

function load() {
  const files = new Map<string, Buffer>();
  const assetsDir = join(CONSOLE_DIR, 'assets');
  for (const name of readdirSync(assetsDir).sort()) {
    if (TYPES[extname(name)] !== undefined) files.set(name, readFileSync(join(assetsDir, name)));
  }
  const require = createRequire(import.meta.url);
  for (const name of ['uPlot.iife.min.js', 'uPlot.min.css'])
    files.set(name, readFileSync(require.resolve(`uplot/dist/${name}`)));
  const template = readFileSync(join(CONSOLE_DIR, 'index.html'), 'utf8');

  const h = createHash('sha256');
  for (const [name, bytes] of files) h.update(name).update('\0').update(bytes).update('\0');
  h.update(template);
  const hash = h.digest('hex').slice(0, 10);
  const versioned = (name: string): string => name.replace(/(\.\w+)$/, `.${hash}$1`);

  const byName = new Map<string, ConsoleAsset>();
  for (const [name, bytes] of files) {
    const ext = extname(name);
    let body = bytes;
    if (ext === '.js' && !name.startsWith('uPlot')) {
      // Relative module imports name the versioned files too.
      const imports = /(from\s+|import\s*\(\s*)'\.\/([\w-]+)\.js'/g;
      body = Buffer.from(bytes.toString('utf8').replace(imports, `$1'./$2.${hash}.js'`));
    }
    const asset = compress(TYPES[ext], body);
    byName.set(versioned(name), { ...asset, versioned: true });
    byName.set(name, asset);
  }
  const page = template.replace(/\/console\/assets\/([\w.-]+\.(?:js|css|svg))/g, (m, name: string) =>
    files.has(name) ? `/console/assets/${versioned(name)}` : m,
  );
  return {
    html: compress(TYPES['.html'], Buffer.from(page)),
    hash,
    get: (name: string) => byName.get(name),
  };
}

// Brotli quality 10, not 11: 2% larger (31.8 KB against 31.0 KB for the whole console) for a
// quarter of the time, which the first console request now waits for (about 80 ms, once).
type ConsoleAsset = ReturnType<typeof compress>;

function compress(type: string, raw: Buffer) {
  return {
    type,
    raw,
    gzip: gzipSync(raw, { level: 9 }),
    br: brotliCompressSync(raw, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 10, [constants.BROTLI_PARAM_SIZE_HINT]: raw.length },
    }),
    versioned: false as boolean, // true under the name with the set's hash (cached for a year)
  };
}

const SECURITY: Readonly<Record<string, string>> = {
  // Only this origin, no inline script or style, no eval, never framed.
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; font-src 'self'; " +
    "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
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
  res.writeHead(200, {
    ...SECURITY,
    'content-type': asset.type,
    'content-length': body.length,
    'cache-control': cache,
    ...(encoding ? { 'content-encoding': encoding } : {}),
  });
  res.end(body);
  return 200;
}

const pageRoute = (name: string, path: string, operationId: string): Route =>
  consoleRoute({
    name,
    path,
    methods: READ,
    auth: 'none',
    create: () => (res, input) => send(res, consoleAssets().html, input, 'no-cache'),
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
