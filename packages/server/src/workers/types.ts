// The IPC messages of `flurry serve --workers N`, and the worker entry `/v1/status`, the console and `flurry status` list.

/** One worker as the primary last heard of it. */
export interface WorkerEntry {
  /** The worker's place, 0 to N-1 (a restarted worker keeps its predecessor's). */
  readonly slot: number;
  readonly pid: number;
  readonly restarts: number;
  /** Whether it holds a valid lease and is ready (false when it has not reported for 3 s). */
  readonly ready: boolean;
  /** `starting`, `ready`, `not-ready`, `silent` (no report for 3 s: stopped or hung), `restarting`, `stopping`. */
  readonly state: 'starting' | 'ready' | 'not-ready' | 'silent' | 'restarting' | 'stopping';
  readonly node: Readonly<Record<string, number>> | null;
  /** Its lease: registry slot, wall-clock deadline (Unix ms, null: never expires), renewals, fenced. */
  readonly lease: {
    readonly slot: number;
    readonly deadlineMs: number | null;
    readonly renewals: number;
    readonly fenced: boolean;
  } | null;
  /** IDs it issued (decimal string), and per second over the last second. */
  readonly issued: string;
  readonly idsPerSecond: number;
  /** Why it is not ready (`/readyz`'s code and message), or null. */
  readonly notReady: { readonly code: string; readonly message: string } | null;
  /** Unix ms of its last report. */
  readonly reportedAt: number;
}

/** What a worker reports about itself (the primary adds slot, restarts and state). */
export type WorkerReport = Omit<WorkerEntry, 'slot' | 'restarts' | 'state'>;

/** The IPC messages, tagged `flurry` (others are left alone): `report`, `table`, and a `/metrics` round of `metrics-ask`, `-json`, `-text`. */
export type WorkerMessage =
  | { readonly flurry: 'report'; readonly report: WorkerReport }
  | { readonly flurry: 'table'; readonly workers: readonly WorkerEntry[] }
  | { readonly flurry: 'metrics-ask'; readonly id: number }
  | { readonly flurry: 'metrics-json'; readonly id: number; readonly metrics: unknown[] }
  | { readonly flurry: 'metrics-text'; readonly id: number; readonly text: string };

export function isWorkerMessage(m: unknown): m is WorkerMessage {
  return typeof m === 'object' && m !== null && typeof (m as { flurry?: unknown }).flurry === 'string';
}
