// The end of a layout's life, seen a year early (docs/operations.md#end-of-a-layouts-life).
import type { Layout } from '@flurry/core/layout';

/** How long before a layout's end of life Flurry warns: 365 days (the alert rule in docs/operations.md too). */
export const END_OF_LIFE_WARNING_MS = 365 * 86_400_000;

/** A duration in words, floored: `2 years 14 days`, `197 days 3 h`, `5 h 12 min`, `4 min 10 s`. */
export function formatRemaining(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const days = Math.floor(s / 86_400);
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  if (days >= 365) return `${plural(Math.floor(days / 365), 'year')} ${plural(days % 365, 'day')}`;
  if (days >= 1) return `${plural(days, 'day')} ${Math.floor((s % 86_400) / 3600)} h`;
  if (s >= 3600) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return s >= 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s} s`;
}

/** The warning for a layout within a year of its end of life at `nowMs` (past it, the layout is refused instead). */
export function endOfLifeWarning(layout: Layout, nowMs: number): string | undefined {
  const left = layout.expiresAt.getTime() - nowMs;
  if (left <= 0 || left >= END_OF_LIFE_WARNING_MS) return undefined;
  return (
    `layout ${layout.name} (${layout.toFieldsString()}) reaches its end of life at ${layout.expiresAt.toISOString()}, ` +
    `in ${formatRemaining(left)} (less than a year): its ${layout.timestampBits}-bit timestamp field in ${layout.unit} units ` +
    `cannot hold a later time, and flurry serve and next refuse the layout from then on (FLURRY_E_LAYOUT_EXPIRED). ` +
    `Move to a layout with a later epoch (--epoch) or a wider timestamp field before then (docs/layouts.md)`
  );
}
