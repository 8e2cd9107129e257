#!/usr/bin/env node
// A torture child: throws malformed and hostile requests at `flurry serve` instances
// (random methods, paths, queries, headers, bodies, oversized URLs and bodies, broken
// percent-encoding, raw garbage on the socket, half-sent requests) and records how they
// were answered. Any ID a 200 answer carried is written to the binary output like every
// other ID (so the fuzz also feeds the duplicate check).
//
// Usage: node fuzz.mjs '<json: { targets: [baseUrl…], out, requests, durationMs, seed }>'
// Prints one JSON line at the end: { ev:'done', statuses:{…}, serverErrors:[…], … }.
import http from 'node:http';
import net from 'node:net';
import { openSync, writeSync, closeSync } from 'node:fs';

const cfg = JSON.parse(process.argv[2]);
const say = (o) => process.stdout.write(JSON.stringify(o) + '\n');
setTimeout(
  () => {
    say({ ev: 'error', where: 'lifetime', message: 'fuzz lifetime bound exceeded' });
    process.exit(3);
  },
  (cfg.durationMs ?? 10_000) + 30_000,
).unref();

// Seeded PRNG (mulberry32) so a failing run can be replayed with the same seed.
let seed = cfg.seed >>> 0;
const rnd = () => {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const pick = (a) => a[Math.floor(rnd() * a.length)];
const int = (n) => Math.floor(rnd() * n);
const junkChars = 'abcXYZ0123456789-_.~!*\'();:@&=+$,/?%#[]<>"{}|\\^` \t\u00e9\u4e2d\u0000';
const junk = (n) => Array.from({ length: n }, () => pick(junkChars)).join('');
const enc = (s) => (rnd() < 0.5 ? encodeURIComponent(s) : s.replace(/[^\x21-\x7e]/g, (c) => encodeURIComponent(c)));

const numbers = [
  '0',
  '1',
  '-1',
  '1.5',
  '1e3',
  '9999999999999999999999',
  '18446744073709551616',
  '9223372036854775808',
  '-9223372036854775808',
  'NaN',
  'Infinity',
  '0x10',
  '00012',
  ' 5',
  '5 ',
  '10000',
  '10001',
  '',
  '%',
  '%zz',
  '２',
  '1_000',
];
const idLike = [
  '0',
  '1',
  '-1',
  '18446744073709551615',
  '18446744073709551616',
  '9223372036854775807',
  '99999999999999999999999999',
  'abc',
  '',
  '%00',
  '1e10',
  '０',
  '12345678901234567890',
  '-0',
  '+5',
  '0.1',
];

function randomTarget() {
  const r = rnd();
  if (r < 0.12)
    return `/v1/ids?count=${enc(pick(numbers))}${rnd() < 0.3 ? `&count=${enc(pick(numbers))}` : ''}${rnd() < 0.2 ? '&' + enc(junk(int(8))) : ''}`;
  if (r < 0.2) return `/v1/ids/${enc(pick(idLike))}`;
  if (r < 0.26) return `/v1/ids/${enc(junk(1 + int(30)))}`;
  if (r < 0.32) return `/v1/ids/next${pick(['', '/', '?', '?x=1', '/extra', '%20', '?count=5'])}`;
  if (r < 0.38) return `/api/snowflake/get/${enc(junk(int(20)))}`;
  if (r < 0.44) return `/decodeSnowflakeId?snowflakeId=${enc(pick([...idLike, junk(int(20))]))}`;
  if (r < 0.48)
    return pick(['/healthz', '/readyz', '/metrics', '/openapi.json', '/v1/layout', '/', '/v1', '/v1/', '/v2/ids/next']);
  if (r < 0.52) return `/v1/ids?${junk(int(40))}`; // unencoded junk
  if (r < 0.56) return `/${'a'.repeat(3000 + int(20000))}`; // beyond the URL bound
  if (r < 0.6) return `/v1/ids?count=${'9'.repeat(int(400))}`;
  if (r < 0.64)
    return pick([
      '//v1/ids/next',
      '/v1//ids',
      '/./v1/ids/next',
      '/v1/ids/../ids/next',
      '/%2e%2e/%2e%2e/etc/passwd',
      '/v1/ids/%',
      '/v1/ids/%ff%fe',
      '/v1/public-ids/next',
      '/v1/public-ids/' + junk(10),
    ]);
  if (r < 0.7) return `/${enc(junk(1 + int(60)))}`;
  return `/v1/ids/next`;
}

const methods = [
  'GET',
  'GET',
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'DELETE',
  'PATCH',
  'OPTIONS',
  'TRACE',
  'CONNECTX',
  'PROPFIND',
];
function randomHeaders() {
  const h = {};
  if (rnd() < 0.3)
    h.accept = pick([
      'text/plain',
      'application/json',
      '*/*',
      'text/*',
      'garbage/;;;',
      'application/json;q=0',
      'text/plain, application/json;q=0.5',
      junk(20).replace(/[^\x20-\x7e]/g, ''),
    ]);
  if (rnd() < 0.15)
    h.authorization = pick([
      'Bearer',
      'Bearer ',
      'Bearer x',
      'Basic Zm9vOmJhcg==',
      junk(30).replace(/[^\x21-\x7e]/g, 'x'),
    ]);
  if (rnd() < 0.05) h['x-huge'] = 'x'.repeat(20_000 + int(60_000)); // beyond Node's header limit
  if (rnd() < 0.1) h['content-type'] = pick(['application/json', 'text/plain', 'multipart/form-data; boundary=x']);
  if (rnd() < 0.05) h.host = pick(['', 'evil.example', '[::1]', 'a'.repeat(300)]);
  if (rnd() < 0.05) h.expect = '100-continue';
  return h;
}
function randomBody() {
  const r = rnd();
  if (r < 0.75) return null;
  if (r < 0.9) return Buffer.from(junk(1 + int(500)));
  if (r < 0.97) return Buffer.alloc(2_000 + int(10_000), 0x41);
  return Buffer.alloc(1_100_000, 0x42); // above any allowed body
}

const rawGarbage = [
  'GET / HTTP/1.1\r\n\r\n',
  'BLAH\r\n\r\n',
  'GET /v1/ids/next HTTP/9.9\r\nHost: x\r\n\r\n',
  'GET /v1/ids/next HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n',
  'GET /v1/ids/next HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
  'POST /v1/ids HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
  'GET /v1/ids/next HTTP/1.1\r\nHost: x\r\n', // never finished
  '\x00\x01\x02\x03\xff\xfe binary junk\r\n\r\n',
  'GET /v1/ids/next HTTP/1.1\r\nHost: x\r\nX: ' + 'y'.repeat(70_000) + '\r\n\r\n',
  'GET /v1/ids/next HTTP/1.1\nHost: x\n\n',
  'GET\t/v1/ids/next\tHTTP/1.1\r\n\r\n',
  'GET /v1/ids/next HTTP/1.0\r\n\r\nGET /v1/ids/next HTTP/1.0\r\n\r\n',
];

const fd = openSync(cfg.out, 'a');
const idBuf = new BigUint64Array(10_000);
const statuses = {};
const perTarget = {};
const serverErrors = [];
const badErrorBodies = [];
const connErrors = {};
let idsSeen = 0;
let sent = 0;
let maxMs = 0;

// Only the issuing routes hand out IDs (the decoding routes echo the ID they were given).
function issuesIds(target) {
  let p;
  try {
    p = new URL(target, 'http://x').pathname;
  } catch {
    return false;
  }
  return p === '/v1/ids/next' || p === '/v1/ids' || p.startsWith('/api/snowflake/get/');
}

function recordIds(text, contentType) {
  const out = [];
  if (/json/.test(contentType ?? '')) {
    try {
      const j = JSON.parse(text);
      if (typeof j.id === 'string') out.push(j.id);
      if (Array.isArray(j.ids)) out.push(...j.ids.filter((x) => typeof x === 'string'));
    } catch {
      /* not JSON */
    }
  } else if (/^\d{1,20}$/.test(text.trim())) out.push(text.trim());
  let n = 0;
  for (const s of out) {
    try {
      idBuf[n++] = BigInt(s);
    } catch {}
  }
  if (n) {
    writeSync(fd, new Uint8Array(idBuf.buffer), 0, n * 8);
    idsSeen += n;
  }
}

function oneHttp(base) {
  return new Promise((resolve) => {
    const method = pick(methods);
    const target = randomTarget();
    const headers = randomHeaders();
    const body = method === 'GET' || method === 'HEAD' ? (rnd() < 0.1 ? randomBody() : null) : randomBody();
    const t0 = performance.now();
    let req;
    try {
      const u = new URL(base);
      req = http.request(
        { host: u.hostname, port: u.port, method, path: target, headers, agent: false, timeout: 5_000 },
        (res) => {
          const chunks = [];
          let size = 0;
          res.on('data', (d) => {
            size += d.length;
            if (size < 2_000_000) chunks.push(d);
          });
          res.on('end', () => {
            const ms = performance.now() - t0;
            if (ms > maxMs) maxMs = ms;
            const s = res.statusCode;
            statuses[s] = (statuses[s] ?? 0) + 1;
            const text = Buffer.concat(chunks).toString('utf8');
            if (s >= 500 && s !== 503)
              serverErrors.push({ base, method, target: target.slice(0, 200), status: s, body: text.slice(0, 300) });
            if (s === 503 && !res.headers['retry-after'])
              badErrorBodies.push({ why: '503 without Retry-After', target: target.slice(0, 200) });
            if (s >= 400 && method !== 'HEAD' && s !== 431 && headers.host === undefined) {
              // Errors the service itself answers must be JSON {error:{code,message}}.
              try {
                const j = JSON.parse(text);
                if (!j?.error?.code?.startsWith?.('FLURRY_E_'))
                  badErrorBodies.push({
                    why: 'error body without a FLURRY_E_ code',
                    status: s,
                    target: target.slice(0, 200),
                    body: text.slice(0, 200),
                  });
              } catch {
                badErrorBodies.push({
                  why: 'error body is not JSON',
                  status: s,
                  target: target.slice(0, 200),
                  body: text.slice(0, 200),
                });
              }
            }
            if (/\bat [^\n]+\.(js|ts):\d+/.test(text))
              badErrorBodies.push({ why: 'stack trace in a response', status: s, target: target.slice(0, 200) });
            if (s === 200 && method !== 'HEAD' && issuesIds(target)) recordIds(text, res.headers['content-type']);
            resolve();
          });
          res.on('error', () => resolve());
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', (e) => {
        const k = `${base} ${e.code ?? e.message}`;
        connErrors[k] = (connErrors[k] ?? 0) + 1;
        resolve();
      });
      if (body) req.end(body);
      else req.end();
    } catch (e) {
      // Node refused to even send it (invalid header characters etc.): not the server's doing.
      statuses.unsendable = (statuses.unsendable ?? 0) + 1;
      req?.destroy();
      resolve();
    }
  });
}

function oneRaw(base) {
  return new Promise((resolve) => {
    const u = new URL(base);
    const s = net.connect({ host: u.hostname, port: Number(u.port) });
    let got = '';
    const done = () => {
      s.destroy();
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(got);
      const k = m ? `raw ${m[1]}` : 'raw closed';
      statuses[k] = (statuses[k] ?? 0) + 1;
      if (m && Number(m[1]) >= 500 && m[1] !== '503')
        serverErrors.push({ base, raw: true, status: Number(m[1]), body: got.slice(0, 300) });
      resolve();
    };
    s.setTimeout(1_000, done);
    s.on('data', (d) => {
      got += d.toString('latin1');
      if (got.length > 100_000) done();
    });
    s.on('error', () => done());
    s.on('close', done);
    s.on('connect', () => s.write(Buffer.from(pick(rawGarbage), 'latin1')));
  });
}

const until = performance.now() + (cfg.durationMs ?? 10_000);
const conc = cfg.concurrency ?? 8;
async function worker() {
  while (sent < cfg.requests && performance.now() < until) {
    sent++;
    const base = pick(cfg.targets);
    perTarget[base] = (perTarget[base] ?? 0) + 1;
    if (rnd() < 0.06) await oneRaw(base);
    else await oneHttp(base);
  }
}
await Promise.all(Array.from({ length: conc }, worker));
closeSync(fd);
say({
  ev: 'done',
  sent,
  statuses,
  serverErrors: serverErrors.slice(0, 20),
  serverErrorCount: serverErrors.length,
  badErrorBodies: badErrorBodies.slice(0, 20),
  badErrorBodyCount: badErrorBodies.length,
  connErrors,
  idsSeen,
  maxMs,
  perTarget,
});
process.exit(0);
