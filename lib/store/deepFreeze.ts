/**
 * Freezes `value` and every plain object and array under it, and returns it. Freezing stops at
 * anything already frozen, so a subtree an update shares with its cached version (see
 * `shareUnchanged`) costs nothing; anything that is not a plain object or an array (a `Date`, a
 * class instance a transform added) is left as it is, as immer's `freeze(value, true)` does.
 * It walks with an explicit stack, so no nesting depth overflows the call stack.
 *
 * Why not immer's `freeze`: it checks each object for drafts, Maps and Sets and visits its entries
 * through callbacks, which made it slower on the benchmark's pods (docs/PERFORMANCE.md,
 * "Freezing"), and it was the library's only use of immer at run time.
 */
export function deepFreeze<T>(value: T): T {
  const pending: object[] = [];
  if (typeof value === 'object' && value !== null) pending.push(value);
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (Object.isFrozen(next)) continue;
    if (Array.isArray(next)) {
      Object.freeze(next);
      for (const item of next as unknown[]) if (typeof item === 'object' && item !== null) pending.push(item);
      continue;
    }
    const prototype: unknown = Object.getPrototypeOf(next);
    if (prototype !== Object.prototype && prototype !== null) continue;
    Object.freeze(next);
    for (const key of Object.keys(next)) {
      const item = (next as Record<string, unknown>)[key];
      if (typeof item === 'object' && item !== null) pending.push(item);
    }
  }
  return value;
}
