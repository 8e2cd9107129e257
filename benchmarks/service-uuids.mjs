// UUIDv7 beside IDs in `npm run bench:service` (issue 26): benchmarks/service.mjs runs
// `GET /v1/uuids/next` interleaved with `GET /v1/ids/next` (same wrk settings, same server,
// same rounds) and reports the ratio of the medians (target >= 0.95).
import { fmt } from './report.mjs';

/** The median (the upper one of an even count), as the service benchmark has always taken it. */
export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

/** The table row: UUIDs/next req/s vs IDs/next req/s of the same rounds. */
export function uuidRow(idRuns, uuidRuns, rounds, connections) {
  const ids = median(idRuns.map((r) => r.rps));
  const uuids = median(uuidRuns.map((r) => r.rps));
  const bad = uuidRuns.reduce((a, r) => a + r.non2xx, 0);
  return [
    `\`GET /v1/uuids/next\` req/s, median of ${rounds} runs interleaved with \`/v1/ids/next\` (wrk, 1 thread, ${connections} connections)` +
      (bad > 0 ? `; ${fmt(bad)} non-2xx` : ''),
    fmt(uuids),
    `\`/v1/ids/next\` ${fmt(ids)}`,
    `${fmt((uuids / ids) * 100, 1)}%`,
    '≥ 95% of /v1/ids/next',
    uuids / ids >= 0.95 && bad === 0 ? 'yes' : '**no**',
  ];
}
