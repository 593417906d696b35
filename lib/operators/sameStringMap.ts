/**
 * Whether two string maps (labels, annotations) hold the same entries, a missing map counting as
 * empty: the same object at once (an unchanged map shared between versions), else key by key,
 * O(size of the maps).
 */
export function sameStringMap(a: Readonly<Record<string, string>> | undefined, b: Readonly<Record<string, string>> | undefined): boolean {
  if (a === b) return true;
  const aKeys = a === undefined || a === null ? [] : Object.keys(a);
  const bKeys = b === undefined || b === null ? [] : Object.keys(b);
  if (aKeys.length !== bKeys.length) return false;
  for (const key of aKeys) {
    if (!Object.prototype.hasOwnProperty.call(b, key) || a![key] !== b![key]) return false;
  }
  return true;
}
