/**
 * Every public entry point of core that takes an options object refuses a misspelt key with
 * FLURRY_E_UNKNOWN_OPTION naming the closest valid key (issue 17, part 1).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from './clock.js';
import { FlurryError } from './errors.js';
import { Generator } from './generator/generator.js';
import { SharedGenerator } from './generator/shared-generator.js';
import { Layout } from './layout/layout.js';
import { codecs, decodeId, encodeId } from './codecs/formats.js';
import { jsonReviver } from './codecs/json.js';
import { PublicIdCodec } from './public/cipher.js';
import { generateKey } from './public/keys.js';
import { optionNames } from './known-options.js';

function refuses(fn: () => unknown, option: string, suggestion: string | undefined, where: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof FlurryError, String(e));
    assert.equal(e.code, 'FLURRY_E_UNKNOWN_OPTION', e.message);
    assert.equal(e.details.option, option);
    assert.equal(e.details.suggestion, suggestion);
    if (suggestion !== undefined) assert.ok(e.message.includes(`did you mean "${suggestion}"?`), e.message);
    assert.match(e.message, where);
    return true;
  });
}

const clock = new ManualClock(Date.UTC(2026, 0, 1));
let worker = 0;
const node = (): Record<string, number> => ({ datacenter: 3, worker: worker++ % 32 });

describe('strict options in core', () => {
  it('GIVEN new Generator with onExhaust THEN FLURRY_E_UNKNOWN_OPTION suggesting onExhausted', () => {
    refuses(
      () => new Generator({ layout: 'twitter', node: node(), clock, onExhaust: 'borrow' } as never),
      'onExhaust',
      'onExhausted',
      /^Generator options/,
    );
  });

  it('GIVEN new Generator with a correct key set THEN it is accepted (the check does not refuse valid options)', () => {
    const g = new Generator({ layout: 'twitter', node: node(), clock, onExhausted: 'borrow', sequenceStart: 'zero' });
    assert.equal(typeof g.next(), 'bigint');
    g.close();
  });

  it('GIVEN new SharedGenerator with maxBorowMs THEN FLURRY_E_UNKNOWN_OPTION suggesting maxBorrowMs', () => {
    refuses(
      () => new SharedGenerator({ layout: 'twitter', node: node(), clock, maxBorowMs: 5 } as never),
      'maxBorowMs',
      'maxBorrowMs',
      /^SharedGenerator options/,
    );
  });

  it('GIVEN SharedGenerator.fromState with clok THEN FLURRY_E_UNKNOWN_OPTION suggesting clock', () => {
    const shared = new SharedGenerator({ layout: 'twitter', node: node(), clock });
    try {
      refuses(() => SharedGenerator.fromState(shared.state, { clok: clock } as never), 'clok', 'clock', /fromState/);
    } finally {
      shared.close();
    }
  });

  it('GIVEN Layout.from with a spec key epoc THEN FLURRY_E_UNKNOWN_OPTION suggesting epoch', () => {
    refuses(
      () =>
        Layout.from({
          fields: [
            { name: 'timestamp', bits: 41 },
            { name: 'sequence', bits: 22 },
          ],
          epoch: 0,
          epoc: 1288834974657,
        } as never),
      'epoc',
      'epoch',
      /^The layout spec/,
    );
  });

  it('GIVEN Layout.from with a field { name, bit } THEN FLURRY_E_UNKNOWN_OPTION suggesting bits', () => {
    refuses(
      () =>
        Layout.from({
          fields: [{ name: 'timestamp', bits: 41 }, { name: 'sequence', bit: 22 } as never],
          epoch: 0,
        }),
      'bit',
      'bits',
      /^Layout field 2/,
    );
  });

  it('GIVEN Layout.parse with unti THEN FLURRY_E_UNKNOWN_OPTION suggesting unit', () => {
    refuses(
      () => Layout.parse('timestamp:41,sequence:22', { unti: '10ms' } as never),
      'unti',
      'unit',
      /^Layout.parse options/,
    );
  });

  it('GIVEN encodeId, decodeId and a codec with fixd THEN FLURRY_E_UNKNOWN_OPTION suggesting fixed', () => {
    refuses(() => encodeId(42n, 'base62', { fixd: true } as never), 'fixd', 'fixed', /^base62 encode options/);
    refuses(() => decodeId('G', 'base58', { bts: 63 } as never), 'bts', 'bits', /^base58 decode options/);
    refuses(() => codecs.base32.encode(1n, { Fixed: true } as never), 'Fixed', 'fixed', /^base32 encode/);
  });

  it('GIVEN jsonReviver with bit THEN FLURRY_E_UNKNOWN_OPTION suggesting bits', () => {
    refuses(() => jsonReviver('id', { bit: 53 } as never), 'bit', 'bits', /^jsonReviver options/);
  });

  it('GIVEN PublicIdCodec.create with checksumm THEN FLURRY_E_UNKNOWN_OPTION suggesting checksum', () => {
    refuses(
      () => PublicIdCodec.create({ keys: generateKey('a'), checksumm: false } as never),
      'checksumm',
      'checksum',
      /^PublicIdCodec options/,
    );
  });

  it('GIVEN optionNames THEN it lists every key of the literal once, in order', () => {
    assert.deepEqual(optionNames<{ a?: number; b: string }>({ a: true, b: true }), ['a', 'b']);
  });
});
