// Segment mode (`flurry serve --sequences URL`): its state (the open sequences once the store answers, and their
// metrics) and its routes (docs/segments.md#the-service-and-the-cli); without `--sequences` every route is 404.
import type { FlurryError } from '@flurry/core';
import { openSequences, type Sequence, type Sequences } from '@flurry/segments';
import type { Registry } from 'prom-client';
import type { ServeConfig } from '../config/index.js';
import { serverError } from '../errors.js';
import { FeatureSlot, type HttpContext, type Logger } from '../http/context.js';
import { BAD, COMMON, FENCED, NOT_FOUND, jsonOk, param } from '../http/openapi-parts.js';
import { JSON_TYPE, TEXT_TYPE, sendAscii, sendText } from '../http/respond.js';
import { ISSUE, READ, type Route, type RouteInput } from '../http/route.js';
import { pathSegment, wantsText } from '../http/routes/ids.js';
import { SequenceMetrics } from './metrics.js';

type SegmentSettings = Pick<
  ServeConfig,
  'autoCreate' | 'allowVolatileStore' | 'maxBatch' | 'sequenceMaxStep' | 'sequenceTargetMs'
>;

/** Segment mode on one service: configured, then open once its store answers. */
export class SegmentMode {
  sequences: Sequences | undefined = undefined;
  private metrics: SequenceMetrics | undefined;

  /** `starting` says why the service is not ready while the store opens. */
  constructor(
    private readonly url: string,
    private readonly settings: SegmentSettings,
    readonly starting: () => FlurryError | undefined,
  ) {}

  /** Opens the store (the caller retries an outage), its per-key metrics in `registry`. */
  async open(registry: Registry): Promise<void> {
    const s = this.settings;
    const metrics = (this.metrics ??= new SequenceMetrics(registry));
    this.sequences = await openSequences(this.url, {
      autoCreate: s.autoCreate,
      allowVolatileStore: s.allowVolatileStore,
      maxBatch: s.maxBatch,
      maxStep: s.sequenceMaxStep,
      targetSegmentMs: s.sequenceTargetMs,
      onEvent: metrics.onEvent,
    });
    metrics.attach(this.sequences);
  }

  /** Closes the sequences (hands unused numbers back) and logs the figures. */
  async close(logger: Logger): Promise<void> {
    if (!this.sequences) return;
    const { handedBack, wasted } = await this.sequences.close();
    logger.info({ handedBack: handedBack.toString(), wasted: wasted.toString() }, 'sequences closed');
  }
}

/** Segment mode on the routes' context, when `--sequences` is set. */
export const SEQUENCES = new FeatureSlot<SegmentMode>('sequences');

/** The sequences of the service, or the 404 that says segment mode is off. */
function sequencesOf(ctx: HttpContext): Sequences {
  const mode = SEQUENCES.get(ctx);
  if (mode?.sequences) return mode.sequences;
  const starting = mode?.starting();
  if (starting) throw starting;
  throw serverError(
    'NOT_FOUND',
    'segment mode is off on this service: start it with --sequences URL (postgres://…, mysql://…, redis://…) to serve /v1/sequences and /api/segment',
  );
}

const keyOf = (raw: string): string =>
  pathSegment(raw, 'QUERY', 'the sequence key in the path has a malformed %-escape');

/** The sequence named by the first path parameter (the key itself is checked by get()). */
const sequenceOf = (ctx: HttpContext, input: RouteInput): Sequence => sequencesOf(ctx).get(keyOf(input.params[0]));

/** Sends the next number of `seq` with `send`: at once from the buffer, else once a segment arrives. */
function nextOf(seq: Sequence, send: (value: string) => number): number | Promise<number> {
  const v = seq.tryNextString();
  return v !== undefined ? send(v) : Promise.resolve(seq.nextBigInt()).then((n) => send(n.toString()));
}

const KEY_SCHEMA = { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_.:-]+$' };
const KEY_PARAM = param(
  'path',
  'key',
  true,
  KEY_SCHEMA,
  '1 to 128 characters from A-Z a-z 0-9 _ . : - (Leaf biz_tag).',
);

export const sequenceNextRoute: Route = {
  name: 'sequences_next',
  path: '/v1/sequences/{key}/next',
  methods: ISSUE,
  create: (ctx) => (res, input) => {
    const seq = sequenceOf(ctx, input);
    // Read before any await: the input object serves the next request meanwhile.
    const text = wantsText(input.headers.accept);
    // A key holds only A-Z a-z 0-9 _ . : - (checked by get()), so it needs no JSON escaping.
    return nextOf(seq, (v) =>
      text
        ? sendAscii(res, 200, TEXT_TYPE, v)
        : sendAscii(res, 200, JSON_TYPE, '{"key":"' + seq.key + '","value":"' + v + '"}'),
    );
  },
  openapi: {
    operationId: 'nextInSequence',
    summary: 'The next number of a sequence (segment mode).',
    description: 'With "Accept: text/plain" the body is the bare decimal number.',
    parameters: [KEY_PARAM],
    responses: {
      '200': {
        description: 'The next number.',
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['key', 'value'],
              properties: { key: { type: 'string' }, value: { type: 'string', pattern: '^[0-9]+$' } },
            },
            example: { key: 'order', value: '1001' },
          },
          'text/plain': { schema: { type: 'string', pattern: '^[0-9]+$' }, example: '1001' },
        },
      },
      ...BAD,
      ...NOT_FOUND,
      ...FENCED,
    },
  },
};

/** The `count` of a batch: once, an integer from 1 to `max` (default 1). */
export function countOf(query: string, max: number): number {
  const params = new URLSearchParams(query);
  for (const k of params.keys())
    if (k !== 'count') throw serverError('QUERY', `unknown query parameter "${k}": the only one is count`);
  const all = params.getAll('count');
  if (all.length === 0) return 1;
  const raw = all[all.length - 1];
  const n = Number(raw);
  if (all.length !== 1 || !/^[0-9]{1,10}$/.test(raw) || n < 1 || n > max) {
    throw serverError(
      'BATCH_COUNT',
      `count must be given once, as an integer from 1 to ${max} (maxBatch); got ${JSON.stringify(raw)}`,
    );
  }
  return n;
}

export const sequenceBatchRoute: Route = {
  name: 'sequences_batch',
  path: '/v1/sequences/{key}',
  methods: ISSUE,
  create: (ctx) => async (res, input) => {
    const seq = sequenceOf(ctx, input);
    const values = await seq.batchBigInt(countOf(input.query, ctx.limits.maxBatch));
    return sendText(res, 200, JSON_TYPE, JSON.stringify({ key: seq.key, values: values.map(String) }));
  },
  openapi: {
    operationId: 'batchInSequence',
    summary: 'count increasing numbers of a sequence (segment mode).',
    parameters: [
      KEY_PARAM,
      { name: 'count', in: 'query', required: false, schema: { type: 'integer', minimum: 1, default: 1 } },
    ],
    responses: {
      ...jsonOk(
        'Increasing numbers.',
        {
          type: 'object',
          required: ['key', 'values'],
          properties: {
            key: { type: 'string' },
            values: { type: 'array', items: { type: 'string', pattern: '^[0-9]+$' } },
          },
        },
        { key: 'order', values: ['1001', '1002'] },
      ),
      ...BAD,
      ...NOT_FOUND,
      ...FENCED,
    },
  },
};

export const sequenceStatusRoute: Route = {
  name: 'sequences_status',
  path: '/v1/sequences/{key}/status',
  methods: READ,
  create: (ctx) => (res, input) =>
    sendText(res, 200, JSON_TYPE, JSON.stringify(sequencesOf(ctx).statusOf(keyOf(input.params[0])))),
  openapi: {
    operationId: 'sequenceStatus',
    summary: "This service's buffers and counters for a key (like Leaf's /cache page).",
    parameters: [KEY_PARAM],
    responses: {
      '200': { description: 'The status (SequenceStatus in @flurry/segments).', content: { 'application/json': {} } },
      ...BAD,
      ...NOT_FOUND,
      ...COMMON,
    },
  },
};

export const leafSegmentRoute: Route = {
  name: 'leaf_segment_get',
  path: '/api/segment/get/{key}',
  methods: ISSUE,
  create: (ctx) => (res, input) => nextOf(sequenceOf(ctx, input), (v) => sendAscii(res, 200, TEXT_TYPE, v)),
  openapi: {
    operationId: 'leafSegmentGet',
    summary:
      "Meituan Leaf compatible segment endpoint: the next number of the key (Leaf's biz tag) as bare decimal text. An unknown key is 404 (Leaf: 500 with code -2).",
    parameters: [KEY_PARAM],
    responses: {
      '200': {
        description: 'The next number.',
        content: { 'text/plain': { schema: { type: 'string', pattern: '^[0-9]+$' } } },
      },
      ...BAD,
      ...NOT_FOUND,
      ...FENCED,
    },
  },
};
