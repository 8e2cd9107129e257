// Segment mode's state (`flurry serve --sequences URL`): the open sequences once the store answers, and their metrics.
import type { FlurryError } from '@flurry/core';
import { openSequences, type Sequences } from '@flurry/segments';
import type { Registry } from 'prom-client';
import type { ServeConfig } from '../config/index.js';
import { FeatureSlot } from '../http/feature.js';
import type { Logger } from '../http/context.js';
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
