import type { ReplaceDelta } from './delta';
import type { KubeObject } from '../base/object';

/**
 * A streaming list's initial events, passed on as Replace pages as they arrive, so that they flow
 * into the new store as a paged list's pages do instead of being held until the closing bookmark:
 * a whole list held and applied in one go would block the event loop for as long as it takes to
 * apply. At most one page of objects is held here.
 */

/** Where the reflector puts a streaming list's initial events. */
export interface InitialEventPages<T extends KubeObject> {
  /** An ADDED (or MODIFIED) initial event: the object, as of now. */
  put(object: T): void;
  /** A DELETED event before the closing bookmark. */
  remove(object: T): void;
  /** The initial-events-end bookmark: emits the last page, at `resourceVersion`. */
  end(resourceVersion: string): void;
}

/**
 * Collects initial events into pages of `pageSize` objects and emits each page as it fills: the
 * first with `first`, the one at `end` with `last` and the bookmark's resourceVersion, those in
 * between at ''. Within a page an object changed again replaces its earlier version, and a
 * DELETED takes it out; since an earlier page may hold it, it also travels in the page's
 * `deleted` (applied before the page's items, so an object deleted and created again stays).
 * Objects are told apart by `namespace/name`; the indexer checks and keys them.
 *
 * ## Example
 * ```ts
 * const pages = initialEventPages<Pod>(500, (page) => subscriber.next(page));
 * pages.put(podA);
 * pages.remove(podB);
 * pages.end('1042'); // emits the last page
 * ```
 *
 * @param pageSize Objects per page (at least 1).
 * @param emit Receives each page, and how many objects the pages so far held.
 * @returns The sink for one streaming list's initial events.
 */
export function initialEventPages<T extends KubeObject>(pageSize: number, emit: (page: ReplaceDelta<T>, listedItems: number) => void): InitialEventPages<T> {
  let items = new Map<string, T>();
  let deleted = new Map<string, T>();
  let first = true;
  let listedItems = 0;
  const flush = (last: boolean, resourceVersion: string): void => {
    const page: ReplaceDelta<T> = { type: 'Replace', items: Array.from(items.values()), first, last, resourceVersion };
    listedItems += items.size;
    items = new Map();
    first = false;
    if (deleted.size === 0) return emit(page, listedItems);
    const withDeleted: ReplaceDelta<T> = { ...page, deleted: Array.from(deleted.values()) };
    deleted = new Map();
    emit(withDeleted, listedItems);
  };
  return {
    put: (object) => {
      items.set(keyOf(object), object);
      if (items.size >= pageSize) flush(false, '');
    },
    remove: (object) => {
      const key = keyOf(object);
      items.delete(key);
      deleted.set(key, object);
      if (deleted.size >= pageSize) flush(false, '');
    },
    end: (resourceVersion) => flush(true, resourceVersion),
  };
}

/** Tells objects apart without throwing on a malformed one (the indexer reports that). */
function keyOf(object: KubeObject): string {
  const meta = object.metadata as Partial<KubeObject['metadata']> | undefined;
  return `${meta?.namespace ?? ''}/${meta?.name ?? ''}`;
}
