// docs/service-api.md's route table and metric route labels are generated from the route
// declarations (route-docs.ts): the page in the repository must be what they generate now.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROUTE_NAMES, ROUTES } from '../http/routes/index.js';
import { routeLabels, routeTable, syncRouteDocs } from './route-docs.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const page = readFileSync(path.join(root, 'docs', 'service-api.md'), 'utf8');

test('GIVEN docs/service-api.md THEN its route table and route labels are those the route declarations generate (node packages/server/dist/testing/route-docs.js --write)', () => {
  assert.equal(
    page,
    syncRouteDocs(page),
    'docs/service-api.md is out of date: run node packages/server/dist/testing/route-docs.js --write',
  );
});

test('GIVEN the route declarations THEN the table has a row per route (paths and metric labels) and the labels sentence names every label', () => {
  const table = routeTable();
  for (const r of ROUTES) {
    assert.ok(table.includes(` ${r.path}`), `the table lists ${r.path}`);
    assert.ok(table.includes(`| \`${r.name}\` |`), `the table names the label ${r.name}`);
  }
  for (const p of ['/v1/ids/range', '/v1/sequences/{key}/next', '/v1/sequences/{key}', '/v1/sequences/{key}/status'])
    assert.ok(page.includes(` ${p}`), `the page lists ${p}`);
  for (const n of [
    ...ROUTE_NAMES,
    'ids_range',
    'layouts_explain',
    'status',
    'cluster',
    'events',
    'console_root',
    'console',
    'console_asset',
  ])
    assert.ok(routeLabels().includes(`\`${n}\``) && page.includes(`\`${n}\``), `the label ${n}`);
});

test('GIVEN a page whose generated part drifted or lost its markers THEN the sync changes it or throws', () => {
  const drifted = page.replace(/\| `GET\/HEAD \/v1\/ids\/range[^\n]*\n/, '');
  assert.notEqual(drifted, page, 'the range row was found');
  assert.notEqual(syncRouteDocs(drifted), drifted);
  assert.throws(
    () => syncRouteDocs(page.replace('<!-- end generated: routes -->', '')),
    /lacks the generated part "routes"/,
  );
});
