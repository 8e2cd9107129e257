// Scenario 6, service under load and abuse: three `flurry serve` processes share one
// registry; a client process (@flurry/client, failing over between them), a raw HTTP
// loader and a gRPC StreamIds + memcached `get` client (one loop per server and protocol,
// reconnecting) draw IDs while a fuzzer throws malformed requests at all three; one server is
// SIGKILLed a third of the way in and started again at two thirds. Checked: no 5xx other
// than 503 (with Retry-After) and no stack trace in any answer, no server crash, every
// client call answered with a valid ID (none lost), the gRPC and memcached clients of the
// killed server saw UNAVAILABLE / a closed connection and got IDs again after the restart,
// no ID repeated across everything any caller received, each server's own stream increasing.
import path from 'node:path';
import http from 'node:http';
import { analyze } from '../lib/analyze.mjs';
import { Child, holderKill, spawnNode, startListening } from '../lib/procs.mjs';
import { perBackend } from '../lib/scenario.mjs';
import { keepLogs, lastMsg } from '../lib/generators.mjs';
import { childScript, clusterName, dist, pollUntil, root, sleep, tempDir } from '../lib/util.mjs';

/**
 * The scenario's one-line description, printed when it starts.
 * @example console.log(title);
 */
export const title = 'three flurry serve processes behind the client under load, fuzz and a SIGKILL';

function get(port, p) {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: p, timeout: 1_000, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(0));
  });
}

/**
 * Runs the scenario; `add(row)` receives each report row as soon as it exists, so a
 * scenario that crashes halfway still reports what it did.
 * @example await run({ P: profiles.short, backends: ALL_BACKENDS, engines, log, Row }, (row) => rows.push(row));
 */
export async function run(ctx, add) {
  const { Layout } = await import(dist.core);
  const { freePort } = await import(dist.testing);
  const layout = Layout.from('twitter');
  const { durationMs, servers: n, fuzzRequests, backends = ['file', 'redis'] } = ctx.P.service;
  const lease = ctx.P.lease;
  const list = ctx.backends.filter((b) => backends.includes(b));
  await perBackend(
    ctx,
    add,
    'service',
    async (backend, row, gens) => {
      const dir = tempDir('service');
      const cluster = clusterName('service');
      const url = await ctx.engines.url(backend);
      const ports = [];
      const grpcPorts = [];
      const mcPorts = [];
      const pick = async (i) => {
        ports[i] = await freePort();
        grpcPorts[i] = await freePort();
        mcPorts[i] = await freePort();
      };
      for (let i = 0; i < n; i++) await pick(i);
      const env = { ...process.env, XDG_STATE_HOME: path.join(dir, 'state') };
      const servers = [];
      const startServer = (i, gen = 0, attempt = 1) => {
        const registry = backend === 'zookeeper+leaf' ? `${url}?address=127.0.0.1:${ports[i]}` : url;
        const c = new Child(
          `server-${i}.${gen}${attempt > 1 ? `-try${attempt}` : ''}`,
          process.execPath,
          [
            dist.serverCli,
            'serve',
            '--port',
            String(ports[i]),
            '--grpc-port',
            String(grpcPorts[i]),
            '--memcached-port',
            String(mcPorts[i]),
            '--registry',
            registry,
            '--cluster',
            cluster,
            '--allow-root',
            '--lease-ttl-ms',
            String(lease.ttlMs),
            '--log-level',
            'warn',
          ],
          { env },
        );
        const s = { name: c.name, file: path.join(dir, `${c.name}.none`), child: c, port: ports[i] };
        gens.push(s);
        servers[i] = s;
        return s;
      };
      const waitReadyz = async (s) => {
        const ok = await pollUntil(async () => (await get(s.port, '/readyz')) === 200 || !s.child.running, 30_000, 100);
        if (!ok || !s.child.running)
          throw new Error(
            `${s.name} did not become ready within 30 s: exit ${JSON.stringify(s.child.exit)}; stderr ${s.child.stderr.slice(-800)}`,
          );
      };
      // Only before the callers start (they are given the ports once) may a server move to another port.
      await Promise.all(
        Array.from({ length: n }, (_, i) =>
          startListening(
            (attempt) => startServer(i, 0, attempt),
            waitReadyz,
            () => pick(i),
          ),
        ),
      );
      const bases = ports.map((p) => `http://127.0.0.1:${p}`);
      const mk = (name, script, cfg) => {
        const file = path.join(dir, `${name}.ids`);
        const child = spawnNode(name, childScript(script), [JSON.stringify({ ...cfg, out: file })]);
        const g = { name, file, child };
        gens.push(g);
        return g;
      };
      const client = mk(`service-${backend}-client`, 'load.mjs', {
        mode: 'client',
        servers: bases,
        durationMs,
        concurrency: 8,
        clientOptions: { timeoutMs: 2_000 },
      });
      const raw = mk(`service-${backend}-raw`, 'load.mjs', { mode: 'raw', servers: bases, durationMs, count: 100 });
      const fuzz = mk(`service-${backend}-fuzz`, 'fuzz.mjs', {
        targets: bases,
        durationMs,
        requests: fuzzRequests,
        seed: (Date.now() & 0xffffff) ^ ports[0],
        concurrency: 6,
      });
      // The gRPC and memcached loops run 3 s past the others, so they meet the restarted server.
      const protosMs = durationMs + 3_000;
      const protosEnd = Date.now() + protosMs;
      const protos = mk(`service-${backend}-protocols`, 'protocols.mjs', {
        grpcPorts,
        memcachedPorts: mcPorts,
        protoDir: path.join(root, 'proto'),
        durationMs: protosMs,
      });
      row.details.fuzzSeed = JSON.parse(fuzz.child.proc.spawnargs.at(-1)).seed;

      await sleep(durationMs / 3);
      const victim = servers[0];
      await holderKill.inject(victim.child);
      const killedAt = Date.now();
      await sleep(durationMs / 3);
      const reborn = startServer(0, 1);
      await waitReadyz(reborn).catch((e) => row.liveness(`the killed server did not come back: ${e.message}`));
      // The reconnect can only be asked of the gRPC and memcached loops when the restarted
      // server was ready a while before they stopped (a slow machine may restart it later).
      const rebornLeftMs = protosEnd - Date.now();
      row.note(`server-0 SIGKILLed, restarted after ${Date.now() - killedAt} ms`);
      await Promise.all([client, raw, fuzz, protos].map((g) => g.child.waitExit(protosMs + 30_000)));

      // Every server still up and healthy, then a graceful stop must exit 0.
      for (const s of servers) {
        if (!s.child.running)
          row.fail(
            `${s.name} died during the run: ${JSON.stringify(s.child.exit)}; stderr ${s.child.stderr.slice(-600)}`,
          );
        else if ((await get(s.port, '/healthz')) !== 200) row.fail(`${s.name} does not answer /healthz after the run`);
      }
      for (const s of servers) s.child.signal('SIGTERM');
      for (const s of servers) {
        const e = await s.child.waitExit(15_000);
        if (e.code !== 0) row.fail(`${s.name} did not shut down cleanly on SIGTERM: ${JSON.stringify(e)}`);
      }
      row.processes = n + 1 + 4;

      // What the callers saw.
      const cDone = lastMsg(client, 'done');
      const rDone = lastMsg(raw, 'done');
      const fDone = lastMsg(fuzz, 'done');
      const pDone = lastMsg(protos, 'done');
      for (const [g, d] of [
        [client, cDone],
        [raw, rDone],
        [fuzz, fDone],
        [protos, pDone],
      ])
        if (!d)
          row.fail(
            `${g.name} produced no report: exit ${JSON.stringify(g.child.exit)}; stderr ${g.child.stderr.slice(-600)}`,
          );
      if (cDone) {
        row.addRefusals(cDone.errors);
        row.stall(cDone.maxStallMs);
        // A call may fail with a coded error when every server is slow at once (an
        // overloaded machine): reported as a refusal. An uncoded failure, or more than 1% of
        // the calls failing while two servers were up, fails the row.
        const failedCalls = Object.values(cDone.errors).reduce((a, b) => a + b, 0);
        const uncoded = Object.keys(cDone.errors).filter((k) => !k.startsWith('FLURRY_E_'));
        if (uncoded.length) row.fail(`client calls failed without a coded error: ${JSON.stringify(uncoded)}`);
        if (failedCalls > 0.01 * (cDone.ok + failedCalls))
          row.fail(
            `${failedCalls} client call(s) got no ID although at least two servers were up: ${JSON.stringify(cDone.errors)}`,
          );
        else if (failedCalls)
          row.note(
            `${failedCalls} client call(s) failed with ${JSON.stringify(cDone.errors)} (every server slower than the client's timeout at once)`,
          );
        if (cDone.invalid)
          row.fail(`the client handed out ${cDone.invalid} invalid ID(s): ${cDone.invalidExamples.join(', ')}`);
        row.details.client = { ok: cDone.ok, stats: cDone.stats };
      }
      if (rDone) {
        row.addRefusals(Object.fromEntries(Object.entries(rDone.errors).map(([k, v]) => [`raw ${k}`, v])));
        if (rDone.serverErrorCount)
          row.fail(
            `${rDone.serverErrorCount} 5xx answer(s) to plain ID requests: ${JSON.stringify(rDone.serverErrors.slice(0, 2))}`,
          );
        if (rDone.invalid) row.fail(`servers answered ${rDone.invalid} invalid ID(s)`);
        row.details.raw = { ok: rDone.ok, statuses: rDone.statuses };
      }
      if (fDone) {
        if (fDone.serverErrorCount)
          row.fail(
            `${fDone.serverErrorCount} 5xx answer(s) to fuzzed requests (replay with seed ${row.details.fuzzSeed}): ${JSON.stringify(fDone.serverErrors.slice(0, 3))}`,
          );
        const traces = fDone.badErrorBodies.filter((b) => b.why.startsWith('stack trace'));
        if (traces.length) row.fail(`stack trace in a response: ${JSON.stringify(traces[0])}`);
        if (fDone.badErrorBodyCount)
          row.note(
            `${fDone.badErrorBodyCount} error answer(s) not in the documented JSON form, e.g. ${JSON.stringify(fDone.badErrorBodies.slice(0, 2))}`,
          );
        row.note(`fuzz: ${fDone.sent} requests, statuses ${JSON.stringify(fDone.statuses)}`);
        row.details.fuzz = { sent: fDone.sent, statuses: fDone.statuses, connErrors: fDone.connErrors };
      }
      if (pDone) judgeProtocols(row, pDone, rebornLeftMs >= 1_000);
      if (rebornLeftMs < 1_000)
        row.note(
          `server-0 was ready again only ${rebornLeftMs} ms before the gRPC/memcached loops ended: reconnect not judged`,
        );
      const protoFiles = ports.flatMap((_, i) => [
        { name: `grpc→server-${i}`, file: `${protos.file}.grpc.${i}` },
        { name: `memcached→server-${i}`, file: `${protos.file}.mc.${i}` },
      ]);
      const rawFiles = ports.map((_, i) => ({ name: `raw→server-${i}`, file: `${raw.file}.${i}` }));
      await analyze(
        row,
        [...rawFiles, { name: client.name, file: client.file }, { name: fuzz.name, file: fuzz.file }, ...protoFiles],
        layout,
        {
          orderPromised: true,
          allowReorderAcrossNodes: true,
          issuers: new Set(rawFiles.map((f) => f.name)),
        },
      );
      keepLogs(gens);
    },
    { backends: list },
  );
}

// The gRPC and memcached clients: every ID valid; the loops on the killed server-0 saw the
// kill (UNAVAILABLE / a closed connection) and got IDs again after it (they reconnected);
// the loops on the servers that stayed up got IDs. Refusals (UNAVAILABLE, SERVER_ERROR) count
// as refusals, never as failures: what matters is that no ID repeats (the analysis after).
function judgeProtocols(row, done, judgeReconnect) {
  for (const [proto, list, lost] of [
    ['grpc', done.grpc, ['UNAVAILABLE']],
    ['memcached', done.memcached, ['connection: closed', 'connection: ECONNRESET', 'connection: ECONNREFUSED']],
  ]) {
    list.forEach((st, i) => {
      row.addRefusals(Object.fromEntries(Object.entries(st.errors).map(([k, v]) => [`${proto} ${k}`, v])));
      if (st.invalid) row.fail(`${proto}→server-${i} received ${st.invalid} invalid ID(s)`);
      if (!st.ok) row.fail(`${proto}→server-${i} received no ID: ${JSON.stringify(st.errors)}`);
      if (i === 0) {
        if (!lost.some((k) => st.errors[k]))
          row.fail(`${proto}→server-0 never saw the SIGKILL (${lost.join(' / ')}): ${JSON.stringify(st.errors)}`);
        if (judgeReconnect && !st.okAfterError)
          row.fail(`${proto}→server-0 got no ID after the restart (no reconnect)`);
      }
    });
    row.details[proto] = list.map((st) => ({
      ok: st.ok,
      calls: st.calls,
      reconnects: st.reconnects,
      errors: st.errors,
    }));
  }
}
