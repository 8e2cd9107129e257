/** A count and its noun, singular for exactly 1: `1 bit`, `9 bits`, `1 character`. */
export function plural(n: number | bigint, one: string, many: string = `${one}s`): string {
  return `${n} ${n === 1 || n === 1n ? one : many}`;
}
