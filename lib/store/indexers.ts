/**
 * Index functions for `indexer({ indexers })`, client-go's Indexers. An index function maps an
 * object to any number of index values; the snapshot then answers "which objects yield value v"
 * in O(log n). Index functions must be pure: the indexer calls them again on the cached object
 * to find which postings to drop when it changes.
 */
import type { KubeObject } from '../base/object';

/** Maps an object to its index values (none, one or several; duplicates are ignored). */
export type IndexFunc<T extends KubeObject = KubeObject> = (object: T) => readonly string[];

/** The name of the namespace index, client-go's NamespaceIndex. */
export const NAMESPACE_INDEX = 'namespace';

/** The conventional name for {@link ownerIndex}. */
export const OWNER_INDEX = 'owner';

const NONE: readonly string[] = Object.freeze([]);

/**
 * The object's namespace ('' for cluster-scoped objects), as client-go's MetaNamespaceIndexFunc.
 * The default index, and the one `snapshot.list({ namespace })` uses.
 */
export const namespaceIndex: IndexFunc = (object) => [object.metadata.namespace ?? ''];

/** Indexes by the value of one label; objects without the label are not indexed. */
export function labelIndex(labelKey: string): IndexFunc {
  return (object) => {
    const labels = object.metadata.labels;
    if (labels === undefined || labels === null || !Object.hasOwn(labels, labelKey)) return NONE;
    const value: unknown = labels[labelKey];
    return typeof value === 'string' ? [value] : NONE;
  };
}

/** Indexes by the uid of every owner reference, to find an owner's dependents. */
export const ownerIndex: IndexFunc = (object) => {
  const references = object.metadata.ownerReferences;
  if (!Array.isArray(references)) return NONE;
  const uids: string[] = [];
  for (const reference of references as readonly unknown[]) {
    const uid: unknown = typeof reference === 'object' && reference !== null ? (reference as { uid?: unknown }).uid : undefined;
    if (typeof uid === 'string' && uid !== '') uids.push(uid);
  }
  return uids;
};

/**
 * Indexes by the value at a dotted path such as `spec.nodeName`: a string, number or boolean
 * yields its text, an array of them yields each. Missing paths and other values yield nothing.
 * Only own properties are followed, so `__proto__.x` reads nothing.
 */
export function fieldIndex(path: string): IndexFunc {
  const segments = path.split('.');
  if (segments.some((segment) => segment === '')) throw new TypeError(`invalid field path ${JSON.stringify(path)}`);
  return (object) => {
    let current: unknown = object;
    for (const segment of segments) {
      if (typeof current !== 'object' || current === null || Array.isArray(current) || !Object.hasOwn(current, segment)) return NONE;
      current = (current as Record<string, unknown>)[segment];
    }
    if (Array.isArray(current)) {
      const values: string[] = [];
      for (const item of current as readonly unknown[]) {
        const text = scalarText(item);
        if (text !== undefined) values.push(text);
      }
      return values;
    }
    const text = scalarText(current);
    return text === undefined ? NONE : [text];
  };
}

function scalarText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}
