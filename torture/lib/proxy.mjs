// A TCP proxy on 127.0.0.1 between one holder and its engine, so the suite can partition
// that holder alone: `cut()` blackholes every connection (bytes are swallowed, nothing is
// answered, new connections hang) as a dropped network does; `heal()` lets traffic flow
// again (the stalled connections are reset so clients reconnect).
import net from 'node:net';

/**
 * A cuttable TCP path to `127.0.0.1:targetPort`.
 * @example const p = new Proxy(engine.port); await p.listen(); p.cut(); p.heal(); await p.close();
 */
export class Proxy {
  constructor(targetPort, host = '127.0.0.1') {
    this.targetPort = targetPort;
    this.host = host;
    this.cutNow = false;
    this.pairs = new Set();
    this.server = net.createServer((client) => this.accept(client));
  }

  /** Starts listening on a free loopback port; resolves with it. */
  listen() {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, this.host, () => {
        this.port = this.server.address().port;
        resolve(this.port);
      });
    });
  }

  accept(client) {
    client.on('error', () => {});
    const pair = { client, upstream: null };
    this.pairs.add(pair);
    client.on('close', () => {
      pair.upstream?.destroy();
      this.pairs.delete(pair);
    });
    if (this.cutNow) {
      // A blackholed connection: accepted, never answered.
      client.on('data', () => {});
      return;
    }
    const up = net.connect({ host: this.host, port: this.targetPort });
    pair.upstream = up;
    up.on('error', () => client.destroy());
    up.on('close', () => client.destroy());
    client.on('data', (d) => {
      if (!this.cutNow) up.write(d);
    });
    up.on('data', (d) => {
      if (!this.cutNow) client.write(d);
    });
  }

  /** Blackholes the path: nothing passes in either direction. */
  cut() {
    this.cutNow = true;
  }

  /** Restores the path; connections that lived through the cut are reset. */
  heal() {
    this.cutNow = false;
    for (const p of this.pairs) {
      p.client.destroy();
      p.upstream?.destroy();
    }
    this.pairs.clear();
  }

  close() {
    this.cutNow = true;
    for (const p of this.pairs) {
      p.client.destroy();
      p.upstream?.destroy();
    }
    return new Promise((r) => this.server.close(() => r()));
  }
}
