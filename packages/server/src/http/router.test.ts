// The route table's dispatcher on its own: exact paths, {param} patterns of one or more
// segments, precedence, and a table extended by one entry (as a new route file would be).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { FlurryError } from '@flurry/core';
import { createRequestHandler, Router } from './handler.js';
import { inProcess, type InProcess } from './in-process.js';
import { inject } from './inject.js';
import { COMMON } from './openapi-parts.js';
import { JSON_TYPE, sendText } from './respond.js';
import { ISSUE, READ, type Route } from './route.js';
import { ROUTES } from './routes/index.js';

/** A route answering its name and parameters, as a route file would declare it. */
function echo(name: string, path: string, methods = READ): Route {
  return {
    name,
    path,
    methods,
    auth: 'token',
    create: () => (res, input) =>
      sendText(res, 200, JSON_TYPE, JSON.stringify({ name, params: input.params, query: input.query })),
    openapi: { operationId: name, summary: name, responses: { ...COMMON } },
  };
}

let svc: InProcess;
before(async () => {
  svc = await inProcess([]);
});
after(async () => {
  await svc.stop();
});

test('GIVEN exact paths and {param} patterns THEN exact paths win, a {param} is one non-empty segment, and literal segments after it must match', () => {
  const table = [
    echo('range', '/v1/ids/range'),
    echo('decode', '/v1/ids/{id}'),
    echo('seq_next', '/v1/sequences/{name}/next'),
    echo('seq_item', '/v1/sequences/{name}/items/{n}'),
  ];
  const router = new Router(table, svc.ctx);
  assert.equal(router.match('/v1/ids/range')?.route.name, 'range');
  assert.equal(router.match('/v1/ids/123')?.route.name, 'decode');
  assert.deepEqual(router.match('/v1/ids/123')?.input.params, ['123']);
  assert.equal(router.match('/v1/ids/'), undefined);
  assert.equal(router.match('/v1/ids/1/2'), undefined);
  assert.equal(router.match('/v1/ids'), undefined);
  const hit = router.match('/v1/sequences/orders/next');
  assert.equal(hit?.route.name, 'seq_next');
  assert.deepEqual(hit?.input.params, ['orders']);
  assert.deepEqual(router.match('/v1/sequences/a/items/7')?.input.params, ['a', '7']);
  for (const miss of [
    '/v1/sequences/orders',
    '/v1/sequences/orders/',
    '/v1/sequences//next',
    '/v1/sequences/orders/next/',
    '/v1/sequences/orders/next/x',
    '/v1/sequences/orders/prev',
    '/v1/sequences/a/items/',
  ]) {
    assert.equal(router.match(miss), undefined, miss);
  }
});

test('GIVEN a table declaring a path twice or a {param} inside a segment THEN building the router fails with FLURRY_E_INTERNAL naming the route', () => {
  assert.throws(
    () => new Router([echo('a', '/x'), echo('b', '/x')], svc.ctx),
    (e: unknown) =>
      e instanceof FlurryError && e.code === 'FLURRY_E_INTERNAL' && /route b: the path \/x/.test(e.message),
  );
  assert.throws(
    () => new Router([echo('c', '/v1/id-{id}')], svc.ctx),
    (e: unknown) => e instanceof FlurryError && e.code === 'FLURRY_E_INTERNAL' && /route c/.test(e.message),
  );
});

test('GIVEN the service table plus one new entry THEN the handler serves it with its methods, auth and parameters, and the existing routes are unchanged', async () => {
  const handler = createRequestHandler(svc.ctx, [...ROUTES, echo('widget_next', '/v1/widgets/{name}/next', ISSUE)]);
  const r = await inject(handler, { url: '/v1/widgets/orders/next?x=1' });
  assert.equal(r.status, 200, r.body);
  assert.deepEqual(JSON.parse(r.body), { name: 'widget_next', params: ['orders'], query: 'x=1' });
  const head = await inject(handler, { method: 'HEAD', url: '/v1/widgets/orders/next' });
  assert.equal(head.status, 405);
  assert.equal(head.headers['allow'], 'GET');
  assert.equal((await inject(handler, { url: '/v1/ids/next' })).status, 200);
  assert.equal((await inject(handler, { url: '/v1/widgets/orders' })).status, 404);
});
