/**
 * Structural sharing: the indexer hands every incoming object, before `transform` (after
 * `dropManagedFields`, whose result only it holds), to
 * {@link shareUnchanged} with the cached version it replaces (or none), so that versions share
 * what did not change and all objects share one empty object.
 */

/**
 * Below this depth subtrees are compared and shared; deeper ones are kept as they arrived.
 * Kubernetes objects nest a dozen levels at most; the bound keeps the recursion safe from
 * hostile nesting (V8's `JSON.parse` accepts depths that would overflow the stack here).
 */
const MAX_DEPTH = 64;

/**
 * The empty object that every stored object shares in place of its own `{}`s. Frozen, so that
 * nobody can fill it (a mutation throws in strict mode instead of changing every object).
 */
const EMPTY_OBJECT: object = Object.freeze({});

/**
 * Replaces, inside `incoming`, every subtree that is deep-equal to the subtree at the same path
 * of `previous` with `previous`'s own subtree, and every other empty plain object `{}` with one
 * shared frozen empty object; returns `incoming` itself (never `previous`, even when the two are
 * equal throughout). Without `previous` (a new object) it only does the latter.
 *
 * Why: a watch event carries the whole object, but an update usually changes a few fields
 * (status, an annotation, `resourceVersion`). Without sharing, the cache keeps a fresh copy of
 * every field on each update, and those copies survive V8's young generation and are copied into
 * the old one; with sharing only the changed paths survive and the parsed duplicates die young,
 * which saves more garbage-collection time per event than the walk costs once the cache is large
 * (docs/performance-notes.md, "Rounds of changes": the structural-sharing rows). It also
 * makes "did the spec change?" an O(1) question: `oldObject.spec === object.spec` holds when the
 * spec is deep-equal (within the limits listed below) and never when it changed.
 *
 * Why the empty objects: `managedFields` marks every managed field with `{}`, so most of a
 * pod's objects are empty ones (115 of 187 in this project's benchmark pod), and V8 gives each
 * parsed `{}` room for properties: sharing one takes most of that room back.
 *
 * Guarantees and costs:
 * - Values are unchanged: the result is deep-equal to `incoming` as passed; only the identity
 *   (and frozenness) of empty objects differs.
 * - Only plain objects and arrays are compared (a `Date` or class instance is kept as is); an
 *   own `__proto__` key is never shared; frozen containers in `incoming` are not written.
 * - One walk over `incoming` down to depth 64, no hashing: O(size of the object), independent
 *   of how many objects are cached, and a fraction of the `JSON.parse` that produced it
 *   (docs/performance-notes.md, "Batches": the walk against the parse). When the young generation is
 *   large enough for replaced versions to die young anyway (a small cache with
 *   `--max-semi-space-size=64`), that walk is a net cost.
 * - `incoming` is mutated in place (its containers get `previous`'s children), so it must be an
 *   object nobody else holds, such as one just parsed from the wire.
 *
 * ## Example
 * ```ts
 * import { shareUnchanged } from 'rx-informer';
 *
 * const before = { metadata: { name: 'web', resourceVersion: '1' }, spec: { replicas: 2 } };
 * const after = shareUnchanged(before, { metadata: { name: 'web', resourceVersion: '2' }, spec: { replicas: 2 } });
 * after.spec === before.spec; // true: equal subtrees are the previous version's
 * after.metadata === before.metadata; // false: resourceVersion changed
 * ```
 *
 * @param previous The version being replaced (not modified), or undefined for a new object.
 * @param incoming The new version; its equal subtrees are replaced by `previous`'s.
 * @returns `incoming`.
 */
export function shareUnchanged<T extends object>(previous: object | undefined, incoming: T): T {
  const equal = previous === undefined ? undefined : shareChildren(previous, incoming, 1);
  if (equal === undefined) internChildren(incoming, 1);
  // Equal throughout: the walk wrote nothing (see shareProperties), so `incoming` takes every child now.
  else if (equal && !Object.isFrozen(incoming)) adoptAll(previous!, incoming);
  return incoming;
}

/** Writes every child of `previous` into `incoming`, which is deep-equal to it. */
function adoptAll(previous: object, incoming: object): void {
  if (Array.isArray(incoming)) for (let i = 0; i < incoming.length; i++) incoming[i] = (previous as readonly unknown[])[i];
  else adoptBefore(previous as Readonly<Record<string, unknown>>, incoming as Record<string, unknown>, undefined);
}

/**
 * Created by `{}`, `JSON.parse` or `structuredClone`, in this realm or another one (a `vm`
 * context, a test runner's sandbox): its prototype is null or some realm's Object.prototype,
 * whose own prototype is null. A class instance or a `Date` has a prototype below that.
 */
function isPlainObject(value: object): boolean {
  const prototype = Object.getPrototypeOf(value) as object | null;
  return prototype === Object.prototype || prototype === null || Object.getPrototypeOf(prototype) === null;
}

/** `previous` when the two are deep-equal, else `incoming` with its equal children shared. */
function reuse(previous: unknown, incoming: unknown, depth: number): unknown {
  // Object.is, not ===: sharing must not turn a -0 into a 0.
  if (Object.is(previous, incoming)) return previous;
  if (typeof incoming !== 'object' || incoming === null || depth >= MAX_DEPTH) return incoming;
  if (typeof previous !== 'object' || previous === null) return intern(incoming, depth);
  return reuseContainer(previous, incoming, depth);
}

/** {@link reuse} for two distinct containers above depth 64. */
function reuseContainer(previous: object, incoming: object, depth: number): object {
  // Most of a pod's objects are managedFields' `{}` marks, stored as the shared one: settled
  // here without the general walk, which would cost two kind checks, two `for…in` set-ups and
  // a call for each.
  if (previous === EMPTY_OBJECT && isEmptyObject(incoming)) return EMPTY_OBJECT;
  const equal = shareChildren(previous, incoming, depth + 1);
  if (equal === undefined) return intern(incoming, depth);
  if (equal) return previous;
  // A map that lost all its keys: the walk has not seen it as a new object, so intern it here.
  return isEmptyObject(incoming) ? EMPTY_OBJECT : incoming;
}

/** An empty plain object of this realm (run only on containers that changed, a few per update). */
function isEmptyObject(value: object): boolean {
  if (Array.isArray(value) || Object.getPrototypeOf(value) !== Object.prototype) return false;
  for (const _key in value) return false;
  return true;
}

/** The shared empty object for an empty plain object of this realm, else `value` with its children interned. */
function intern(value: object, depth: number): object {
  if (Array.isArray(value)) {
    internElements(value as unknown[], depth + 1);
    return value;
  }
  // Another realm's `{}` stays: swapping it would change its prototype.
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  return internChildren(value, depth + 1) === 0 ? EMPTY_OBJECT : value;
}

/** Interns the object elements of an array (indexed: `for…in` would make a string per index). */
function internElements(array: unknown[], depth: number): void {
  let writable: boolean | undefined;
  for (let i = 0; i < array.length; i++) {
    const child = array[i];
    if (typeof child !== 'object' || child === null || depth >= MAX_DEPTH) continue;
    const kept = intern(child, depth);
    if (kept !== child && (writable ??= !Object.isFrozen(array))) array[i] = kept;
  }
}

/** Interns the object children of `container`; returns how many keys or elements it has. */
function internChildren(container: object, depth: number): number {
  const children = container as Record<string, unknown>;
  let writable: boolean | undefined;
  let count = 0;
  for (const key in children) {
    count++;
    const child = children[key];
    if (typeof child !== 'object' || child === null || depth >= MAX_DEPTH || key === '__proto__') continue;
    const kept = intern(child, depth);
    if (kept !== child && (writable ??= !Object.isFrozen(container))) children[key] = kept;
  }
  return count;
}

/**
 * Shares `previous`'s children into `incoming` where they are deep-equal; returns whether the
 * two containers are deep-equal as a whole, or undefined (sharing nothing) unless both are
 * arrays or both are plain objects.
 */
function shareChildren(previous: object, incoming: object, depth: number): boolean | undefined {
  if (Array.isArray(incoming)) {
    return Array.isArray(previous) ? shareElements(previous as readonly unknown[], incoming as unknown[], depth) : undefined;
  }
  if (Array.isArray(previous) || !isPlainObject(incoming) || !isPlainObject(previous)) return undefined;
  return shareProperties(previous as Readonly<Record<string, unknown>>, incoming as Record<string, unknown>, depth);
}

/**
 * Shares `previous`'s elements into `incoming` where they are deep-equal; returns whether the two
 * arrays are deep-equal. Nothing is written while every element so far is equal, since the caller
 * replaces an equal array whole (most of an update's containers are equal). At the first
 * difference the equal elements before it are written (they are the previous version's own),
 * then each later one as it is compared.
 */
function shareElements(previous: readonly unknown[], incoming: unknown[], depth: number): boolean {
  const common = Math.min(previous.length, incoming.length);
  let same = 0;
  let kept: unknown;
  for (; same < common; same++) {
    const was = previous[same];
    const now = incoming[same];
    // Equal primitives settle here without a call; Object.is, since 0 === -0.
    if (Object.is(was, now) || Object.is((kept = reuse(was, now, depth)), was)) continue;
    break;
  }
  if (same === common && previous.length === incoming.length) return true;
  const writable = !Object.isFrozen(incoming);
  if (writable) for (let i = 0; i < same; i++) incoming[i] = previous[i];
  let next = same;
  if (same < common) {
    // The first difference, compared already.
    if (writable && kept !== incoming[same]) incoming[same] = kept;
    next++;
  }
  for (let i = next; i < incoming.length; i++) {
    const now = incoming[i];
    // Elements past the previous version's end are new: reuse() without a previous interns them.
    const shared = reuse(i < common ? previous[i] : undefined, now, depth);
    if (shared !== now && writable) incoming[i] = shared;
  }
  return false;
}

/** As {@link shareElements}, for the properties of plain objects. */
function shareProperties(previous: Readonly<Record<string, unknown>>, incoming: Record<string, unknown>, depth: number): boolean {
  let keys = 0;
  for (const key in incoming) {
    keys++;
    const now = incoming[key];
    // Reading `previous.__proto__` without an own key yields Object.prototype, not a child.
    if (key === '__proto__') return sharePropertiesFrom(previous, incoming, depth, key, now);
    const was = previous[key];
    if (Object.is(was, now)) {
      // A key the previous version lacks is new, even when its value is undefined.
      if (was !== undefined || Object.hasOwn(previous, key)) continue;
      return sharePropertiesFrom(previous, incoming, depth, key, now);
    }
    const kept = reuse(was, now, depth);
    if (Object.is(kept, was)) continue;
    return sharePropertiesFrom(previous, incoming, depth, key, kept);
  }
  for (const _key in previous) keys--;
  if (keys === 0) return true;
  // Unequal only by the keys it lacks: its own are all equal, and shared now.
  if (!Object.isFrozen(incoming)) adoptBefore(previous, incoming, undefined);
  return false;
}

/**
 * The rest of {@link shareProperties} from the first key whose value differs, `first`, already
 * compared (`kept` is what `incoming` keeps there): the equal keys before it take `previous`'s
 * values, the later ones are compared and written one by one.
 */
function sharePropertiesFrom(previous: Readonly<Record<string, unknown>>, incoming: Record<string, unknown>, depth: number, first: string, kept: unknown): false {
  const writable = !Object.isFrozen(incoming);
  if (writable) {
    adoptBefore(previous, incoming, first);
    if (kept !== incoming[first]) incoming[first] = kept;
  }
  let after = false;
  for (const key in incoming) {
    if (!after) {
      after = key === first;
      continue;
    }
    if (key === '__proto__') continue;
    const now = incoming[key];
    const shared = reuse(previous[key], now, depth);
    if (shared !== now && writable) incoming[key] = shared;
  }
  return false;
}

/** Writes `previous`'s value into `incoming` for each key of `incoming` before `stop` (all when undefined): they are equal. */
function adoptBefore(previous: Readonly<Record<string, unknown>>, incoming: Record<string, unknown>, stop: string | undefined): void {
  for (const key in incoming) {
    if (key === stop) return;
    const was = previous[key];
    if (incoming[key] !== was) incoming[key] = was;
  }
}
