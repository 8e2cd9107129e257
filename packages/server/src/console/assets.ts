/**
 * The console's files, shipped in the package (`packages/server/console/`, plus uPlot's
 * dist files from the `uplot` dependency), loaded once per process, on the first request
 * for the console (./page-routes.ts): every asset gets a
 * versioned name (`app.<hash>.js`, the hash of the whole set, so one change renames them
 * all and a long `max-age` is safe), module imports and the HTML's references are rewritten
 * to those names, and each file is precompressed with gzip and brotli.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/** One asset as served: its bytes and their compressed forms. */
export interface ConsoleAsset {
  readonly type: string;
  readonly raw: Buffer;
  readonly gzip: Buffer;
  readonly br: Buffer;
  /** Whether the name carried the set's hash (cache for a year) or not (revalidate). */
  readonly versioned: boolean;
}

/** The loaded console. */
export interface ConsoleAssets {
  /** The page (HTML), with its gzip and brotli forms. */
  readonly html: ConsoleAsset;
  /** The hash in every versioned name. */
  readonly hash: string;
  /** An asset by versioned or plain name. */
  get(name: string): ConsoleAsset | undefined;
}

const TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.html': 'text/html; charset=utf-8',
};

/** The folder of the console's own files. */
export const CONSOLE_DIR: string = fileURLToPath(new URL('../../console/', import.meta.url));

let loaded: ConsoleAssets | undefined;

/** Loads (once) and returns the console's files. */
export function consoleAssets(): ConsoleAssets {
  loaded ??= load();
  return loaded;
}

function load(): ConsoleAssets {
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
  const versioned = (name: string): string => {
    const ext = extname(name);
    return `${name.slice(0, -ext.length)}.${hash}${ext}`;
  };

  const byName = new Map<string, ConsoleAsset>();
  for (const [name, bytes] of files) {
    const ext = extname(name);
    let body = bytes;
    if (ext === '.js' && !name.startsWith('uPlot')) {
      // Relative module imports name the versioned files too.
      body = Buffer.from(
        bytes
          .toString('utf8')
          .replace(/(from\s+|import\s*\(\s*)'\.\/([\w-]+)\.js'/g, (_m, pre: string, base: string) => {
            return `${pre}'./${versioned(`${base}.js`)}'`;
          }),
      );
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
    get: (name) => byName.get(name),
  };
}

// Brotli quality 10, not 11: 2% larger (31.8 KB against 31.0 KB for the whole console) for a
// quarter of the time, which the first console request now waits for (about 80 ms, once).
function compress(type: string, raw: Buffer): ConsoleAsset {
  return {
    type,
    raw,
    gzip: gzipSync(raw, { level: 9 }),
    br: brotliCompressSync(raw, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 10, [constants.BROTLI_PARAM_SIZE_HINT]: raw.length },
    }),
    versioned: false,
  };
}
