/**
 * A ZooKeeper session's delay between rounds over the servers and its handshake time limit (the client would wait
 * forever); torture derives its recovery bound from it, so it imports nothing.
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
