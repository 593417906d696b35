import { field, FieldSet, keyed, serializeElement, setItem, pathString, type FieldPath, type JsonValue, type KeyField, type PathElement } from './fieldPath';
import { GRANULAR, memberType, type FieldType, type ListType } from './fieldTypes';

/**
 * Objects walked with their field types, as structured-merge-diff's `typed` package walks them for
 * server-side apply (`typed/tofieldset.go`, `compare.go`, `merge.go`, `remove.go`, `validate.go`):
 * the fields an object sets, what changed between two versions, an applied configuration merged
 * into the live object, and fields removed from an object.
 *
 * Values are wire JSON; an absent member is `undefined`, which differs from `null` as in the Go code
 * (a nil value against a null one).
 */

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isEmptyObject(value: Json | undefined): boolean {
  return value === undefined || Object.keys(value).length === 0;
}

/** A list item that cannot be placed in its list; the message is structured-merge-diff's. */
export class ItemError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ItemError';
  }
}

/** The type of a list's items. */
function itemTypeOf(list: ListType): FieldType {
  return list.type === 'map' ? (list.items ?? GRANULAR) : GRANULAR;
}

/**
 * The path element of one item of a non-atomic list (`listItemToPathElement`): its key fields (or
 * their defaults) for a map list, its value for a set.
 * @throws ItemError for an item the list cannot hold
 */
export function itemElement(item: unknown, list: ListType): PathElement {
  if (list.type === 'map') {
    if (item === null) throw new ItemError('associative list with keys may not have a null element');
    if (!isObject(item)) throw new ItemError('associative list with keys may not have non-map elements');
    const fields: KeyField[] = [];
    for (const name of list.keys) {
      const value = item[name] ?? list.keyDefaults?.[name];
      if (value !== undefined) fields.push({ name, value: value as JsonValue });
    }
    if (fields.length === 0) {
      throw new ItemError(`associative list with keys has an element that omits all key fields ${JSON.stringify(list.keys)} (and doesn't have default values for any key fields)`);
    }
    return keyed(fields);
  }
  if (isObject(item)) throw new ItemError("associative list without keys has an element that's a map type");
  if (Array.isArray(item)) throw new ItemError('not supported: associative list with lists as elements');
  if (item === null) throw new ItemError("associative list without keys has an element that's an explicit null");
  return setItem(item as JsonValue);
}

/**
 * The errors of an applied configuration (`ObjectToTyped` without duplicates allowed), each as
 * `.path: message`: items a list cannot hold, and two items with the same key.
 */
export function validationErrors(value: unknown, type: FieldType): string[] {
  const errors: string[] = [];
  const walk = (node: unknown, nodeType: FieldType, path: FieldPath): void => {
    if (isObject(node)) {
      if (nodeType.atomic === true) return;
      for (const [name, member] of Object.entries(node)) walk(member, memberType(nodeType, name), [...path, field(name)]);
    } else if (Array.isArray(node) && nodeType.list !== undefined) {
      const seen = new Set<string>();
      node.forEach((item, index) => {
        let element: PathElement;
        try {
          element = itemElement(item, nodeType.list!);
        } catch (error) {
          if (!(error instanceof ItemError)) throw error;
          errors.push(`${pathString(path)}: element ${index}: ${error.message}`);
          return;
        }
        const id = serializeElement(element);
        if (seen.has(id)) errors.push(`${pathString(path)}: duplicate entries for key ${pathString([element])}`);
        seen.add(id);
        walk(item, itemTypeOf(nodeType.list!), [...path, element]);
      });
    }
  };
  walk(value, type, []);
  return errors;
}

/**
 * The fields a value sets (`TypedValue.ToFieldSet`): its scalars, atomic lists and objects, the
 * items of its non-atomic lists, and members that are null or empty objects.
 */
export function fieldSetOf(value: unknown, type: FieldType): FieldSet {
  const set = new FieldSet();
  const walk = (node: unknown, nodeType: FieldType, path: FieldPath): void => {
    if (isObject(node)) {
      if (nodeType.atomic === true) {
        set.insert(path);
        return;
      }
      for (const [name, member] of Object.entries(node)) {
        const memberPath = [...path, field(name)];
        walk(member, memberType(nodeType, name), memberPath);
        if (member === null || (isObject(member) && isEmptyObject(member))) set.insert(memberPath);
      }
    } else if (Array.isArray(node)) {
      const list = nodeType.list;
      if (list === undefined) {
        set.insert(path);
        return;
      }
      // An item whose key appears more than once is owned whole, never field by field.
      const entries = entriesOf(node, list);
      const counts = new Map<string, number>();
      for (const entry of entries) counts.set(entry.id, (counts.get(entry.id) ?? 0) + 1);
      for (const entry of entries) {
        const itemPath = [...path, entry.element];
        if (counts.get(entry.id)! === 1) walk(entry.item, itemTypeOf(list), itemPath);
        set.insert(itemPath);
      }
    } else if (node !== null && node !== undefined) {
      set.insert(path);
    }
  };
  walk(value, type, []);
  return set;
}

/** JSON equality: objects member by member in any order, arrays item by item (`value.Equals`). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  if (!isObject(a) || !isObject(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => key in b && jsonEqual(a[key], b[key]));
}

/** What changed from one version of an object to the next (`typed.Comparison`); a path is in one set at most. */
export interface Comparison {
  readonly added: FieldSet;
  readonly modified: FieldSet;
  readonly removed: FieldSet;
}

/** The comparison without `fields` and anything under them (`Comparison.ExcludeFields`). */
export function excludeFields(comparison: Comparison, fields: FieldSet): Comparison {
  if (fields.empty) return comparison;
  return {
    added: comparison.added.recursiveDifference(fields),
    modified: comparison.modified.recursiveDifference(fields),
    removed: comparison.removed.recursiveDifference(fields),
  };
}

interface ListEntry {
  readonly id: string;
  readonly element: PathElement;
  readonly item: unknown;
}

/** The items of a list with their path elements; items the list cannot hold are left out. */
function entriesOf(items: readonly unknown[] | undefined, list: ListType): ListEntry[] {
  const out: ListEntry[] = [];
  for (const item of items ?? []) {
    try {
      const element = itemElement(item, list);
      out.push({ id: serializeElement(element), element, item });
    } catch (error) {
      if (!(error instanceof ItemError)) throw error;
    }
  }
  return out;
}

function groupById(entries: readonly ListEntry[]): Map<string, unknown[]> {
  const groups = new Map<string, unknown[]>();
  for (const entry of entries) {
    const group = groups.get(entry.id);
    if (group === undefined) groups.set(entry.id, [entry.item]);
    else group.push(entry.item);
  }
  return groups;
}

/**
 * Compares two versions of an object (`TypedValue.Compare`): leaves (scalars, atomic lists and
 * objects, empty or null containers) that appear, change or disappear, and the containers and list
 * items that appear or disappear whole.
 */
export function compareObjects(before: unknown, after: unknown, type: FieldType): Comparison {
  const comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  const leaf = (l: unknown, r: unknown, path: FieldPath): void => {
    if (l === undefined) comparison.added.insert(path);
    else if (r === undefined) comparison.removed.insert(path);
    else if (!jsonEqual(l, r)) comparison.modified.insert(path);
  };
  const objectish = (v: unknown): boolean => v === undefined || v === null || isObject(v);
  const listish = (v: unknown): boolean => v === undefined || v === null || Array.isArray(v);
  const walk = (l: unknown, r: unknown, nodeType: FieldType, path: FieldPath): void => {
    if ((isObject(l) || isObject(r)) && objectish(l) && objectish(r)) {
      const lm = isObject(l) ? l : undefined;
      const rm = isObject(r) ? r : undefined;
      if (nodeType.atomic === true || (isEmptyObject(lm) && isEmptyObject(rm))) return leaf(l, r, path);
      for (const name of new Set([...Object.keys(lm ?? {}), ...Object.keys(rm ?? {})])) {
        const lv = lm?.[name];
        const rv = rm?.[name];
        if (lv !== undefined || rv !== undefined) walk(lv, rv, memberType(nodeType, name), [...path, field(name)]);
      }
    } else if ((Array.isArray(l) || Array.isArray(r)) && listish(l) && listish(r)) {
      const ll = Array.isArray(l) ? l : undefined;
      const rl = Array.isArray(r) ? r : undefined;
      const list = nodeType.list;
      if (list === undefined || ((ll?.length ?? 0) === 0 && (rl?.length ?? 0) === 0)) return leaf(l, r, path);
      compareItems(entriesOf(ll, list), entriesOf(rl, list), itemTypeOf(list), path);
    } else {
      return leaf(l, r, path);
    }
    if (l === undefined) comparison.added.insert(path);
    else if (r === undefined) comparison.removed.insert(path);
  };
  const compareItems = (lhs: ListEntry[], rhs: ListEntry[], itemType: FieldType, path: FieldPath): void => {
    const left = groupById(lhs);
    const right = groupById(rhs);
    const elements = new Map<string, PathElement>();
    for (const entry of [...lhs, ...rhs]) if (!elements.has(entry.id)) elements.set(entry.id, entry.element);
    for (const [id, element] of elements) {
      const lList = left.get(id) ?? [];
      const rList = right.get(id) ?? [];
      const itemPath = [...path, element];
      if (lList.length <= 1 && rList.length <= 1) walk(lList[0], rList[0], itemType, itemPath);
      else if (lList.length >= 2 && rList.length >= 2) {
        if (!jsonEqual(lList, rList)) comparison.modified.insert(itemPath);
      } else if (lList.length >= 2) {
        if (rList.length !== 0) walk(undefined, rList[0], itemType, itemPath);
        comparison.removed.insert(itemPath);
      } else {
        if (lList.length !== 0) walk(lList[0], undefined, itemType, itemPath);
        comparison.added.insert(itemPath);
      }
    }
  };
  walk(before, after, type, []);
  return comparison;
}

/** Marks an item of the live list whose key appears more than once: it merges as null. */
const DUPLICATE = Symbol('duplicate');

/**
 * Merges an applied configuration into the live object (`TypedValue.Merge`): the configuration's
 * leaves win, objects merge member by member, map and set lists item by item in the order
 * `merge.go` gives (the configuration's order for items both have, live-only items kept where
 * they were), atomic lists and objects are replaced.
 */
export function mergeObjects(live: unknown, config: unknown, type: FieldType): unknown {
  if (config === undefined) return live;
  if (live === undefined) return config;
  if (isObject(config) || isObject(live)) {
    if (!((isObject(live) || live === null) && (isObject(config) || config === null))) return config;
    const lm = isObject(live) ? live : undefined;
    const cm = isObject(config) ? config : undefined;
    if (type.atomic === true || (isEmptyObject(lm) && isEmptyObject(cm))) return config;
    const out: Json = {};
    for (const name of new Set([...Object.keys(lm ?? {}), ...Object.keys(cm ?? {})])) {
      const merged = mergeObjects(lm?.[name], cm?.[name], memberType(type, name));
      if (merged !== undefined) out[name] = merged;
    }
    return out;
  }
  if (Array.isArray(config) || Array.isArray(live)) {
    const list = type.list;
    const ll = Array.isArray(live) ? live : undefined;
    const cl = Array.isArray(config) ? config : undefined;
    if (list === undefined || (live !== null && ll === undefined) || (config !== null && cl === undefined)) return config;
    if ((ll?.length ?? 0) === 0 && (cl?.length ?? 0) === 0) return config;
    return mergeItems(ll ?? [], cl ?? [], list);
  }
  return config;
}

function mergeItems(live: readonly unknown[], config: readonly unknown[], list: ListType): unknown[] {
  const itemType = itemTypeOf(list);
  const rhs = entriesOf(config, list);
  const observedRhs = new Map(rhs.map((entry) => [entry.id, entry.item]));
  // Live items a list cannot hold stay where they were, each under an identity of its own.
  const lhs: ListEntry[] = live.map((item, index) => {
    try {
      const element = itemElement(item, list);
      return { id: serializeElement(element), element, item };
    } catch (error) {
      if (!(error instanceof ItemError)) throw error;
      return { id: `#${index}`, element: field(''), item };
    }
  });
  const observedLhs = new Map<string, unknown>();
  for (const entry of lhs) observedLhs.set(entry.id, observedLhs.has(entry.id) ? DUPLICATE : entry.item);
  const lhsItem = (id: string): unknown => {
    const item = observedLhs.get(id);
    return item === DUPLICATE ? null : item;
  };
  const sharedOrder = rhs.filter((entry) => observedLhs.has(entry.id)).map((entry) => entry.id);
  let nextShared = sharedOrder.shift();
  const mergedRhs = new Set<string>();
  const out: unknown[] = [];
  const push = (item: unknown): void => {
    if (item !== undefined) out.push(item);
  };
  let l = 0;
  let r = 0;
  while (l < lhs.length || r < rhs.length) {
    if (l < lhs.length && r < rhs.length) {
      const id = lhs[l]!.id;
      if (id === rhs[r]!.id) {
        mergedRhs.add(id);
        push(mergeObjects(lhsItem(id), observedRhs.get(id), itemType));
        l++;
        r++;
        nextShared = sharedOrder.shift();
        continue;
      }
      if (observedRhs.has(id) && nextShared !== undefined && nextShared !== id) {
        l++;
        continue;
      }
    }
    if (l < lhs.length) {
      const id = lhs[l]!.id;
      if (!observedRhs.has(id)) {
        push(mergeObjects(lhs[l]!.item, undefined, itemType));
        l++;
        continue;
      } else if (mergedRhs.has(id)) {
        l++;
      }
    }
    if (r < rhs.length) {
      const id = rhs[r]!.id;
      mergedRhs.add(id);
      push(mergeObjects(observedLhs.has(id) ? lhsItem(id) : undefined, observedRhs.get(id), itemType));
      r++;
      if (nextShared !== undefined && nextShared === id) nextShared = sharedOrder.shift();
    }
  }
  return out;
}

/**
 * The object without the fields of `set` (`TypedValue.RemoveItems`): a member or list item in the
 * set goes with everything under it; an object or list left empty goes too.
 */
export function removeFields(value: unknown, set: FieldSet, type: FieldType): unknown {
  if (set.empty) return value;
  if (Array.isArray(value)) {
    const list = type.list;
    if (value.length === 0 || list === undefined) return undefined;
    const out: unknown[] = [];
    for (const item of value) {
      let element: PathElement;
      try {
        element = itemElement(item, list);
      } catch (error) {
        if (!(error instanceof ItemError)) throw error;
        out.push(item);
        continue;
      }
      if (set.hasMember(element)) continue;
      const under = set.under(element);
      const kept = under.empty ? item : removeFields(item, under, itemTypeOf(list));
      if (kept !== undefined) out.push(kept);
    }
    return out.length > 0 ? out : undefined;
  }
  if (isObject(value)) {
    if (type.atomic === true) return undefined;
    const out: Json = {};
    for (const [name, member] of Object.entries(value)) {
      const element = field(name);
      if (set.hasMember(element)) continue;
      const under = set.under(element);
      const kept = under.empty ? member : removeFields(member, under, memberType(type, name));
      if (kept !== undefined) out[name] = kept;
    }
    return Object.keys(out).length > 0 ? out : undefined;
  }
  return value;
}
