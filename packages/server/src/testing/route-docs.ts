/**
 * The route table and the metrics' `route` labels of docs/service-api.md, generated from the
 * route declarations (`http/routes/index.ts`) as the OpenAPI document is, so the page cannot
 * omit a route. Each part sits between `<!-- generated: NAME … -->` and
 * `<!-- end generated: NAME -->` lines; `node packages/server/dist/testing/route-docs.js --write`
 * rewrites them, `--check` (and `route-docs.test.ts`) fails when they differ.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Route } from '../http/route.js';
import { ROUTE_NAMES, ROUTES } from '../http/routes/index.js';

const AUTH: Readonly<Record<NonNullable<Route['auth']>, string>> = {
  token: 'token',
  'token-or-query': 'token (header or `?token=`)',
  health: 'token with `authHealth`',
  none: 'never',
};

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\s+/g, ' ').trim();

/** `GET /v1/ids?count=…` for a route: its methods, its path and its query parameters. */
function target(r: Route): string {
  const params = (r.openapi.parameters ?? []) as { name?: string; in?: string; required?: boolean }[];
  const query = params.filter((p) => p.in === 'query' && p.name !== 'token').map((p) => `${p.name}=…`);
  return `\`${r.methods.replace(', ', '/')} ${r.path}${query.length ? '?' + query.join('&') : ''}\``;
}

/** The route table (Markdown): route, metrics label, who may call it, answer (the operation's summary). */
export function routeTable(): string {
  return [
    '| Route | Metrics label | Token | Answer |',
    '| --- | --- | --- | --- |',
    ...ROUTES.map(
      (r) =>
        `| ${target(r)} | \`${r.name}\` | ${AUTH[r.auth ?? 'token']} | ${cell(typeof r.openapi.summary === 'string' ? r.openapi.summary : '')} |`,
    ),
  ].join('\n');
}

/** The sentence listing every `route` label of the request metrics, `unmatched` included. */
export function routeLabels(): string {
  const names = ROUTE_NAMES.map((n) => `\`${n}\``);
  return `The \`route\` label of \`flurry_http_requests_total\` and \`flurry_http_request_duration_seconds\` is one of ${names.join(', ')} (a path no route matched).`;
}

const PARTS: Readonly<Record<string, () => string>> = { routes: routeTable, 'route-labels': routeLabels };

/**
 * `text` with every generated part replaced by its current form. Throws when a part's
 * markers are missing, so a page that lost them fails the check too.
 */
export function syncRouteDocs(text: string): string {
  let out = text;
  for (const [name, make] of Object.entries(PARTS)) {
    const re = new RegExp(`(<!-- generated: ${name}[^\\n]*-->\\n)[\\s\\S]*?(<!-- end generated: ${name} -->)`);
    if (!re.test(out)) throw new Error(`docs/service-api.md lacks the generated part "${name}" (its marker lines)`);
    out = out.replace(re, (_m, open: string, close: string) => `${open}${make()}\n${close}`);
  }
  return out;
}

// `node dist/testing/route-docs.js --write` rewrites docs/service-api.md; `--check` exits 1 when it is out of date.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const file = fileURLToPath(new URL('../../../../docs/service-api.md', import.meta.url));
  const text = readFileSync(file, 'utf8');
  const fixed = syncRouteDocs(text);
  if (process.argv.includes('--write')) writeFileSync(file, fixed);
  else if (fixed !== text) {
    process.stderr.write(
      'docs/service-api.md: the route table or the route labels differ from the route declarations; run node packages/server/dist/testing/route-docs.js --write\n',
    );
    process.exitCode = 1;
  }
}
