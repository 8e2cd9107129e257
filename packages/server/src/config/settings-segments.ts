/**
 * The rows of the settings table (`settings.ts`) that belong to segment mode (`flurry serve --sequences`; see
 * docs/segments.md): the store, creation on first use, the Redis persistence override and the adaptive step's
 * bounds. Spread into the one table at their place, so `--help`, parsing and docs/operations.md keep their order.
 */
import type { SettingDef } from './setting-def.js';

/** Segment mode's settings. */
export const SEGMENT_SETTINGS = {
  sequences: {
    type: 'string',
    secret: true,
    defaultText: '(none: segment mode off)',
    allowed: "a store URL: postgres://…, mysql://… (Leaf's leaf_alloc table), redis://… (see docs/segments.md)",
    help: 'Serve segment mode (/v1/sequences/{key}, Leaf /api/segment/get/{key}) from this store.',
  },
  autoCreate: {
    type: 'bool',
    default: false,
    help: 'Segment mode: create an unknown key on first use (off: an unknown key is 404).',
  },
  allowVolatileStore: {
    type: 'bool',
    default: false,
    help: 'Segment mode: accept a Redis without appendonly yes + appendfsync always (it can repeat numbers after a crash).',
  },
  sequenceMaxStep: {
    type: 'int',
    min: 1,
    max: 2_147_483_647,
    default: 1_000_000,
    help: 'Segment mode: the largest step the adaptive step asks for (Leaf: 1,000,000); the stored step is the floor.',
  },
  sequenceTargetMs: {
    type: 'int',
    min: 1000,
    max: 86_400_000,
    default: 900_000,
    help: 'Segment mode: how long a segment should last at the observed rate (Leaf: 15 min); the step adapts to it.',
  },
} as const satisfies Record<string, SettingDef>;
