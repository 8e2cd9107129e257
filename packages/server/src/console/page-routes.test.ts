// In-process tests of the console's serving side (the page itself is tested in a real
// browser by console.browser.test.ts): headers, caching, compression, the
// exposure rule of the console setting, and GET /v1/layouts/explain.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { inProcess, type InProcess } from '../http/in-process.js';
import { consoleAssets } from './page-routes.js';

const TOKEN = 'test-token-0123456789abcdef';
const AUTH = { authorization: `Bearer ${TOKEN}` };

describe('the console routes (in-process, with a token)', () => {
  let svc: InProcess;
  before(async () => {
    svc = await inProcess([], { FLURRY_TOKEN: TOKEN });
  });
  after(async () => {
    assert.deepEqual(svc.errors, []);
    await svc.stop();
  });

  test('GIVEN GET / and /console without the token THEN the page, never cached, with a strict CSP', async () => {
    for (const p of ['/', '/console']) {
      const r = await svc.get(p);
      assert.equal(r.status, 200, p);
      assert.match(String(r.headers['content-type']), /^text\/html/);
      assert.equal(r.headers['cache-control'], 'no-cache');
      const csp = String(r.headers['content-security-policy']);
      for (const d of ["default-src 'self'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'"])
        assert.ok(csp.includes(d), `${d} in ${csp}`);
      assert.ok(!/unsafe-(inline|eval)/.test(csp), csp);
      assert.equal(r.headers['x-content-type-options'], 'nosniff');
      assert.match(r.body, /<script type="module" src="\/console\/assets\/app\.[0-9a-f]{10}\.js"><\/script>/);
      assert.ok(!/<script>|<style|\sstyle="|\son\w+="/.test(r.body), 'no inline script, style or handler');
      assert.ok(!/https?:\/\//.test(r.body), 'no absolute URL: nothing leaves the origin');
    }
  });

  test('GIVEN the assets the page names THEN each is served, versioned names cached a year, compressed on request', async () => {
    const page = (await svc.get('/')).body;
    const names = [...page.matchAll(/\/console\/assets\/([\w.-]+)/g)].map((m) => m[1]);
    assert.ok(names.length >= 5, names.join(' '));
    for (const name of names) {
      const r = await svc.get(`/console/assets/${name}`);
      assert.equal(r.status, 200, name);
      assert.equal(r.headers['cache-control'], 'public, max-age=31536000, immutable', name);
      assert.equal(r.headers['x-content-type-options'], 'nosniff');
      const br = await svc.get(`/console/assets/${name}`, { 'accept-encoding': 'gzip, deflate, br' });
      assert.equal(br.headers['content-encoding'], 'br', name);
      assert.ok(Number(br.headers['content-length']) < Number(r.headers['content-length']), name);
      const gz = await svc.get(`/console/assets/${name}`, { 'accept-encoding': 'gzip' });
      assert.equal(gz.headers['content-encoding'], 'gzip', name);
    }
    const app = await svc.get(`/console/assets/app.${consoleAssets().hash}.js`);
    assert.match(app.body, new RegExp(`from '\\./api\\.${consoleAssets().hash}\\.js'`), 'imports are versioned too');
    const plain = await svc.get('/console/assets/app.js');
    assert.equal(plain.headers['cache-control'], 'no-cache');
    const gone = await svc.get('/console/assets/app.0000000000.js');
    assert.equal(gone.status, 404);
    assert.match(gone.body, /FLURRY_E_NOT_FOUND.*reload the page/);
    assert.equal((await svc.get('/console/assets/..%2Findex.html')).status, 404);
    assert.equal((await svc.get('/', {}, 'POST')).status, 405);
  });

  test('GIVEN /v1/layouts/explain THEN the token is needed, a layout is described, 73 bits are refused by the core', async () => {
    assert.equal((await svc.get('/v1/layouts/explain?preset=twitter')).status, 401);
    const ok = await svc.get('/v1/layouts/explain?fields=timestamp:41,datacenter:5,worker:5,sequence:12', AUTH);
    assert.equal(ok.status, 200, ok.body);
    const d = JSON.parse(ok.body) as { totalBits: number; nodeCount: number; expiresAt: string };
    assert.equal(d.totalBits, 63);
    assert.equal(d.nodeCount, 1024);
    assert.ok(Date.parse(d.expiresAt) > Date.parse('2080-01-01'), d.expiresAt); // 2^41 ms after the epoch
    const wide = await svc.get('/v1/layouts/explain?fields=timestamp:37,worker:20,sequence:16', AUTH);
    assert.equal(wide.status, 400);
    const e = (JSON.parse(wide.body) as { error: { code: string; message: string } }).error;
    assert.equal(e.code, 'FLURRY_E_LAYOUT_TOO_WIDE');
    assert.match(e.message, /37\+20\+16 = 73 bits/);
    for (const [q, code] of [
      ['', 'FLURRY_E_QUERY'],
      ['fields=timestamp:41,sequence:12&preset=twitter', 'FLURRY_E_QUERY'],
      ['preset=twiter', 'FLURRY_E_LAYOUT_UNKNOWN_PRESET'],
      ['fields=timestamp:41,sequence:12&unit=2ms', 'FLURRY_E_LAYOUT_UNIT'],
      ['fields=timestamp:41,sequence:12&epoch=yesterday', 'FLURRY_E_LAYOUT_EPOCH'],
      ['fields=timestamp:41,sequence:12&epoch=99999999999999999999', 'FLURRY_E_LAYOUT_EPOCH'],
      ['fields=timestamp:41,sequence:12&epoch=2999-01-01', 'FLURRY_E_LAYOUT_EPOCH'],
      ['fields=timestamp:41,worker:-1,sequence:12', 'FLURRY_E_LAYOUT_FIELD_WIDTH'],
      ['preset=__proto__', 'FLURRY_E_LAYOUT_UNKNOWN_PRESET'],
      ['fields=nonsense', 'FLURRY_E_LAYOUT_SPEC'],
      ['fields=timestamp:41,__proto__:5,sequence:12', 'FLURRY_E_LAYOUT_FIELD_NAME'],
      [`fields=timestamp:41,sequence:12&epoch=${'9'.repeat(400)}`, 'FLURRY_E_LAYOUT_EPOCH'],
      ['fields=timestamp:41&color=red', 'FLURRY_E_QUERY'],
    ]) {
      const r = await svc.get(`/v1/layouts/explain?${q}`, AUTH);
      assert.equal(r.status, 400, `${q} → ${r.body}`);
      assert.equal((JSON.parse(r.body) as { error: { code: string } }).error.code, code, `${q} → ${r.body}`);
    }
  });
});

describe('the console setting', () => {
  for (const [args, env, on] of [
    [['--host', '0.0.0.0'], {}, false],
    [['--host', '0.0.0.0', '--console', 'on'], {}, true],
    [['--host', '0.0.0.0'], { FLURRY_TOKEN: TOKEN }, true],
    [['--host', '::1'], {}, true],
    [['--console', 'off'], {}, false],
    [[], { FLURRY_CONSOLE: 'off', FLURRY_TOKEN: TOKEN }, false],
  ] as const) {
    test(`GIVEN ${[...args, ...Object.keys(env)].join(' ') || 'defaults'} THEN the console and its data routes are ${on ? 'on' : 'off'}`, async () => {
      const svc = await inProcess([...args], { ...env });
      try {
        const r = await svc.get('/');
        assert.equal(r.status, on ? 200 : 404, r.body.slice(0, 200));
        const a = await svc.get('/console/assets/console.css');
        assert.equal(a.status, on ? 200 : 404);
        if (!on) assert.match(r.body, /web console and its data routes .* are off.*(--token|auto or on)/);
        // One rule: the data routes that show hosts, pids and addresses follow the page (issue 24).
        const auth: Record<string, string> = 'FLURRY_TOKEN' in env ? AUTH : {};
        for (const path of ['/v1/status', '/v1/cluster']) {
          const d = await svc.get(path, auth);
          assert.equal(d.status, on ? 200 : 404, `${path}: ${d.body.slice(0, 200)}`);
          if (!on) {
            assert.equal((JSON.parse(d.body) as { error: { code: string } }).error.code, 'FLURRY_E_NOT_FOUND');
            assert.doesNotMatch(d.body, /"pid"|"holders"/);
          }
        }
        const events = svc.get('/v1/events', auth);
        if (on) {
          await new Promise((res) => setTimeout(res, 50));
          svc.core.console.streams.close();
        }
        const e = await events;
        assert.equal(e.status, on ? 200 : 404, e.body.slice(0, 200));
        if (!on) assert.equal(svc.core.console.streams.size, 0);
      } finally {
        await svc.stop();
      }
    });
  }
});
