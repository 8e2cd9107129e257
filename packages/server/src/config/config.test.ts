import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FlurryError } from '@flurry/core';
import { KNOWN_ENV, serveHelp, unknownEnvWarnings } from './help.js';
import { loadServeConfig } from './load.js';
import { SETTINGS } from './settings.js';

function withFile<T>(content: string, body: (file: string) => T): T {
  const dir = mkdtempSync(path.join(tmpdir(), 'flurry-config-'));
  const file = path.join(dir, 'flurry.json');
  writeFileSync(file, content);
  try {
    return body(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function configError(fn: () => unknown): FlurryError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof FlurryError, `expected a FlurryError, got ${String(e)}`);
    return e;
  }
  assert.fail('expected an error');
}

test('GIVEN no flags, variables or file THEN the defaults are 127.0.0.1:8080, twitter, file:, cluster default', () => {
  const c = loadServeConfig([], {});
  assert.equal(c.host, '127.0.0.1');
  assert.equal(c.port, 8080);
  assert.equal(c.layout.name, 'twitter');
  assert.equal(c.registry, 'file:');
  assert.equal(c.cluster, 'default');
  assert.equal(c.maxBatch, 10_000);
  assert.equal(c.token, undefined);
  assert.equal(c.authHealth, false);
  assert.equal(c.allowRoot, false);
  assert.deepEqual({ ...c.node }, {});
});

test('GIVEN a setting in the file, the environment and a flag THEN the flag wins, then the environment, then the file', () => {
  withFile(JSON.stringify({ port: 7001, cluster: 'fromfile', maxBatch: 5, layout: 'leaf' }), (file) => {
    const all = loadServeConfig(['--config', file, '--port', '7003'], {
      FLURRY_PORT: '7002',
      FLURRY_CLUSTER: 'fromenv',
    });
    assert.equal(all.port, 7003);
    assert.equal(all.cluster, 'fromenv');
    assert.equal(all.maxBatch, 5);
    assert.equal(all.layout.name, 'leaf');
    const envOnly = loadServeConfig([], { FLURRY_CONFIG: file, FLURRY_PORT: '7002' });
    assert.equal(envOnly.port, 7002);
    assert.equal(envOnly.cluster, 'fromfile');
    assert.equal(envOnly.configFile, file);
  });
});

test('GIVEN bad values from each source THEN one coded error names the setting, the value, the source and what is allowed', () => {
  // A setting the offline commands share (layout, fields, epoch, unit, node, registry, cluster) is
  // refused with the code those commands give for the same mistake; the others with FLURRY_E_CONFIG.
  const cases: Array<[string[], Record<string, string>, string, string, string]> = [
    [['--port', 'abc'], {}, 'port', '--port', 'FLURRY_E_CONFIG'],
    [['--port', '70000'], {}, 'port', '--port', 'FLURRY_E_CONFIG'],
    [[], { FLURRY_PORT: '-1' }, 'port', 'FLURRY_PORT', 'FLURRY_E_CONFIG'],
    [['--layout', 'nope'], {}, 'layout', '--layout', 'FLURRY_E_LAYOUT_UNKNOWN_PRESET'],
    [['--max-batch', '0'], {}, 'maxBatch', '--max-batch', 'FLURRY_E_CONFIG'],
    [[], { FLURRY_AUTH_HEALTH: 'maybe' }, 'authHealth', 'FLURRY_AUTH_HEALTH', 'FLURRY_E_CONFIG'],
    [['--cluster', 'bad cluster!'], {}, 'cluster', '--cluster', 'FLURRY_E_REGISTRY_OPTION'],
    [['--token', 'short'], {}, 'token', '--token', 'FLURRY_E_CONFIG'],
    [['--log-level', 'loud'], {}, 'logLevel', '--log-level', 'FLURRY_E_CONFIG'],
    [['--unit', '5ms'], {}, 'unit', '--unit', 'FLURRY_E_LAYOUT_UNIT'],
    [['--fields', 'timestamp:37,server:20,sequence:16'], {}, 'fields', '--fields', 'FLURRY_E_LAYOUT_TOO_WIDE'],
    [['--node', 'worker=99'], {}, 'node', '--node', 'FLURRY_E_NODE_OUT_OF_RANGE'],
    [['--node', 'planet=1'], {}, 'node', '--node', 'FLURRY_E_NODE_OUT_OF_RANGE'],
    [['--lease-ttl-ms', '1000', '--lease-renew-ms', '2000'], {}, 'leaseRenewMs', '--lease-renew-ms', 'FLURRY_E_CONFIG'],
    [['--registry', 'not a url'], {}, 'registry', '--registry', 'FLURRY_E_REGISTRY_URL'],
    [[], { FLURRY_REGISTRY: 'gopher://127.0.0.1:1' }, 'registry', 'FLURRY_REGISTRY', 'FLURRY_E_REGISTRY_URL'],
    [['--lease-ttl-ms', '1000', '--lease-renew-ms', '450'], {}, 'leaseRenewMs', '--lease-renew-ms', 'FLURRY_E_CONFIG'],
    [
      ['--lease-ttl-ms', '1000', '--lease-margin-ms', '600'],
      {},
      'leaseMarginMs',
      '--lease-margin-ms',
      'FLURRY_E_CONFIG',
    ],
    [['--on-exhausted', 'spin'], {}, 'onExhausted', '--on-exhausted', 'FLURRY_E_CONFIG'],
    [['--sequence-start', 'one'], {}, 'sequenceStart', '--sequence-start', 'FLURRY_E_CONFIG'],
    [['--layout', 'leaf', '--fields', 'timestamp:41,sequence:12'], {}, 'fields', '--fields', 'FLURRY_E_USAGE'],
    [['--epoch', '2999-01-01T00:00:00Z'], {}, 'epoch', '--epoch', 'FLURRY_E_LAYOUT_EPOCH'],
  ];
  for (const [argv, env, setting, source, code] of cases) {
    const e = configError(() => loadServeConfig(argv, env));
    assert.equal(e.code, code, `${argv.join(' ')} ${JSON.stringify(env)}: ${e.message}`);
    assert.equal(e.details.setting, setting, e.message);
    assert.match(e.message, new RegExp(`invalid setting ${setting}:`));
    assert.ok(e.message.includes(source), `message names the source ${source}: ${e.message}`);
    assert.match(e.message, /allowed: /);
    assert.doesNotMatch(e.message, /\.\./, `no doubled period when an embedded message ends with one: ${e.message}`);
    assert.doesNotMatch(e.message, /FLURRY_E_/, `no other error's code inside the message: ${e.message}`);
    assert.equal(e.message.match(/allowed: /g)?.length, 1, `one sentence of what is allowed: ${e.message}`);
  }
});

test('GIVEN lease timings the registry refuses THEN the message gives the range that applies, not the registry option or its code', () => {
  const e = configError(() => loadServeConfig(['--lease-ttl-ms', '1000', '--lease-renew-ms', '900'], {}));
  assert.equal(e.code, 'FLURRY_E_CONFIG');
  assert.equal(e.details.cause, 'FLURRY_E_REGISTRY_OPTION');
  assert.match(
    e.message,
    /"900" \(from --lease-renew-ms\): with these lease settings it must be from 10 to 400 ms; allowed: /,
  );
  assert.doesNotMatch(e.message, /renewIntervalMs|FLURRY_E_REGISTRY_OPTION/);
});

test('GIVEN --layout from the environment and fields from the file THEN FLURRY_E_USAGE names both sources', () => {
  withFile('{"fields": "timestamp:41,sequence:12"}', (f) => {
    const e = configError(() => loadServeConfig(['--config', f], { FLURRY_LAYOUT: 'leaf' }));
    assert.equal(e.code, 'FLURRY_E_USAGE');
    assert.match(e.message, /layout is set too \("leaf" from FLURRY_LAYOUT\)/);
    assert.ok(e.message.includes(f), e.message);
  });
});

test('GIVEN a registry URL with a password in a bad setting THEN the error shows the URL without the password', () => {
  for (const url of ['redis://:hunter2@127.0.0.1:99999/0', 'gopher://u:hunter2@127.0.0.1:1', 'etcd://user:hunter2@']) {
    const e = configError(() => loadServeConfig(['--registry', url], {}));
    assert.equal(e.code, 'FLURRY_E_REGISTRY_URL', url);
    assert.ok(!e.message.includes('hunter2'), `password leaked in: ${e.message}`);
    assert.ok(
      !JSON.stringify(e.details).includes('hunter2'),
      `password leaked in details: ${JSON.stringify(e.details)}`,
    );
    assert.match(e.message, /\*\*\*/);
  }
});

test('GIVEN a too-wide --fields layout THEN the error carries the core code and how far it overflows', () => {
  const e = configError(() => loadServeConfig(['--fields', 'timestamp:37,server:20,sequence:16'], {}));
  assert.equal(e.code, 'FLURRY_E_LAYOUT_TOO_WIDE');
  assert.equal(e.details.cause, 'FLURRY_E_LAYOUT_TOO_WIDE');
  assert.match(e.message, /73|9 bits/);
});

test('GIVEN a token with a bad form THEN the error does not print the token', () => {
  const e = configError(() => loadServeConfig([], { FLURRY_TOKEN: 'secret value' }));
  assert.equal(e.details.setting, 'token');
  assert.ok(!e.message.includes('secret value'));
  assert.match(e.message, /\(hidden\)/);
});

test('GIVEN a config file that is unreadable, not JSON, not an object or has an unknown key THEN FLURRY_E_CONFIG says so', () => {
  assert.match(
    configError(() => loadServeConfig(['--config', '/nonexistent/flurry.json'], {})).message,
    /cannot read the config file/,
  );
  withFile('{ port: 1 ', (f) =>
    assert.match(configError(() => loadServeConfig(['--config', f], {})).message, /not valid JSON/),
  );
  withFile('[1]', (f) =>
    assert.match(configError(() => loadServeConfig(['--config', f], {})).message, /one JSON object/),
  );
  withFile('{"prot": 1}', (f) => {
    const e = configError(() => loadServeConfig(['--config', f], {}));
    assert.match(e.message, /unknown key "prot"/);
    assert.match(e.message, /port/);
  });
  withFile('{"port": "80a"}', (f) => {
    const e = configError(() => loadServeConfig(['--config', f], {}));
    assert.equal(e.details.setting, 'port');
    assert.ok(e.message.includes(f));
  });
});

test('GIVEN an unknown flag or a positional THEN FLURRY_E_USAGE', () => {
  assert.equal(configError(() => loadServeConfig(['--prot', '1'], {})).code, 'FLURRY_E_USAGE');
  assert.equal(configError(() => loadServeConfig(['extra'], {})).code, 'FLURRY_E_USAGE');
  assert.equal(configError(() => loadServeConfig(['--port'], {})).code, 'FLURRY_E_USAGE');
});

test('GIVEN booleans in every form THEN they parse; --fields with --epoch builds the custom layout; --node pins', () => {
  assert.equal(loadServeConfig(['--auth-health'], {}).authHealth, true);
  assert.equal(loadServeConfig([], { FLURRY_AUTH_HEALTH: 'yes' }).authHealth, true);
  assert.equal(loadServeConfig([], { FLURRY_ALLOW_ROOT: '0' }).allowRoot, false);
  withFile('{"allowRoot": true}', (f) => assert.equal(loadServeConfig(['--config', f], {}).allowRoot, true));
  const c = loadServeConfig(
    ['--fields', 'timestamp:41,machine:10,sequence:12', '--epoch', '2020-01-01T00:00:00Z', '--node', 'machine=5'],
    {},
  );
  assert.equal(c.layout.epochMs, Date.UTC(2020, 0, 1));
  assert.deepEqual(
    c.layout.nodeFields.map((f) => f.name),
    ['machine'],
  );
  assert.deepEqual({ ...c.node }, { machine: 5 });
});

test('GIVEN serve --help text THEN it lists every setting with its flag, variable and a Default line', () => {
  const help = serveHelp();
  for (const s of SETTINGS) {
    assert.ok(help.includes(`--${s.flag}`), s.flag);
    assert.ok(help.includes(s.env), s.env);
  }
  assert.equal(help.match(/Default: /g)?.length, SETTINGS.length + 1);
});

test('GIVEN docs/operations.md THEN its settings table has one row per setting with its flag, variable and config key, and no other', () => {
  const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../../..');
  const doc = readFileSync(path.join(root, 'docs', 'operations.md'), 'utf8');
  const rows = doc.split('\n').filter((l) => /^\| `--[a-z-]+` \| `FLURRY_[A-Z_]+` \|/.test(l));
  const documented = rows.map((l) =>
    l
      .split('|')
      .slice(1, 4)
      .map((c) => c.trim()),
  );
  const expected = [
    ...SETTINGS.map((s) => [`\`--${s.flag}\``, `\`${s.env}\``, `\`${s.key}\``]),
    ['`--config`', '`FLURRY_CONFIG`', '–'],
  ];
  assert.deepEqual(documented, expected);
  // docs/service-api.md links there instead of keeping a second list.
  const api = readFileSync(path.join(root, 'docs', 'service-api.md'), 'utf8');
  assert.match(api, /\(operations\.md#settings\)/);
  assert.ok(!SETTINGS.some((s) => api.includes(`config key \`${s.key}\``)), 'no settings list in service-api.md');
});

test('GIVEN misspelt FLURRY_* variables THEN each is named with the closest known variable; known and other variables give nothing', () => {
  const ws = unknownEnvWarnings({
    FLURRY_REGSITRY: 'redis://r:6379/0',
    FLURRY_PROT: '1',
    flurry_token: 'x',
    FLURRY_REGISTRY: 'file:',
    FLURRY_CONFIG: '/f.json',
    PATH: '/bin',
    FLURRYX: '1',
  });
  assert.deepEqual(
    ws.map((w) => [w.variable, w.suggestion]),
    [
      ['FLURRY_PROT', 'FLURRY_PORT'],
      ['FLURRY_REGSITRY', 'FLURRY_REGISTRY'],
      ['flurry_token', 'FLURRY_TOKEN'],
    ],
  );
  assert.equal(ws[1].message, 'FLURRY_REGSITRY is not a flurry setting and is ignored; did you mean FLURRY_REGISTRY?');
  const far = unknownEnvWarnings({ FLURRY_SOMETHING_ELSE_ENTIRELY: '1' });
  assert.equal(far.length, 1);
  assert.equal(far[0].suggestion, undefined, 'nothing close: no guess');
  assert.match(
    far[0].message,
    /FLURRY_SOMETHING_ELSE_ENTIRELY is not a flurry setting and is ignored; flurry serve --help lists/,
  );
});

test('GIVEN every FLURRY_* variable the docs and the code read THEN none is reported as unknown', () => {
  const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../../..');
  const names = new Set<string>();
  const texts = [
    'README.md',
    ...['operations.md', 'service-api.md', 'public-ids.md', 'node-ids.md', 'api.md'].map((f) => path.join('docs', f)),
  ].map((f) => readFileSync(path.join(root, f), 'utf8'));
  // Variables read by the library code outside the settings table (the docs' warning example excepted).
  texts.push(
    readFileSync(path.join(root, 'packages/core/src/public/keys.ts'), 'utf8'),
    readFileSync(path.join(root, 'packages/server/src/cli/commands/next.ts'), 'utf8'),
  );
  for (const t of texts)
    for (const m of t.matchAll(/\bFLURRY_[A-Z][A-Z0-9_]*[A-Z0-9]\b(?! is not a flurry setting)/g))
      if (!m[0].startsWith('FLURRY_E_')) names.add(m[0]);
  assert.ok(names.size >= SETTINGS.length, `found ${names.size} names`);
  const env = Object.fromEntries([...names].map((n) => [n, '1']));
  assert.deepEqual(unknownEnvWarnings(env), []);
  assert.deepEqual(unknownEnvWarnings(Object.fromEntries(KNOWN_ENV.map((n) => [n, '1']))), []);
});

test('GIVEN the registry from each source or none THEN registrySource says where it came from', () => {
  assert.equal(loadServeConfig([], {}).registrySource, 'default');
  assert.equal(loadServeConfig([], { FLURRY_REGISTRY: '' }).registrySource, 'default', 'empty is unset');
  assert.equal(loadServeConfig([], { FLURRY_REGISTRY: 'file:' }).registrySource, 'env');
  assert.equal(loadServeConfig(['--registry', 'file:'], {}).registrySource, 'flag');
  withFile('{"registry": "file:"}', (f) => assert.equal(loadServeConfig(['--config', f], {}).registrySource, 'file'));
});
