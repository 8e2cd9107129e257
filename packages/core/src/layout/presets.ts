// The preset layouts, each matching its original system bit for bit (`js53`: IDs below 2^53): docs/layouts.md.
import { parseFieldList } from './spec.js';
import type { LayoutSpec } from './types.js';

/** The names of the built-in layouts. */
export type PresetName = 'twitter' | 'leaf' | 'discord' | 'sonyflake' | 'instagram' | 'js53';

/** Twitter Snowflake's epoch (Unix ms), shared by Leaf. */
export const TWITTER_EPOCH_MS = 1288834974657;
/** Discord's epoch: 2015-01-01T00:00:00Z. */
export const DISCORD_EPOCH_MS = 1420070400000;
/** Sonyflake's default start time: 2014-09-01T00:00:00Z. */
export const SONYFLAKE_EPOCH_MS = Date.UTC(2014, 8, 1);
/** Instagram's epoch from its 2011 engineering post. */
export const INSTAGRAM_EPOCH_MS = 1314220021721;
/** 2025-01-01T00:00:00Z: the epoch of `js53` and of `Layout.parse` without `--epoch`. */
export const DEFAULT_EPOCH_MS = Date.UTC(2025, 0, 1);

/** The preset specs by name (frozen), their fields most significant first. */
export const PRESETS: Readonly<Record<PresetName, Readonly<LayoutSpec>>> = Object.freeze({
  twitter: spec('twitter', TWITTER_EPOCH_MS, '1ms', 'timestamp:41,datacenter:5,worker:5,sequence:12'),
  leaf: spec('leaf', TWITTER_EPOCH_MS, '1ms', 'timestamp:41,worker:10,sequence:12'),
  discord: spec('discord', DISCORD_EPOCH_MS, '1ms', 'timestamp:42,worker:5,process:5,sequence:12'),
  sonyflake: spec('sonyflake', SONYFLAKE_EPOCH_MS, '10ms', 'timestamp:39,sequence:8,machine:16'),
  instagram: spec('instagram', INSTAGRAM_EPOCH_MS, '1ms', 'timestamp:41,shard:13,sequence:10'),
  js53: spec('js53', DEFAULT_EPOCH_MS, '10ms', 'timestamp:38,worker:7,sequence:8'),
});

/** Whether `name` is a preset name. */
export function isPresetName(name: unknown): name is PresetName {
  return typeof name === 'string' && Object.prototype.hasOwnProperty.call(PRESETS, name);
}

function spec(name: string, epoch: number, unit: LayoutSpec['unit'], fields: string): Readonly<LayoutSpec> {
  const list = parseFieldList(fields).map((f) => Object.freeze(f));
  return Object.freeze({ name, epoch, unit, fields: Object.freeze(list) as LayoutSpec['fields'] });
}
