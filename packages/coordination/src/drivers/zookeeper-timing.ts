/**
 * How a ZooKeeper session reconnects after losing its server: the delay between rounds over the servers (small, so a
 * restarted server is found fast) and the time limit of one session handshake (the client library would wait
 * forever for a server that accepts the connection but does not answer). zookeeper-session.ts uses it and the
 * torture suite derives its ZooKeeper recovery bound from it (torture/scenarios/engine.mjs); it imports nothing, so
 * loading it never needs `node-zookeeper-client`.
 */
export function reconnectTiming(
  sessionTimeoutMs: number,
  connectTimeoutMs: number,
): { spinDelayMs: number; handshakeTimeoutMs: number } {
  return {
    spinDelayMs: Math.min(1000, Math.max(50, Math.floor(connectTimeoutMs / 5))),
    handshakeTimeoutMs: Math.min(
      Math.min(5000, Math.max(1000, Math.floor(sessionTimeoutMs / 2))),
      Math.max(250, Math.floor(connectTimeoutMs / 3)),
    ),
  };
}
