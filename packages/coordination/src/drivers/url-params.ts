/**
 * The query-parameter check every engine driver's `parse…Url` runs on its URL.
 */
import { closestName } from '@flurry/core';

/**
 * Refuses URL query parameters a driver would ignore: one it does not know (naming the closest it knows) or one
 * given twice (only one value would be used). Names only the parameter, never a value.
 *
 * @example
 * ```ts
 * checkUrlParams(new URLSearchParams('prefx=a'), ['prefix'], (why) => new Error(why));
 * // throws: unknown parameter "prefx"; did you mean "prefix"? (known: prefix)
 * ```
 */
export function checkUrlParams(params: URLSearchParams, known: readonly string[], bad: (why: string) => Error): void {
  const seen = new Set<string>();
  for (const key of params.keys()) {
    if (!known.includes(key)) {
      const near = closestName(key, known);
      throw bad(
        `unknown parameter "${key}"${near !== undefined ? `; did you mean "${near}"?` : ''} (known: ${known.join(', ') || 'none'})`,
      );
    }
    if (seen.has(key)) throw bad(`the parameter "${key}" is given twice; give it once`);
    seen.add(key);
  }
}
