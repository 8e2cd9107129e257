/**
 * Small helpers for the text of messages (internal to the core).
 *
 * @example
 * ```ts
 * `narrow the fields by ${plural(1, 'bit')}`; // 'narrow the fields by 1 bit'
 * ```
 */

/**
 * A count and its noun, singular for exactly 1: `1 bit`, `9 bits`, `1 character`.
 *
 * @example
 * ```ts
 * plural(1, 'bit');                  // '1 bit'
 * plural(12, 'bit');                 // '12 bits'
 * plural(2, 'node ID', 'node IDs');  // '2 node IDs'
 * ```
 */
export function plural(n: number | bigint, one: string, many: string = `${one}s`): string {
  return `${n} ${n === 1 || n === 1n ? one : many}`;
}
