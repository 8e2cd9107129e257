// How a layout and node pins are named (flags, variables, config file), shared by `flurry serve`
// and the offline commands so both accept exactly the same forms.
import { FlurryError } from '@flurry/core/errors';
import { Layout } from '@flurry/core/layout';
import { clip, serverError } from './errors.js';

/** The layout as the user named it: a preset, or a field spec; `epoch` and `unit` also re-epoch a preset. */
export interface LayoutChoice {
  readonly layout?: string;
  readonly fields?: string;
  readonly epoch?: string;
  readonly unit?: string;
}

/** Builds the layout from a {@link LayoutChoice} (`twitter` when nothing is named); `FLURRY_E_LAYOUT_*` or `FLURRY_E_USAGE`. */
export function chooseLayout(choice: LayoutChoice): Layout {
  if (choice.layout !== undefined && choice.fields !== undefined) {
    throw serverError(
      'USAGE',
      `give either a preset (--layout ${choice.layout}) or a field list (--fields ${choice.fields}), not both`,
      { layout: choice.layout, fields: choice.fields },
    );
  }
  if (choice.fields !== undefined) return Layout.parse(choice.fields, { epoch: choice.epoch, unit: choice.unit });
  const preset = Layout.from(choice.layout ?? 'twitter');
  if (choice.epoch === undefined && choice.unit === undefined) return preset;
  return Layout.parse(preset.toFieldsString(), {
    epoch: choice.epoch ?? preset.epochMs,
    unit: choice.unit ?? preset.unit,
  });
}

/** Parses node pins (`FIELD=VALUE`, repeatable and/or comma-separated); `FLURRY_E_NODE_OUT_OF_RANGE` for a bad one. */
export function parseNodePins(pins: readonly string[], layout: Layout): Record<string, number> {
  const out: Record<string, number> = {};
  const names = layout.nodeFields.map((f) => f.name);
  const refuse = (message: string, details: Record<string, unknown>) =>
    new FlurryError('FLURRY_E_NODE_OUT_OF_RANGE', message, details);
  for (const pair of pins.flatMap((group) => group.split(','))) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*([0-9]{1,10})\s*$/.exec(pair);
    if (!m) {
      throw refuse(
        `node pin "${clip(pair, 40)}" is malformed; write FIELD=VALUE with a non-negative integer, e.g. ${names[0] ?? 'worker'}=1 (node fields of layout ${layout.name}: ${names.join(', ') || 'none'})`,
        { pin: clip(pair, 40) },
      );
    }
    const [, name, raw] = m;
    const field = layout.nodeFields.find((f) => f.name === name);
    if (!field) {
      throw refuse(
        `layout ${layout.name} has no node field "${name}"; its node fields are: ${names.join(', ') || 'none'}`,
        { field: name, allowed: names },
      );
    }
    const value = Number(raw);
    if (value > field.max) {
      throw refuse(
        `node field ${name}=${raw} is out of range: ${name} is ${field.bits} bit${field.bits === 1 ? '' : 's'} wide in layout ${layout.name}, so it must be from 0 to ${field.max}`,
        { field: name, value, min: 0, max: field.max },
      );
    }
    if (Object.prototype.hasOwnProperty.call(out, name) && out[name] !== value) {
      throw refuse(
        `node field ${name} is pinned twice with different values (${out[name]} and ${value}); pin it once`,
        { field: name },
      );
    }
    out[name] = value;
  }
  return out;
}

/** Refuses a layout whose timestamp field cannot hold `nowMs` with `FLURRY_E_LAYOUT_EXPIRED`. */
export function assertLayoutLive(layout: Layout, nowMs: number): void {
  const reason = layoutExpiredReason(layout, nowMs);
  if (reason === undefined) return;
  throw new FlurryError(
    'FLURRY_E_LAYOUT_EXPIRED',
    `${reason[0].toUpperCase()}${reason.slice(1)}; it cannot issue IDs. Choose a later epoch (--epoch) or a wider timestamp field.`,
    { expiresAt: layout.expiresAt.toISOString(), nowMs },
  );
}

/** Why a layout has no time left at `nowMs` (one clause), or `undefined` while it has. */
export function layoutExpiredReason(layout: Layout, nowMs: number): string | undefined {
  if (nowMs < layout.expiresAt.getTime()) return undefined;
  return (
    `the end of life of layout ${layout.name} (${layout.toFieldsString()}) is already past: ` +
    `its ${layout.timestampBits}-bit timestamp field in ${layout.unit} units ran out at ${layout.expiresAt.toISOString()}, ` +
    `before now (${new Date(nowMs).toISOString()})`
  );
}
