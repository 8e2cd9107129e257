/**
 * Registry URLs are taken literally (issue 17, part 2): a part a driver would ignore (a fragment, an unknown or
 * repeated parameter, a query on a driver without parameters) is refused at open with FLURRY_E_REGISTRY_URL naming
 * that part, never printing a password. Parsing only: nothing here needs an engine (the checks come before any
 * connection; the port used, 9, is the loopback discard port and is never contacted).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkUrlParams, FlurryError } from '@flurry/core';
import { parseEtcdUrl, parseRedisUrl, parseRegistryUrl } from './url.js';
import { openRegistry } from './open-registry.js';
import { parseZooKeeperUrl } from './drivers/zookeeper-client.js';

const SECRET = 'hunter2';

function urlRefusal(e: unknown, names: RegExp): true {
  assert.ok(e instanceof FlurryError, String(e));
  assert.equal(e.code, 'FLURRY_E_REGISTRY_URL', e.message);
  assert.match(e.message, names);
  assert.ok(!e.message.includes(SECRET), e.message);
  assert.ok(!JSON.stringify(e.details).includes(SECRET), JSON.stringify(e.details));
  return true;
}

describe('registry URLs taken literally', () => {
  it('GIVEN checkUrlParams THEN an unknown parameter is named with the closest known one, a repeated one is refused', () => {
    const bad = (why: string): Error => new Error(why);
    assert.throws(
      () => checkUrlParams(new URLSearchParams('prefx=a'), ['prefix'], bad),
      /unknown parameter "prefx"; did you mean "prefix"\? \(known: prefix\)/,
    );
    assert.throws(() => checkUrlParams(new URLSearchParams('a=1'), [], bad), /unknown parameter "a" \(known: none\)/);
    assert.throws(
      () => checkUrlParams(new URLSearchParams('prefix=a&prefix=b'), ['prefix'], bad),
      /"prefix" is given twice/,
    );
    checkUrlParams(new URLSearchParams('prefix=a'), ['prefix'], bad);
  });

  it('GIVEN an engine URL with a fragment THEN parseRegistryUrl refuses it without printing the password', () => {
    for (const url of [
      `redis://:${SECRET}@127.0.0.1:9/0#x`,
      `etcd://u:${SECRET}@127.0.0.1:9/p#x`,
      'zookeeper://h:9/p#x',
    ]) {
      assert.throws(
        () => parseRegistryUrl(url),
        (e) => urlRefusal(e, /fragment/),
      );
    }
  });

  it('GIVEN Redis URLs with a misspelt, repeated or fragment part THEN each is refused naming it', () => {
    assert.throws(
      () => parseRedisUrl(`redis://:${SECRET}@127.0.0.1:9/0?prefx=ids`),
      (e) => urlRefusal(e, /unknown parameter "prefx"; did you mean "prefix"\?/),
    );
    assert.throws(
      () => parseRedisUrl(`redis://:${SECRET}@127.0.0.1:9/0?prefix=a&prefix=b`),
      (e) => urlRefusal(e, /"prefix" is given twice/),
    );
    assert.throws(
      () => parseRedisUrl(new URL('redis://127.0.0.1:9/0#frag')),
      (e) => urlRefusal(e, /fragment/),
    );
  });

  it('GIVEN etcd URLs with a query (etcd takes no parameters) THEN refused naming the parameter', () => {
    assert.throws(
      () => parseEtcdUrl(`etcd://app:${SECRET}@127.0.0.1:9/flurry?prefix=other`),
      (e) => urlRefusal(e, /unknown parameter "prefix" \(known: none\)/),
    );
    assert.throws(
      () => parseEtcdUrl(new URL('etcd://127.0.0.1:9/flurry#x')),
      (e) => urlRefusal(e, /fragment/),
    );
  });

  it('GIVEN ZooKeeper URLs with a fragment or a malformed %-escape THEN refused naming the part', () => {
    assert.throws(
      () => parseZooKeeperUrl('zookeeper://127.0.0.1:9/p#x', 'zookeeper'),
      (e) => urlRefusal(e, /fragment/),
    );
    assert.throws(
      () => parseZooKeeperUrl('zookeeper://127.0.0.1:9/p%zz', 'zookeeper'),
      (e) => urlRefusal(e, /malformed %-escape/),
    );
  });

  it('GIVEN openRegistry with a parameter the driver ignores THEN FLURRY_E_REGISTRY_URL at open, before connecting', async () => {
    const o = { connectTimeoutMs: 200 };
    await assert.rejects(openRegistry('zookeeper://127.0.0.1:9/flurry?name=orders', o), (e) =>
      urlRefusal(e, /unknown parameter "name" \(known: none\); a zookeeper:\/\/ registry takes no parameters/),
    );
    await assert.rejects(openRegistry('zookeeper+leaf://127.0.0.1:9/leaf?name=a&name=b', o), (e) =>
      urlRefusal(e, /"name" is given twice/),
    );
    await assert.rejects(openRegistry(`etcd://app:${SECRET}@127.0.0.1:9/flurry?tls=1`, o), (e) =>
      urlRefusal(e, /unknown parameter "tls"/),
    );
    await assert.rejects(openRegistry(`redis://:${SECRET}@127.0.0.1:9/0?db=3`, o), (e) =>
      urlRefusal(e, /unknown parameter "db"/),
    );
  });
});
