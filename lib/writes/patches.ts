import type { Patch } from 'immer';

/**
 * The two patch formats a write is sent in, derived from an edit: RFC 6902 JSON Patch from immer's
 * patches (the operations the recipe made, path by path), and RFC 7386 JSON merge patch from the
 * two versions of the object (a walk that skips every subtree the edit left shared).
 */

/** One RFC 6902 operation, as the API server's JSON Patch (`application/json-patch+json`) reads it. */
export type JsonPatchOperation =
  | { readonly op: 'test' | 'add' | 'replace'; readonly path: string; readonly value: unknown }
  | { readonly op: 'remove'; readonly path: string };

/** An RFC 7386 merge patch (`application/merge-patch+json`): the members to set, `null` for those to delete. */
export type MergePatch = Readonly<Record<string, unknown>>;

/**
 * An RFC 6901 JSON Pointer for a path of keys, with `~` and `/` in a key escaped as that RFC says,
 * so that a label key like `app.kubernetes.io/name` stays one segment.
 *
 * ## Example
 * ```ts
 * jsonPointer(['spec', 'containers', 0, 'image']); // '/spec/containers/0/image'
 * ```
 */
export function jsonPointer(path: readonly (string | number)[]): string {
  let pointer = '';
  for (const part of path) pointer += `/${String(part).replace(/~/g, '~0').replace(/\//g, '~1')}`;
  return pointer;
}

/**
 * immer's patches as JSON Patch operations. JSON has no `undefined`: a member set to `undefined`
 * is absent once serialised, so an `add` or `replace` of `undefined` becomes a `remove` where the
 * base had the member, and nothing where it did not.
 *
 * ## Example
 * ```ts
 * toJsonPatch([{ op: 'add', path: ['metadata', 'labels', 'tier'], value: 'web' }], base);
 * // [{ op: 'add', path: '/metadata/labels/tier', value: 'web' }]
 * ```
 */
export function toJsonPatch(patches: readonly Patch[], base: unknown): JsonPatchOperation[] {
  const operations: JsonPatchOperation[] = [];
  for (const { op, path, value } of patches) {
    const pointer = jsonPointer(path);
    if (op === 'remove') operations.push({ op, path: pointer });
    else if (value !== undefined) operations.push({ op, path: pointer, value });
    else if (hasMember(base, path)) operations.push({ op: 'remove', path: pointer });
  }
  return operations;
}

function hasMember(root: unknown, path: readonly (string | number)[]): boolean {
  let node = root;
  for (const key of path) {
    if (typeof node !== 'object' || node === null || !Object.prototype.hasOwnProperty.call(node, key)) return false;
    node = (node as Record<string | number, unknown>)[key];
  }
  return node !== undefined;
}

/**
 * The RFC 7386 merge patch that takes `before` to `after`: members that differ, recursively into
 * objects, `null` for members `after` lacks, arrays and scalars whole (a merge patch cannot reach
 * into an array). Subtrees the two share (`===`) are skipped unvisited, so an edit's patch costs
 * what it changed, not the object's size. Undefined when nothing differs.
 *
 * A `null` in `after` deletes the member on the server, which is how the format reads it: use a
 * JSON Patch to set a field to `null`.
 *
 * ## Example
 * ```ts
 * mergePatchOf({ a: 1, b: { c: 2, d: 3 }, e: [1] }, { a: 1, b: { c: 2 }, e: [1, 2] }); // { b: { d: null }, e: [1, 2] }
 * ```
 */
export function mergePatchOf(before: unknown, after: unknown): unknown {
  if (before === after) return undefined;
  if (!isPlainObject(before) || !isPlainObject(after)) return after === undefined ? null : after;
  let patch: Record<string, unknown> | undefined;
  for (const key of Object.keys(after)) {
    const value = after[key];
    if (value === undefined) continue;
    const member = Object.prototype.hasOwnProperty.call(before, key) ? mergePatchOf(before[key], value) : value;
    if (member !== undefined) (patch ??= {})[key] = member;
  }
  for (const key of Object.keys(before)) {
    if (before[key] !== undefined && (!Object.prototype.hasOwnProperty.call(after, key) || after[key] === undefined)) (patch ??= {})[key] = null;
  }
  return patch;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
