/**
 * Registry slots ↔ a layout's node fields: `datacenter` and the fields in `pin` are pinned into the namespace
 * (`cluster/datacenter-1`); a slot is the other fields' value in mixed radix, the last field varying fastest.
 */
import { registryError } from './errors.js';

/** The part of a core `Layout` the registry needs (a `Layout` satisfies it). */
export interface LayoutLike {
  readonly name?: string;
  readonly nodeFields: readonly { readonly name: string; readonly bits: number }[];
}

/** The slot ↔ node mapping of one layout in one namespace (`cluster/field-value…`). */
export class SlotMap {
  private constructor(
    readonly namespace: string,
    /** The product of the leased fields' sizes (1 when every field is pinned). */
    readonly slots: number,
    readonly pinned: Readonly<Record<string, number>>,
    /** Leased fields, MSB first, and their sizes (2^bits). */
    readonly leased: readonly { readonly name: string; readonly size: number }[],
  ) {}

  /** Builds the mapping; `FLURRY_E_REGISTRY_OPTION` for a bad pin or more than 2^31 slots. */
  static create(layout: LayoutLike, cluster: string, pin: Record<string, number> = {}): SlotMap {
    const names = new Set(layout.nodeFields.map((f) => f.name));
    for (const k of Object.keys(pin)) {
      if (!names.has(k)) {
        throw registryError(
          'OPTION',
          `pin names the field "${k}" but the layout${layout.name ? ` "${layout.name}"` : ''} has no such node field; its node fields are: ${[...names].join(', ') || '(none)'}`,
          { option: 'pin', field: k, nodeFields: [...names] },
        );
      }
    }
    const pinned: Record<string, number> = {};
    const leased: { name: string; size: number }[] = [];
    const nsParts = [cluster];
    let slots = 1;
    for (const f of layout.nodeFields) {
      const size = 2 ** f.bits;
      const explicit = Object.prototype.hasOwnProperty.call(pin, f.name);
      if (explicit || f.name === 'datacenter') {
        const v = explicit ? pin[f.name] : 0;
        if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v >= size) {
          throw registryError(
            'OPTION',
            `pinned ${f.name}=${String(v)} does not fit the ${f.bits}-bit field: use an integer from 0 to ${size - 1}`,
            { option: 'pin', field: f.name, value: v, max: size - 1 },
          );
        }
        pinned[f.name] = v;
        nsParts.push(`${f.name}-${v}`);
      } else {
        leased.push({ name: f.name, size });
        slots *= size;
      }
    }
    if (slots > 2 ** 31) {
      throw registryError(
        'OPTION',
        `the layout leaves ${slots} node IDs to lease (more than 2^31): pin some node fields with --node FIELD=VALUE or use fewer node bits`,
        { slots },
      );
    }
    return new SlotMap(nsParts.join('/'), slots, Object.freeze(pinned), Object.freeze(leased));
  }

  /** The node fields (pinned and leased) of a slot. */
  toNode(slot: number): Record<string, number> {
    const { slots } = this;
    if (!Number.isInteger(slot) || slot < 0 || slot >= slots)
      throw registryError('CORRUPT', `the registry returned slot ${slot}, outside 0..${slots - 1}`, { slot, slots });
    const node: Record<string, number> = { ...this.pinned };
    let rest = slot;
    for (let i = this.leased.length - 1; i >= 0; i--) {
      const f = this.leased[i];
      node[f.name] = rest % f.size;
      rest = Math.floor(rest / f.size);
    }
    return node;
  }
}
