/**
 * The two profiles. `short` runs in CI on every change (all backends, a few hundred
 * thousand IDs per scenario, the whole profile within 5 minutes on a 2-core machine);
 * `full` runs for minutes and is what docs/reliability.md reports.
 * @example profiles.short.fleet.processes; // 16
 */
export const profiles = {
  short: {
    scenarioTimeoutMs: 300_000,
    lease: { ttlMs: 2_000, renewIntervalMs: 400, marginMs: 300 },
    fleet: { processes: 16, durationMs: 1_000 },
    threads: { threads: 4, durationMs: 1_000 },
    clock: { holdMs: 350, policies: ['tolerate', 'wait', 'throw'] },
    restart: { firstRunMs: 600, behindMs: 6_000 },
    crash: { slots: 4, processes: 6, durationMs: 9_000 },
    engine: { durationMs: 18_000 },
    service: { durationMs: 8_000, servers: 3, fuzzRequests: 1_500 },
    // Segment mode (torture/scenarios/segments.mjs): pause and cut last past the servers' 5 s store deadline.
    segments: { warmMs: 1_500, settleMs: 1_500, pauseMs: 6_000, cutMs: 6_000 },
    // flurry serve --workers (torture/scenarios/workers.mjs): one worker SIGSTOPped past its lease TTL.
    workers: { workers: 4, afterMs: 2_000, backends: ['file'] },
  },
  full: {
    scenarioTimeoutMs: 600_000,
    lease: { ttlMs: 3_000, renewIntervalMs: 600, marginMs: 400 },
    fleet: { processes: 16, durationMs: 10_000 },
    threads: { threads: 4, durationMs: 15_000 },
    clock: { holdMs: 2_000, policies: ['tolerate', 'wait', 'throw'] },
    restart: { firstRunMs: 3_000, behindMs: 8_000 },
    crash: { slots: 4, processes: 6, durationMs: 40_000, cycles: 4 },
    engine: { durationMs: 40_000 },
    partition: { cutMs: 8_000, afterHealMs: 6_000 },
    service: {
      durationMs: 45_000,
      servers: 3,
      fuzzRequests: 20_000,
      backends: ['file', 'zookeeper', 'zookeeper+leaf', 'etcd', 'redis', 'postgres', 'mariadb'],
    },
    segments: { warmMs: 8_000, settleMs: 5_000, pauseMs: 9_000, cutMs: 9_000 },
    workers: { workers: 4, afterMs: 6_000, backends: ['file', 'etcd', 'redis'] },
  },
};
