// The steps startService composes, each on its own (in this process, real sockets on
// 127.0.0.1, a real file: registry in a temporary directory).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import { FlurryError } from '@flurry/core';
import { loadServeConfig } from './config/index.js';
import { createHttpServer } from './http/server.js';
import { createServiceCore, httpContext } from './service-core.js';
import { abortStart, leaseGenerator, listenHttp, shutdown, type ServiceLogger } from './service.js';
import { httpGet, tempDir } from './test-support.js';

function recorder(): { logger: ServiceLogger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const line = (level: string) => (o: object, msg?: string) => lines.push({ level, ...o, msg });
  const logger: ServiceLogger = {
    info: line('info'),
    warn: line('warn'),
    error: line('error'),
    debug: line('debug'),
    child: () => logger,
  };
  return { logger, lines };
}

test('GIVEN a port another server holds THEN listenHttp rejects with FLURRY_E_LISTEN naming the address and the flags to change', async () => {
  const holder = createServer();
  const port = await listenHttp(holder, 0, '127.0.0.1');
  try {
    await assert.rejects(listenHttp(createServer(), port, '127.0.0.1'), (e: unknown) => {
      assert.ok(e instanceof FlurryError);
      assert.equal(e.code, 'FLURRY_E_LISTEN');
      assert.match(e.message, new RegExp(`127\\.0\\.0\\.1:${port} \\(EADDRINUSE\\).*--host, --port`));
      return true;
    });
  } finally {
    holder.close();
  }
});

test('GIVEN a service composed from the steps WHEN shutdown runs THEN readiness turns to shutting down, the lease is released with its high-water mark, then the registry closes and "stopped" is the last line', async () => {
  const dir = tempDir('steps');
  const { logger, lines } = recorder();
  try {
    const config = loadServeConfig(['--port', '0', '--registry', `file:${path.join(dir, 'reg')}`], {});
    const core = createServiceCore(config, logger);
    const ctx = httpContext(config, core, logger);
    const server = createHttpServer(ctx);
    const port = await listenHttp(server, 0, '127.0.0.1');
    assert.equal((await httpGet(port, '/readyz')).status, 503, 'not ready before the lease');
    await leaseGenerator(config, core, port, logger, { stateDir: path.join(dir, 'state') });
    assert.equal((await httpGet(port, '/readyz')).status, 200);
    assert.equal((await httpGet(port, '/v1/ids/next')).status, 200);
    await shutdown({ config, core, ctx, server, thrift: undefined, logger });
    assert.equal(core.notReady()?.code, 'FLURRY_E_UNAVAILABLE');
    assert.match(core.notReady()?.message ?? '', /shutting down; use another instance/);
    assert.equal(server.listening, false);
    const msgs = lines.map((l) => l.msg);
    assert.deepEqual(
      msgs.filter((m) => m !== 'request'),
      ['shutting down: finishing in-flight requests', 'lease released with the final high-water mark', 'stopped'],
    );
    assert.ok(Number(lines[1].highWaterMs) > 0, 'the high-water mark is logged');
    assert.equal(
      codeOf(() => core.issuer.next()),
      'FLURRY_E_LEASE_EXPIRED',
      'released: nothing is issued under it',
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('GIVEN a start that fails after listening THEN abortStart closes the server, the leased generator and the registry', async () => {
  const dir = tempDir('abort');
  const { logger } = recorder();
  try {
    const config = loadServeConfig(['--port', '0', '--registry', `file:${path.join(dir, 'reg')}`], {});
    const core = createServiceCore(config, logger);
    const server = createHttpServer(httpContext(config, core, logger));
    const port = await listenHttp(server, 0, '127.0.0.1');
    await leaseGenerator(config, core, port, logger, { stateDir: path.join(dir, 'state') });
    await abortStart(server, core);
    assert.equal(server.listening, false);
    assert.equal(core.issuer.leased?.ready(), false, 'the lease is released');
    assert.notEqual(
      codeOf(() => core.issuer.next()),
      'none',
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

function codeOf(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    return err instanceof FlurryError ? err.code : String(err);
  }
  return 'none';
}
