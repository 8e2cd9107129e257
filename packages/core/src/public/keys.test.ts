import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { inspect, format } from 'node:util';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expectCode } from '../test-support.js';
import { BASE58_ALPHABET } from '../codecs/formats.js';
import { PublicIdKey, generateKey, loadKeysFromEnv, loadKeysFromFile, parseKeys } from './keys.js';

const secretOf = (text: string): string => text.slice(6);

describe('public: keys', () => {
  it('GIVEN generateKey THEN it prints fk1_<keyId>_<43 base64url chars> that parses back to the same key', () => {
    const ids = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const text = generateKey();
      assert.match(text, /^fk1_[1-9A-HJ-NP-Za-km-z]_[A-Za-z0-9_-]{43}$/);
      const key = PublicIdKey.parse(text);
      assert.equal(key.export(), text);
      assert.equal(key.secretBytes().length, 32);
      ids.add(key.id);
    }
    assert.ok(ids.size > 20, 'random key IDs vary');
    assert.equal(PublicIdKey.parse(generateKey('B')).id, 'B');
    assert.notEqual(secretOf(generateKey('B')), secretOf(generateKey('B')));
    assert.equal(PublicIdKey.parse(`  ${generateKey('C')}\n`).id, 'C');
  });

  it('GIVEN a key object THEN toString, JSON, util.inspect, console formatting and enumeration never reveal the secret', () => {
    const text = generateKey('A');
    const key = PublicIdKey.parse(text);
    const secret = secretOf(text);
    const views = [
      String(key),
      // eslint-disable-next-line @typescript-eslint/restrict-template-expressions -- template coercion of the key is what is under test
      `${key}`,
      JSON.stringify(key),
      JSON.stringify({ nested: [key] }),
      inspect(key),
      inspect({ key }, { depth: 10 }),
      inspect(key, { showHidden: true, customInspect: false, depth: 10 }),
      format('%s %o %O %j', key, key, key, key),
      Object.keys(key).join(','),
      JSON.stringify(Object.entries(key)),
    ];
    for (const v of views) {
      assert.ok(!v.includes(secret), `leaked in: ${v}`);
      assert.ok(!v.includes(Buffer.from(key.secretBytes()).toString('hex')), `leaked hex in: ${v}`);
    }
    assert.equal(String(key), `PublicIdKey(A, fingerprint ${key.fingerprint}, secret redacted)`);
    assert.deepEqual(JSON.parse(JSON.stringify(key)), { id: 'A', fingerprint: key.fingerprint, secret: '[redacted]' });
    assert.match(key.fingerprint, /^[0-9a-f]{12}$/);
    // Computed when first read, and always the same: SHA-256 of the label and the secret.
    const expected = createHash('sha256')
      .update('flurry/public-key-fingerprint/v1')
      .update(key.secretBytes())
      .digest('hex')
      .slice(0, 12);
    assert.equal(key.fingerprint, expected);
    assert.equal(PublicIdKey.parse(key.export()).fingerprint, expected);
    assert.throws(() => {
      (key as unknown as { id: string }).id = 'B';
    }, TypeError);
  });

  it('GIVEN malformed keys THEN FLURRY_E_PUBLIC_KEY_INVALID without echoing the secret', () => {
    const good = generateKey('A');
    const secret = secretOf(good);
    const bad = [
      good.slice(0, -1),
      `${good}x`,
      good.replace('fk1_', 'fk2_'),
      good.replace('_A_', '_0_'), // 0 is not base58
      good.replace('_A_', '_l_'),
      `${good.slice(0, -1)}!`,
      `fk1_A_${secret.slice(0, -1)}B`, // non-canonical: the last character carries padding bits
      '',
      'secret',
    ];
    for (const text of bad) {
      const err = expectCode(() => PublicIdKey.parse(text), 'FLURRY_E_PUBLIC_KEY_INVALID', /fk1_|32 bytes/);
      assert.ok(!err.message.includes(secret.slice(0, 20)), err.message);
      assert.ok(!JSON.stringify(err).includes(secret.slice(0, 20)));
    }
    expectCode(() => PublicIdKey.parse(42 as unknown as string), 'FLURRY_E_PUBLIC_KEY_INVALID');
    for (const id of ['0', 'O', 'I', 'l', 'AB', '', '-'])
      expectCode(() => generateKey(id), 'FLURRY_E_PUBLIC_KEY_INVALID', /base58/);
    for (const id of BASE58_ALPHABET) assert.equal(PublicIdKey.generate(id).id, id);
  });

  it('GIVEN keyrings as comma, space or newline lists, arrays and objects THEN the order is kept, current first', () => {
    const [a, b, c] = ['A', 'B', 'C'].map((id) => generateKey(id));
    assert.deepEqual(
      parseKeys(`${c},${b}, ${a}`).map((k) => k.id),
      ['C', 'B', 'A'],
    );
    assert.deepEqual(
      parseKeys(`# current\n${b}\n\n# old\n${a}\n`).map((k) => k.id),
      ['B', 'A'],
    );
    assert.deepEqual(
      parseKeys([a, `${b},${c}`]).map((k) => k.id),
      ['A', 'B', 'C'],
    );
    const keyObj = PublicIdKey.parse(c);
    assert.equal(parseKeys([keyObj, a])[0], keyObj);
    assert.equal(parseKeys(keyObj)[0], keyObj);
  });

  it('GIVEN an empty keyring, duplicate key IDs or a bad entry THEN FLURRY_E_PUBLIC_KEY_INVALID names the entry', () => {
    expectCode(() => parseKeys(''), 'FLURRY_E_PUBLIC_KEY_INVALID', /empty/);
    expectCode(() => parseKeys([]), 'FLURRY_E_PUBLIC_KEY_INVALID', /empty/);
    expectCode(() => parseKeys(' , \n'), 'FLURRY_E_PUBLIC_KEY_INVALID', /empty/);
    expectCode(
      () => parseKeys(`${generateKey('A')},${generateKey('A')}`),
      'FLURRY_E_PUBLIC_KEY_INVALID',
      /entries 1 and 2 share the key ID "A"/,
    );
    const err = expectCode(
      () => parseKeys(`${generateKey('A')},fk1_B_short`),
      'FLURRY_E_PUBLIC_KEY_INVALID',
      /Keyring entry 2/,
    );
    assert.equal(err.details.entry, 2);
    expectCode(() => parseKeys([42 as unknown as string]), 'FLURRY_E_PUBLIC_KEY_INVALID');
  });

  it('GIVEN FLURRY_PUBLIC_KEY or FLURRY_PUBLIC_KEY_FILE THEN loadKeysFromEnv reads the keyring; neither gives []', () => {
    const a = generateKey('A');
    const b = generateKey('B');
    assert.deepEqual(loadKeysFromEnv({}), []);
    assert.deepEqual(loadKeysFromEnv({ FLURRY_PUBLIC_KEY: '  ' }), []);
    assert.deepEqual(
      loadKeysFromEnv({ FLURRY_PUBLIC_KEY: `${b},${a}` }).map((k) => k.id),
      ['B', 'A'],
    );
    const dir = mkdtempSync(path.join(tmpdir(), 'flurry-keys-'));
    try {
      const file = path.join(dir, 'keys');
      writeFileSync(file, `# rotated 2024-05\n${b}\n${a}\n`, { mode: 0o600 });
      assert.deepEqual(
        loadKeysFromEnv({ FLURRY_PUBLIC_KEY_FILE: file }).map((k) => k.id),
        ['B', 'A'],
      );
      assert.deepEqual(
        loadKeysFromFile(file).map((k) => k.id),
        ['B', 'A'],
      );
      assert.deepEqual(
        loadKeysFromEnv({ FLURRY_PUBLIC_KEY: a, FLURRY_PUBLIC_KEY_FILE: file }).map((k) => k.id),
        ['A'],
        'the inline variable wins',
      );
      expectCode(
        () => loadKeysFromEnv({ FLURRY_PUBLIC_KEY_FILE: path.join(dir, 'missing') }),
        'FLURRY_E_PUBLIC_KEY_INVALID',
        /ENOENT/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expectCode(() => loadKeysFromEnv({ FLURRY_PUBLIC_KEY: 'nope' }), 'FLURRY_E_PUBLIC_KEY_INVALID');
  });
});
