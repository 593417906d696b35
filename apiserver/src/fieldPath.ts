/**
 * Field paths and sets of them, as server-side apply records field ownership
 * (sigs.k8s.io/structured-merge-diff `fieldpath`): a path is a list of elements, each a member
 * name (`.spec`), a keyed list item (`[name="app"]`), a set item (`[="a"]`) or an index; a set
 * holds paths as a tree of members and children; `metadata.managedFields[].fieldsV1` is that tree
 * as JSON (`fieldpath/serialize.go`), with `"."` marking a node that is itself a member.
 */

/** A JSON value as decoded (scalars, arrays, objects, null). */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** One member of a key: the name of a key field of a list item and its value. */
export interface KeyField {
  readonly name: string;
  readonly value: JsonValue;
}

/** One step of a field path (`fieldpath.PathElement`). */
export type PathElement =
  | { readonly kind: 'field'; readonly name: string }
  /** A list item found by its key fields, sorted by name (`value.FieldList.Sort`). */
  | { readonly kind: 'key'; readonly fields: readonly KeyField[] }
  /** An item of a set (a list of scalars): the value itself. */
  | { readonly kind: 'value'; readonly value: JsonValue }
  | { readonly kind: 'index'; readonly index: number };

/** A path from the root of an object. */
export type FieldPath = readonly PathElement[];

/** A member name as a path element. */
export function field(name: string): PathElement {
  return { kind: 'field', name };
}

/** A keyed item as a path element, its key fields sorted by name as the Go code sorts them. */
export function keyed(fields: readonly KeyField[]): PathElement {
  return { kind: 'key', fields: [...fields].sort((a, b) => compareStrings(a.name, b.name)) };
}

/** An item of a set of scalars as a path element. */
export function setItem(value: JsonValue): PathElement {
  return { kind: 'value', value };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Bytewise string order (`strings.Compare`; equal to UTF-16 order for the ASCII of field names). */
function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * `value.Compare`: numbers before strings before booleans before lists before maps before null;
 * lists item by item, then by length; maps by sorted keys, then values.
 */
export function compareValues(a: JsonValue, b: JsonValue): number {
  const rank = (v: JsonValue): number => (typeof v === 'number' ? 0 : typeof v === 'string' ? 1 : typeof v === 'boolean' ? 2 : Array.isArray(v) ? 3 : v === null ? 5 : 4);
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (typeof a === 'number') return a - (b as number);
  if (typeof a === 'string') return compareStrings(a, b as string);
  if (typeof a === 'boolean') return a === b ? 0 : a ? 1 : -1;
  if (Array.isArray(a)) {
    const bl = b as readonly JsonValue[];
    for (let i = 0; i < Math.min(a.length, bl.length); i++) {
      const c = compareValues(a[i]!, bl[i]!);
      if (c !== 0) return c;
    }
    return a.length - bl.length;
  }
  if (a === null) return 0;
  const am = a as Record<string, JsonValue>;
  const bm = b as Record<string, JsonValue>;
  const ak = Object.keys(am).sort(compareStrings);
  const bk = Object.keys(bm).sort(compareStrings);
  for (let i = 0; i < Math.min(ak.length, bk.length); i++) {
    const c = compareStrings(ak[i]!, bk[i]!) || compareValues(am[ak[i]!]!, bm[bk[i]!]!);
    if (c !== 0) return c;
  }
  return ak.length - bk.length;
}

/** `PathElement.Compare`: fields, then keys, then values, then indices, each in their own order. */
export function compareElements(a: PathElement, b: PathElement): number {
  const rank = { field: 0, key: 1, value: 2, index: 3 } as const;
  if (a.kind !== b.kind) return rank[a.kind] - rank[b.kind];
  switch (a.kind) {
    case 'field':
      return compareStrings(a.name, (b as typeof a).name);
    case 'key': {
      const other = (b as typeof a).fields;
      for (let i = 0; i < Math.min(a.fields.length, other.length); i++) {
        const c = compareStrings(a.fields[i]!.name, other[i]!.name) || compareValues(a.fields[i]!.value, other[i]!.value);
        if (c !== 0) return c;
      }
      return a.fields.length - other.length;
    }
    case 'value':
      return compareValues(a.value, (b as typeof a).value);
    case 'index':
      return a.index - (b as typeof a).index;
  }
}

/**
 * JSON as Go's encoder writes it (jsoniter's standard-library mode): object keys sorted, and `<`,
 * `>`, `&`, U+2028, U+2029 escaped.
 */
export function goJson(value: JsonValue): string {
  if (value === null || typeof value !== 'object') {
    const text = JSON.stringify(value);
    return typeof value === 'string' ? text.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : text;
  }
  if (Array.isArray(value)) return `[${value.map(goJson).join(',')}]`;
  const record = value as Record<string, JsonValue>;
  return `{${Object.keys(record)
    .sort(compareStrings)
    .map((key) => `${goJson(key)}:${goJson(record[key]!)}`)
    .join(',')}}`;
}

/** The element as a fieldsV1 key (`serialize-pe.go`): `f:name`, `k:{"name":"app"}`, `v:"a"`, `i:0`. */
export function serializeElement(element: PathElement): string {
  switch (element.kind) {
    case 'field':
      return `f:${element.name}`;
    case 'key':
      return `k:{${element.fields.map((f) => `${goJson(f.name)}:${goJson(f.value)}`).join(',')}}`;
    case 'value':
      return `v:${goJson(element.value)}`;
    case 'index':
      return `i:${element.index}`;
  }
}

/** A fieldsV1 key back to its element. @throws Error for a key that is none of the four kinds */
export function parseElement(text: string): PathElement {
  const body = text.slice(2);
  switch (text.slice(0, 2)) {
    case 'f:':
      return field(body);
    case 'v:':
      return setItem(JSON.parse(body) as JsonValue);
    case 'k:': {
      const parsed: unknown = JSON.parse(body);
      if (!isRecord(parsed)) throw new Error(`a key element must be a JSON object: ${text}`);
      return keyed(Object.entries(parsed).map(([name, value]) => ({ name, value: value as JsonValue })));
    }
    case 'i:': {
      if (!/^-?\d+$/.test(body)) throw new Error(`strconv.Atoi: parsing ${JSON.stringify(body)}: invalid syntax`);
      return { kind: 'index', index: Number(body) };
    }
    default:
      throw new Error(text.length < 2 ? 'key must be 2 characters long:' : text[1] !== ':' ? `missing colon: ${text}` : 'unknown path element type');
  }
}

/** `value.ToString`: how a conflict message prints a key or set value (strings quoted, maps as `k=v` runs). */
function valueString(value: JsonValue): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value !== 'object') return String(value);
  if (Array.isArray(value)) return `[${value.map(valueString).join(',')}]`;
  return Object.entries(value as Record<string, JsonValue>)
    .map(([key, item]) => `${key}=${valueString(item)}`)
    .join('');
}

/** `Path.String()`: `.spec.containers[name="app"].image`, as conflicts name fields. */
export function pathString(path: FieldPath): string {
  return path
    .map((element) => {
      switch (element.kind) {
        case 'field':
          return `.${element.name}`;
        case 'key':
          return `[${element.fields.map((f) => `${f.name}=${valueString(f.value)}`).join(',')}]`;
        case 'value':
          return `[=${valueString(element.value)}]`;
        case 'index':
          return `[${element.index}]`;
      }
    })
    .join('');
}

interface Child {
  readonly element: PathElement;
  readonly set: FieldSet;
}

function sortedByElement<T>(entries: Iterable<T>, elementOf: (entry: T) => PathElement): T[] {
  return [...entries].sort((a, b) => compareElements(elementOf(a), elementOf(b)));
}

/**
 * A set of field paths (`fieldpath.Set`): the paths that end at a node are its members, the
 * paths that go through one of its elements are that element's child set. Sets are built by
 * `insert` and then only read; the operations return new sets.
 */
export class FieldSet {
  private readonly memberMap = new Map<string, PathElement>();
  private readonly childMap = new Map<string, Child>();

  /** A set of the given paths. */
  static of(...paths: readonly FieldPath[]): FieldSet {
    const set = new FieldSet();
    for (const path of paths) set.insert(path);
    return set;
  }

  /** Adds a path (the empty path, the root, is never a member). */
  insert(path: FieldPath): void {
    if (path.length === 0) return;
    let node: FieldSet = this;
    for (let i = 0; i < path.length - 1; i++) node = node.childFor(path[i]!);
    const last = path[path.length - 1]!;
    node.memberMap.set(serializeElement(last), last);
  }

  private childFor(element: PathElement): FieldSet {
    const id = serializeElement(element);
    let child = this.childMap.get(id);
    if (child === undefined) {
      child = { element, set: new FieldSet() };
      this.childMap.set(id, child);
    }
    return child.set;
  }

  private addChild(element: PathElement, set: FieldSet): void {
    if (!set.empty) this.childMap.set(serializeElement(element), { element, set });
  }

  /** Whether `path` is a member. */
  has(path: FieldPath): boolean {
    if (path.length === 0) return false;
    let node: FieldSet | undefined = this;
    for (let i = 0; i < path.length - 1 && node !== undefined; i++) node = node.childMap.get(serializeElement(path[i]!))?.set;
    return node !== undefined && node.memberMap.has(serializeElement(path[path.length - 1]!));
  }

  /** Whether `element` (a direct member of this node) is a member. */
  hasMember(element: PathElement): boolean {
    return this.memberMap.has(serializeElement(element));
  }

  /** The paths under `element`, relative to it (`Set.WithPrefix`); empty when none. */
  under(element: PathElement): FieldSet {
    return this.childMap.get(serializeElement(element))?.set ?? EMPTY;
  }

  /** No member anywhere (`Set.Empty`). */
  get empty(): boolean {
    if (this.memberMap.size > 0) return false;
    for (const child of this.childMap.values()) if (!child.set.empty) return false;
    return true;
  }

  /** Every path, members of a node before the paths through its children, each in element order (`Set.Iterate`). */
  paths(): FieldPath[] {
    const out: FieldPath[] = [];
    const walk = (set: FieldSet, prefix: FieldPath): void => {
      for (const element of sortedByElement(set.memberMap.values(), (e) => e)) out.push([...prefix, element]);
      for (const child of sortedByElement(set.childMap.values(), (c) => c.element)) walk(child.set, [...prefix, child.element]);
    };
    walk(this, []);
    return out;
  }

  /** Paths in either set. */
  union(other: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [id, element] of this.memberMap) out.memberMap.set(id, element);
    for (const [id, element] of other.memberMap) out.memberMap.set(id, element);
    for (const [id, child] of this.childMap) {
      const theirs = other.childMap.get(id);
      out.addChild(child.element, theirs === undefined ? child.set : child.set.union(theirs.set));
    }
    for (const [id, child] of other.childMap) if (!this.childMap.has(id)) out.addChild(child.element, child.set);
    return out;
  }

  /** Paths in both sets. */
  intersection(other: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [id, element] of this.memberMap) if (other.memberMap.has(id)) out.memberMap.set(id, element);
    for (const [id, child] of this.childMap) {
      const theirs = other.childMap.get(id);
      if (theirs !== undefined) out.addChild(child.element, child.set.intersection(theirs.set));
    }
    return out;
  }

  /** Paths of this set that are not paths of `other` (`Set.Difference`: the same path, not its subtree). */
  difference(other: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [id, element] of this.memberMap) if (!other.memberMap.has(id)) out.memberMap.set(id, element);
    for (const [id, child] of this.childMap) {
      const theirs = other.childMap.get(id);
      out.addChild(child.element, theirs === undefined ? child.set : child.set.difference(theirs.set));
    }
    return out;
  }

  /** Paths of this set that are neither paths of `other` nor under one of its members (`Set.RecursiveDifference`). */
  recursiveDifference(other: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [id, element] of this.memberMap) if (!other.memberMap.has(id)) out.memberMap.set(id, element);
    for (const [id, child] of this.childMap) {
      if (other.memberMap.has(id)) continue;
      const theirs = other.childMap.get(id);
      out.addChild(child.element, theirs === undefined ? child.set : child.set.recursiveDifference(theirs.set));
    }
    return out;
  }

  /**
   * This set with every member name that leads to a member made a member too
   * (`Set.EnsureNamedFieldsAreMembers`): removing an object's field then removes its subtree.
   */
  withFieldsAsMembers(): FieldSet {
    const out = new FieldSet();
    for (const [id, element] of this.memberMap) out.memberMap.set(id, element);
    for (const [id, child] of this.childMap) {
      if (child.element.kind === 'field') out.memberMap.set(id, child.element);
      out.addChild(child.element, child.set.withFieldsAsMembers());
    }
    return out;
  }

  /** The members of this node (not the paths through children). */
  members(): PathElement[] {
    return [...this.memberMap.values()];
  }

  /** The set as `fieldsV1` JSON (`Set.ToJSON`): element keys in element order, `"."` first where a node is also a member. */
  toFieldsV1(): Record<string, unknown> {
    return this.emit(false);
  }

  private emit(includeSelf: boolean): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    if (includeSelf && !this.empty) out['.'] = {};
    const entries = sortedByElement(
      new Set([...this.memberMap.keys(), ...this.childMap.keys()]),
      (id) => this.childMap.get(id)?.element ?? this.memberMap.get(id)!,
    );
    for (const id of entries) {
      const child = this.childMap.get(id);
      out[id] = child === undefined ? {} : child.set.emit(this.memberMap.has(id));
    }
    return out;
  }

  /** A set from `fieldsV1` JSON. @throws Error for JSON that is not a fields tree */
  static fromFieldsV1(json: unknown): FieldSet {
    if (!isRecord(json)) throw new Error('fieldsV1 must be a JSON object');
    const set = new FieldSet();
    for (const [key, value] of Object.entries(json)) {
      if (key === '.') continue;
      const element = parseElement(key);
      if (!isRecord(value)) throw new Error(`fieldsV1 ${key} must map to a JSON object`);
      const keys = Object.keys(value);
      if (keys.length === 0 || '.' in value) set.memberMap.set(serializeElement(element), element);
      if (keys.some((k) => k !== '.')) set.addChild(element, FieldSet.fromFieldsV1(value));
    }
    return set;
  }
}

const EMPTY = new FieldSet();
