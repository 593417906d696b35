import type { RejectionOutcome } from '../base/errors';
import type { KubeObject } from '../base/object';
import type { NamespaceScope, ReplaceDelta } from '../reflector/delta';
import { sameResourceVersion, type AddChange, type Change, type DeleteChange, type NamespaceSetMark, type UpdateChange } from './change';
import type { IndexedSnapshot } from './indexedSnapshot';

/** What a namespace's relist needs from the reducer's step: keys, stored objects, rejections. */
export interface RelistObjects<T extends KubeObject> {
  /** The object's cache key; undefined (rejected) when it has none. */
  keyOf(incoming: T): string | undefined;
  /** What is stored for `incoming` (shared, transformed, frozen); undefined when rejected. */
  store(key: string, incoming: T, replaced: T | undefined, outcome: RejectionOutcome): T | undefined;
  /** Rejects a write that an index function failed; rethrows anything else. */
  indexFailed(failure: unknown, key: string, outcome: RejectionOutcome): undefined;
}

/**
 * A Replace of one namespace (a `NamespaceScope`) whose last page has not arrived: the objects
 * listed so far, by key, in first-seen order. Unlike a Replace of everything, it cannot fill a
 * new store, since the other namespaces stay: it keeps the listed objects (the cached instance
 * for one whose resourceVersion did not change, so no second copy is retained) and, at the last
 * page, edits the cache in place of that namespace's objects only. Its cost is O(objects in the
 * namespace), whatever the size of the cache. Internal: the indexer's.
 */
export class NamespaceRelist<T extends KubeObject> {
  private readonly listed = new Map<string, T>();

  /**
   * Adds a page: its `deleted` leave the relist, then its items go in (a key listed twice keeps
   * its first place and its last version). A rejected new object is left out; a rejected version
   * of a cached one keeps the cached version.
   */
  page(page: ReplaceDelta<T>, current: IndexedSnapshot<T>, objects: RelistObjects<T>): void {
    for (const gone of page.deleted ?? []) {
      const key = objects.keyOf(gone);
      if (key !== undefined) this.listed.delete(key);
    }
    for (const incoming of page.items) {
      const key = objects.keyOf(incoming);
      if (key === undefined) continue;
      const cached = current.get(key);
      const version = incoming.metadata.resourceVersion;
      const unchanged = cached !== undefined && version && cached.metadata.resourceVersion === version;
      const object = unchanged ? cached : (objects.store(key, incoming, cached, cached === undefined ? 'left-out' : 'kept-previous') ?? cached);
      if (object !== undefined) this.listed.set(key, object);
    }
  }

  /**
   * The cache with this namespace replaced: deletes (final state unknown) of its cached objects
   * the relist lacks, then updates of those it lists again (even unchanged: `isResync`), then adds,
   * in list order; a `removed` scope marks the deletes and an `added` one the adds.
   *
   * @param current the cache now (other namespaces may have moved since the first page).
   * @param scope the last page's scope: the namespace, the cause and whether the cache syncs.
   * @param resourceVersion the snapshot's resourceVersion.
   * @param isInInitialList whether adds belong to the informer's initial list.
   */
  swap(current: IndexedSnapshot<T>, scope: NamespaceScope, resourceVersion: string, isInInitialList: boolean, objects: RelistObjects<T>): IndexedSnapshot<T> {
    const edit = current.edit();
    const mark: NamespaceSetMark | undefined = scope.cause === 'listed' ? undefined : { type: scope.cause, namespace: scope.namespace };
    const changes: Change<T>[] = [];
    for (const key of current.keysInNamespace(scope.namespace)) {
      if (this.listed.has(key)) continue;
      const object = current.get(key)!;
      try {
        edit.remove(key, object);
      } catch (failure) {
        objects.indexFailed(failure, key, 'kept-previous');
        continue;
      }
      const deletion: DeleteChange<T> = { type: 'delete', key, object, finalStateUnknown: true };
      changes.push(mark?.type === 'removed' ? { ...deletion, namespaceSet: mark } : deletion);
    }
    const adds: AddChange<T>[] = [];
    for (const [key, listed] of this.listed) {
      const cached = current.get(key);
      if (cached === undefined) {
        try {
          edit.put(key, undefined, listed);
        } catch (failure) {
          objects.indexFailed(failure, key, 'left-out');
          continue;
        }
        const add: AddChange<T> = { type: 'add', key, object: listed, isInInitialList };
        adds.push(mark?.type === 'added' ? { ...add, namespaceSet: mark } : add);
        continue;
      }
      let object = listed;
      if (listed !== cached) {
        try {
          edit.put(key, cached, listed);
        } catch (failure) {
          objects.indexFailed(failure, key, 'kept-previous');
          object = cached;
        }
      }
      const update: UpdateChange<T> = { type: 'update', key, oldObject: cached, object, isResync: sameResourceVersion(cached, object) };
      changes.push(update);
    }
    for (const add of adds) changes.push(add);
    const synced = current.synced || scope.unsyncedNamespaces === 0;
    return edit.finish(resourceVersion, changes, synced);
  }
}
