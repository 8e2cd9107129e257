// The two platform modules behind `#platform` (package.json `imports`) give the same answers: node.ts (Node.js,
// node:crypto and Buffer) and web.ts (browsers and workerd: plain TypeScript SHA-256/HKDF, Web Crypto,
// performance.now()). Both load in Node.js, so each web piece is checked against Node's here, on random inputs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import * as node from './node.js';
import * as web from './web.js';
import { hmacSha256, sha256 } from './sha256.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

test('GIVEN the FIPS 180-2 vectors and random inputs of every length up to 300 bytes THEN sha256 and HMAC-SHA-256 match node:crypto', () => {
  assert.equal(hex(sha256(['abc'])), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  assert.equal(hex(sha256([''])), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  for (let n = 0; n <= 300; n++) {
    const data = new Uint8Array(randomBytes(n));
    const key = new Uint8Array(randomBytes(n % 97));
    assert.equal(
      hex(sha256([data.subarray(0, n >> 1), data.subarray(n >> 1)])),
      createHash('sha256').update(data).digest('hex'),
      `sha256 of ${n} bytes`,
    );
    assert.equal(
      hex(hmacSha256(key, [data])),
      createHmac('sha256', key).update(data).digest('hex'),
      `HMAC of ${n} bytes`,
    );
  }
});

test('GIVEN random secrets, salts, infos and lengths THEN web and node HKDF-SHA-256 and SHA-256 hex agree', () => {
  for (let i = 0; i < 200; i++) {
    const secret = new Uint8Array(randomBytes(32));
    const salt = i % 2 ? `flurry/public-id/v${i}` : new Uint8Array(randomBytes(i % 70));
    const info = `feistel;bits=${i}`;
    const length = 1 + ((i * 37) % 400);
    const expected = hex(new Uint8Array(hkdfSync('sha256', secret, salt, info, length)));
    assert.equal(hex(web.hkdfSha256(secret, salt, info, length)), expected);
    assert.equal(hex(node.hkdfSha256(secret, salt, info, length)), expected);
    assert.equal(web.sha256Hex(['label', secret]), node.sha256Hex(['label', secret]));
  }
  assert.throws(() => web.hkdfSha256(new Uint8Array(32), '', '', 8161), /from 1 to 8160/);
});

test('GIVEN random bytes of every length up to 100 and malformed text THEN web base64url matches Buffer both ways', () => {
  for (let n = 0; n <= 100; n++) {
    const bytes = new Uint8Array(randomBytes(n));
    const text = node.toBase64url(bytes);
    assert.equal(web.toBase64url(bytes), text);
    assert.equal(hex(web.fromBase64url(text)), hex(bytes));
  }
  for (const odd of ['a', 'ab=', 'a b-c_d', 'QUJD', 'QUJD+/', 'é_w'])
    assert.equal(hex(web.fromBase64url(odd)), hex(node.fromBase64url(odd)), odd);
});

test('GIVEN each platform THEN random bytes vary, monotonic time does not go back, ASCII text round-trips, and only web refuses files', () => {
  for (const p of [node, web]) {
    const a = p.platformRandomFill(new Uint8Array(70_000));
    const b = p.platformRandomFill(new Uint8Array(70_000));
    assert.notEqual(hex(a.subarray(65_530)), hex(b.subarray(65_530)), 'past Web Crypto’s 65,536-byte limit too');
    const t0 = p.monotonicMs();
    p.platformSleep(2);
    assert.ok(p.monotonicMs() - t0 >= 1.5, 'sleep blocks where the thread may block (Node’s main thread)');
    const buf = p.asciiBuffer(8);
    buf.set([48, 49, 45, 97, 102, 48, 49, 50]);
    assert.equal(p.asciiText(buf, 1, 7), '1-af01');
  }
  assert.equal(web.CAN_BLOCK, true, 'Atomics.wait is allowed on Node’s main thread, so the probe says so');
  assert.throws(() => web.readTextFile('/etc/hostname'), /no file system/);
  assert.ok(node.readTextFile('/proc/self/stat').length > 0);
});
