// UUIDv7 forms: RFC 9562's test vector, coded refusals, round trips of every form under random widths, order
// of text = bytes = numbers, and npm's `uuid` and `ulid` packages as independent readers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parse as uuidParse, stringify as uuidStringify, validate, version } from 'uuid';
import { decodeTime, isValid as ulidValid } from 'ulid';
import { ManualClock } from '../clock.js';
import { ErrorCode, FlurryError } from '../errors.js';
import { UuidFormat } from './format.js';
import { UUID_FORMS, decodeUuid, encodeUuid, isUuidV7, type UuidForm } from './forms.js';
import { UuidGenerator } from './generator.js';

const code = (c: string, re?: RegExp) => (e: unknown) =>
  e instanceof FlurryError && e.code === c && (re === undefined || re.test(e.message));
const VECTOR = '017F22E2-79B0-7CC3-98C4-DC0C0C07398F';

test('GIVEN RFC 9562 test vector 017F22E2-79B0-7CC3-98C4-DC0C0C07398F THEN it decodes to 2022-02-22T19:22:22.000Z, version 7, RFC variant, in every form', () => {
  const d = decodeUuid(VECTOR);
  assert.equal(d.timestamp, '2022-02-22T19:22:22.000Z');
  assert.equal(d.unixMs, Date.UTC(2022, 1, 22, 19, 22, 22));
  assert.equal(d.version, 7);
  assert.equal(d.variant, 'RFC 9562');
  assert.equal(d.uuid, VECTOR.toLowerCase());
  for (const form of UUID_FORMS) {
    const x = encodeUuid(VECTOR, form as 'canonical');
    const back = decodeUuid(x, form === 'base58' || form === 'base62' ? { form } : {});
    assert.equal(back.uuid, d.uuid, form);
    assert.equal(back.timestamp, d.timestamp, form);
  }
  assert.equal(decodeUuid(`urn:uuid:${VECTOR}`).uuid, d.uuid);
  assert.equal(decodeUuid(encodeUuid(VECTOR, 'base32').toLowerCase()).uuid, d.uuid, 'base32 reads either case');
  assert.equal(decodeTime(encodeUuid(VECTOR, 'base32')), d.unixMs, "ulid's decodeTime reads the same time");
});

test('GIVEN input that is not a v7 UUID THEN decodeUuid throws the coded error naming what is wrong', () => {
  const v4 = '017f22e2-79b0-4cc3-98c4-dc0c0c07398f';
  assert.throws(() => decodeUuid(v4), code(ErrorCode.UUID_VERSION, /version 4/));
  assert.throws(() => decodeUuid(crypto.randomUUID()), code(ErrorCode.UUID_VERSION, /version 4/));
  assert.throws(() => decodeUuid('00000000-0000-0000-0000-000000000000'), code(ErrorCode.UUID_VERSION, /version 0/));
  assert.throws(() => decodeUuid('017f22e2-79b0-7cc3-c8c4-dc0c0c07398f'), code(ErrorCode.UUID_VARIANT, /Microsoft/));
  assert.throws(() => decodeUuid('017f22e2-79b0-7cc3-58c4-dc0c0c07398f'), code(ErrorCode.UUID_VARIANT, /NCS/));
  assert.throws(() => decodeUuid('017f22e2-79b0-7cc3-f8c4-dc0c0c07398f'), code(ErrorCode.UUID_VARIANT, /reserved/));
  assert.throws(() => decodeUuid(VECTOR.slice(1)), code(ErrorCode.UUID_MALFORMED, /35 characters/));
  assert.throws(() => decodeUuid(''), code(ErrorCode.UUID_MALFORMED, /0 characters/));
  assert.throws(() => decodeUuid(`${VECTOR.slice(0, 35)}g`), code(ErrorCode.UUID_MALFORMED, /"g" is not a hex digit/));
  assert.throws(
    () => decodeUuid(VECTOR.replace(/-/g, '+').padEnd(36, '0')),
    code(ErrorCode.UUID_MALFORMED, /character 9/),
  );
  assert.throws(() => decodeUuid('01FWHE4YDGFK1SHH6W1G60EECU'), code(ErrorCode.UUID_MALFORMED, /character 26, "U"/));
  assert.throws(() => decodeUuid('81FWHE4YDGFK1SHH6W1G60EECF'), code(ErrorCode.UUID_MALFORMED, /128 bits/));
  assert.throws(() => decodeUuid('1BihbxwwQ4NZZpKRH9JDCz'), code(ErrorCode.UUID_MALFORMED, /22 with \{ form \}/));
  assert.throws(() => decodeUuid('1BihbxwwQ4NZZpKRH9JDC0', { form: 'base58' }), code(ErrorCode.UUID_MALFORMED, /"0"/));
  assert.throws(() => decodeUuid(new Uint8Array(15)), code(ErrorCode.UUID_MALFORMED, /15 bytes/));
  assert.throws(() => decodeUuid(-1n), code(ErrorCode.UUID_MALFORMED, /2\^128/));
  assert.throws(() => decodeUuid(1n << 128n), code(ErrorCode.UUID_MALFORMED, /2\^128/));
  assert.throws(() => decodeUuid(42 as unknown as string), code(ErrorCode.UUID_MALFORMED, /type number/));
  assert.throws(() => encodeUuid(VECTOR, 'base64' as 'hex'), code(ErrorCode.CODEC_UNKNOWN, /base64/));
  assert.equal(isUuidV7(VECTOR), true);
  assert.equal(isUuidV7(v4), false);
});

test('GIVEN random node and sequence widths, nodes, times and sequences THEN every form round-trips to the same fields, and text order = byte order = bigint order', () => {
  const widths = fc
    .tuple(fc.integer({ min: 1, max: 48 }), fc.integer({ min: 0, max: 30 }))
    .map(([nodeBits, ext]) => UuidFormat.from({ nodeBits, sequenceBits: 12 + Math.min(ext, 62 - nodeBits) }));
  // Generators of one node in a process continue after the last millisecond of the one before
  // (node-claims.ts), so each run starts after the previous run's time.
  let after = 0;
  fc.assert(
    fc.property(widths, fc.integer({ min: 0, max: 2 ** 47 }), fc.nat(), fc.nat(), (format, t, n, s) => {
      const ms = Math.max(t, after + 1);
      after = ms;
      const node = n % (format.maxNode + 1);
      const clock = new ManualClock(ms);
      const gen = new UuidGenerator({
        node,
        nodeBits: format.nodeBits,
        sequenceBits: format.sequenceBits,
        clock,
        onExhausted: 'borrow',
      });
      try {
        const made: bigint[] = gen.batch(1 + (s % 5), 'bigint');
        const opts = { nodeBits: format.nodeBits, sequenceBits: format.sequenceBits };
        made.forEach((u, i) => {
          const d = decodeUuid(u, opts);
          assert.equal(d.node, node);
          assert.equal(d.unixMs, ms);
          assert.equal(d.sequence, i);
          for (const form of UUID_FORMS) {
            const x = encodeUuid(u, form as 'canonical') as string | Uint8Array | bigint;
            const f = form === 'base58' || form === 'base62' ? { ...opts, form } : opts;
            assert.deepEqual(decodeUuid(x, f), d, form);
          }
        });
      } finally {
        gen.close();
      }
    }),
    { numRuns: 300 },
  );
  // Order: any two v7 UUIDs compare the same as bigints, as bytes and as every text form.
  const v7 = fc
    .bigInt({ min: 0n, max: (1n << 128n) - 1n })
    .map((v) => (v & ~(0xfn << 76n) & ~(3n << 62n)) | (7n << 76n) | (2n << 62n));
  fc.assert(
    fc.property(v7, v7, (a, b) => {
      const want = Math.sign(Number(a - b));
      const bytes = (x: bigint) => encodeUuid(x, 'bytes');
      assert.equal(Math.sign(Buffer.compare(bytes(a), bytes(b))), want);
      for (const form of ['canonical', 'hex', 'base32', 'base58', 'base62'] as const) {
        const ta = encodeUuid(a, form);
        const tb = encodeUuid(b, form);
        assert.equal(Math.sign(ta < tb ? -1 : ta > tb ? 1 : 0), want, form);
      }
    }),
    { numRuns: 2000 },
  );
});

test("GIVEN UUIDs printed in every form THEN npm's uuid package validates each (converted by its own or plain code) as version 7, and ulid reads the base32 text", () => {
  const gen = new UuidGenerator({ node: 4242 });
  try {
    const forms: UuidForm[] = [...UUID_FORMS];
    for (let i = 0; i < 2000; i++) {
      const form = forms[i % forms.length];
      const x = gen.nextAs(form as 'canonical') as string | Uint8Array | bigint;
      let canonical: string;
      if (x instanceof Uint8Array) canonical = uuidStringify(x);
      else if (typeof x === 'bigint') canonical = dashed(x.toString(16).padStart(32, '0'));
      else if (form === 'hex') canonical = dashed(x);
      else if (form === 'canonical') canonical = x;
      else {
        if (form === 'base32') {
          assert.ok(ulidValid(x), x);
          assert.equal(decodeTime(x), decodeUuid(x).unixMs);
        }
        canonical = decodeUuid(x, form === 'base32' ? {} : { form: form as 'base58' | 'base62' }).uuid;
      }
      assert.ok(validate(canonical), `${form}: ${canonical}`);
      assert.equal(version(canonical), 7, form);
      assert.deepEqual(uuidParse(canonical), encodeUuid(canonical, 'bytes'));
    }
  } finally {
    gen.close();
  }
});

function dashed(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
