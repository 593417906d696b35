import { namespaceIndex, type IndexFunc } from './indexers';
import type { KubeObject } from '../base/object';

/**
 * The guards the indexer puts around your code (index functions, the transform), so that what it
 * throws becomes a rejection that names the step, instead of an error that ends the stream.
 */

/** Thrown by the guard around an index function, so that a rejection can name the index. */
export class IndexFunctionFailure {
  constructor(
    readonly indexName: string,
    readonly cause: unknown,
  ) {}
}

/**
 * The index functions with each user one wrapped to say which index threw. The built-in
 * namespace index stays itself: the snapshot recognises it to serve `list({ namespace })`.
 */
export function guardIndexers<T extends KubeObject>(indexers: Readonly<Record<string, IndexFunc<T>>>): Record<string, IndexFunc<T>> {
  const guarded: Record<string, IndexFunc<T>> = {};
  for (const [name, indexFunc] of Object.entries(indexers)) {
    guarded[name] =
      (indexFunc as IndexFunc) === namespaceIndex
        ? indexFunc
        : (object) => {
            try {
              return indexFunc(object);
            } catch (cause) {
              throw new IndexFunctionFailure(name, cause);
            }
          };
  }
  return guarded;
}

/** The transform's result must still be an object with metadata, or nothing downstream can read it. */
export function checkTransformed<T extends KubeObject>(object: T): T {
  const metadata: unknown = typeof object === 'object' && object !== null ? (object as { metadata?: unknown }).metadata : undefined;
  if (typeof metadata !== 'object' || metadata === null) {
    throw new TypeError(`it returned ${object === null ? 'null' : typeof object === 'object' ? 'an object without metadata' : typeof object}`);
  }
  return object;
}
