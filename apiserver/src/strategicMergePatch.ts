import type { Resource } from 'rx-informer';
import type { KubeObject } from 'rx-informer';
import { rootTypeOf, type FieldType } from './fieldTypes';

/**
 * Strategic merge patch (`application/strategic-merge-patch+json`), the patch kubectl sends for
 * built-in kinds (`kubectl patch`, `set image`, client-side `apply`), as apimachinery's
 * `strategicpatch.StrategicMergePatch` applies it:
 *
 * - objects merge key by key and `null` deletes, as in a JSON merge patch;
 * - a list whose field has a patch merge key (containers by `name`, ports by `containerPort`, ...,
 *   from the `patchMergeKey` tags of k8s.io/api, in the table of `fieldTypes.ts` that server-side
 *   apply reads too) merges item by item: a patch item
 *   updates the item with the same key, or is appended; `{"$patch": "delete", <key>: ...}` removes
 *   one, `{"$patch": "replace"}` replaces the whole list with the other items;
 * - a list of strings with the merge strategy (`metadata.finalizers`) is a union, and
 *   `$deleteFromPrimitiveList/<field>` removes values from it;
 * - every other list is replaced;
 * - `$patch: replace` or `delete` on an object replaces or removes it, `$retainKeys` drops the
 *   members it does not list, `$setElementOrder/<field>` orders a merged list.
 *
 * Differences: only the kinds the loopback server serves have their merge keys here (any other
 * resource merges its lists as a JSON merge patch would: replaced), and `$setElementOrder` puts the
 * items it lists first, in its order, and the server's other items after them (the API server
 * interleaves them where they were).
 */

/** A patch that cannot be applied: the code and message the API server answers. */
export class StrategicMergePatchError extends Error {
  constructor(
    readonly code: 400 | 422 | 500,
    message: string,
  ) {
    super(message);
    this.name = 'StrategicMergePatchError';
  }
}

/** The strategic merge patch's view of a field's list type: its `patchMergeKey`, or a union of scalars. */
function mergeKeyOf(type: FieldType | undefined): string | undefined {
  return type?.list?.type === 'map' ? type.list.patchMergeKey : undefined;
}

function mergesScalars(type: FieldType | undefined): boolean {
  return type?.list?.type === 'set' && type.list.patchMerge;
}

/** The type of a list's items. */
function itemType(type: FieldType | undefined): FieldType | undefined {
  return type?.list?.type === 'map' ? type.list.items : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Go's `%v` of a decoded JSON value, as the patch library's error messages print it. */
function goValue(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (Array.isArray(value)) return `[${value.map(goValue).join(' ')}]`;
  if (isRecord(value)) return `map[${Object.keys(value).sort().map((key) => `${key}:${goValue(value[key])}`).join(' ')}]`;
  return String(value);
}

const PATCH = '$patch';
const RETAIN_KEYS = '$retainKeys';
const SET_ELEMENT_ORDER = '$setElementOrder/';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList/';

function mergeObject(original: Record<string, unknown>, patch: Record<string, unknown>, meta: FieldType | undefined): Record<string, unknown> | undefined {
  const directive = patch[PATCH];
  if (directive !== undefined) {
    if (directive === 'delete') return undefined;
    if (directive === 'replace') return stripDirectives(patch);
    if (directive !== 'merge') throw new StrategicMergePatchError(400, `unknown patch type: ${goValue(directive)} in map: ${goValue(patch)}`);
  }
  const result: Record<string, unknown> = { ...original };
  const retain = patch[RETAIN_KEYS];
  if (retain !== undefined) {
    if (!Array.isArray(retain)) throw new StrategicMergePatchError(400, 'invalid patch: the $retainKeys directive must be a list');
    for (const key of Object.keys(patch)) {
      if (!key.startsWith('$') && !retain.includes(key)) throw new StrategicMergePatchError(422, 'doesn\'t match retainKeys');
    }
    for (const key of Object.keys(result)) if (!retain.includes(key)) delete result[key];
  }
  for (const [key, value] of Object.entries(patch)) {
    if (key === PATCH || key === RETAIN_KEYS || key.startsWith(SET_ELEMENT_ORDER)) continue;
    if (key.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
      const field = key.slice(DELETE_FROM_PRIMITIVE_LIST.length);
      const current = result[field];
      if (!Array.isArray(value)) throw new StrategicMergePatchError(400, 'invalid patch: $deleteFromPrimitiveList must be a list');
      if (Array.isArray(current)) result[field] = current.filter((item) => !value.includes(item));
      continue;
    }
    if (value === null) {
      delete result[key];
      continue;
    }
    const field = meta?.fields?.[key];
    const mergeKey = mergeKeyOf(field);
    const current = result[key];
    if (isRecord(value)) {
      const merged = mergeObject(isRecord(current) ? current : {}, value, field);
      if (merged === undefined) delete result[key];
      else result[key] = merged;
    } else if (Array.isArray(value) && mergeKey !== undefined) {
      result[key] = mergeList(Array.isArray(current) ? current : [], value, mergeKey, itemType(field));
    } else if (Array.isArray(value) && mergesScalars(field)) {
      result[key] = [...new Set([...(Array.isArray(current) ? current : []), ...value])];
    } else {
      result[key] = Array.isArray(value) ? value.map((item) => (isRecord(item) ? stripDirectives(item) : item)) : value;
    }
    const order = patch[`${SET_ELEMENT_ORDER}${key}`];
    if (Array.isArray(order) && Array.isArray(result[key])) result[key] = ordered(result[key] as unknown[], order, mergeKey);
  }
  return result;
}

function mergeList(original: readonly unknown[], patch: readonly unknown[], mergeKey: string, itemMeta: FieldType | undefined): unknown[] {
  if (patch.some((item) => isRecord(item) && item[PATCH] === 'replace')) {
    return patch.filter((item) => !(isRecord(item) && item[PATCH] === 'replace')).map((item) => (isRecord(item) ? stripDirectives(item) : item));
  }
  const result = [...original];
  const indexOf = (key: unknown): number => result.findIndex((item) => isRecord(item) && item[mergeKey] === key);
  for (const item of patch) {
    if (!isRecord(item)) throw new StrategicMergePatchError(500, `unable to find api field in struct for the list item ${goValue(item)}`);
    if (!(mergeKey in item)) throw new StrategicMergePatchError(500, `map: ${goValue(item)} does not contain declared merge key: ${mergeKey}`);
    const at = indexOf(item[mergeKey]);
    if (item[PATCH] === 'delete') {
      if (at >= 0) result.splice(at, 1);
      continue;
    }
    if (at < 0) result.push(mergeObject({}, item, itemMeta));
    else result[at] = mergeObject(result[at] as Record<string, unknown>, item, itemMeta);
  }
  return result.filter((item) => item !== undefined);
}

/** `$setElementOrder`: the listed items first, in its order; the others after, as they were. */
function ordered(items: readonly unknown[], order: readonly unknown[], mergeKey: string | undefined): unknown[] {
  const keyOf = (item: unknown): unknown => (mergeKey !== undefined && isRecord(item) ? item[mergeKey] : item);
  const wanted = order.map((entry) => (mergeKey !== undefined && isRecord(entry) ? entry[mergeKey] : entry));
  const listed = wanted.flatMap((key) => items.filter((item) => keyOf(item) === key));
  return [...listed, ...items.filter((item) => !wanted.includes(keyOf(item)))];
}

function stripDirectives(value: Record<string, unknown>): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value)) {
    if (key.startsWith('$')) continue;
    result[key] = isRecord(member) ? stripDirectives(member) : member;
  }
  return result;
}

/**
 * Applies a strategic merge patch (already parsed) to an object of `resource`.
 * @throws StrategicMergePatchError for a patch that is not an object, or a malformed directive
 */
export function strategicMergePatch(resource: Resource<KubeObject>, original: KubeObject, patch: unknown): KubeObject {
  if (patch === null) return original;
  if (!isRecord(patch)) {
    throw new StrategicMergePatchError(400, `json: cannot unmarshal ${Array.isArray(patch) ? 'array' : typeof patch === 'boolean' ? 'bool' : typeof patch} into Go value of type map[string]interface {}`);
  }
  return (mergeObject(original as unknown as Record<string, unknown>, patch, rootTypeOf(resource)) ?? {}) as unknown as KubeObject;
}
