import { defer, filter, map, type OperatorFunction } from 'rxjs';
import type { Delta, ReplaceDelta } from '../reflector/delta';
import type { AddChange, Change, DeleteChange, UpdateChange } from '../store/change';
import { deepFreeze } from '../store/deepFreeze';
import { IndexedSnapshot, type SnapshotBuilder } from '../store/indexedSnapshot';
import { NAMESPACE_INDEX, namespaceIndex, type IndexFunc } from '../store/indexers';
import { objectKey } from '../store/keys';
import type { KubeObject } from '../store/object';
import { shareUnchanged } from '../store/shareUnchanged';
import type { Snapshot } from '../store/snapshot';

/** Options of {@link indexer}. */
export interface IndexerConfig<T extends KubeObject = KubeObject> {
  /**
   * Named index functions. Default `{ namespace: namespaceIndex }` (client-go's NamespaceIndex),
   * which `snapshot.list({ namespace })` uses. Passing your own replaces the default; include
   * `[NAMESPACE_INDEX]: namespaceIndex` to keep it.
   */
  indexers?: Readonly<Record<string, IndexFunc<T>>>;
  /**
   * Runs once per object before it is stored, never on delete tombstones; must not mutate its
   * input. `dropManagedFields` is the usual choice. An object whose resourceVersion equals the
   * cached one's is not stored again, so it is not transformed again either.
   */
  transform?: (object: T) => T;
  /**
   * Deep-freeze every stored object (plain objects and arrays, with `Object.freeze`), so an
   * accidental mutation throws (in strict mode) instead of silently corrupting every snapshot that
   * shares the object. Default `false`, because it weighs on the initial list and on adds: a new
   * 4.3 KB pod took ~18 µs to freeze against ~71 µs for its `JSON.parse` (immer's `freeze`, used
   * before, ~37 µs; `bench/micro/freeze.ts`, docs/PERFORMANCE.md). An update shared with its
   * cached version (`shareUnchanged`) freezes only its changed paths, since freezing stops at
   * subtrees already frozen: ~1 µs per update. Objects kept across a relist are not frozen twice.
   */
  freeze?: boolean;
  /**
   * Structural sharing (see {@link shareUnchanged}): before `transform`, every subtree of an
   * incoming update that is deep-equal to the cached version's at the same path is replaced by the
   * cached one, and every other empty object `{}` of any stored object by one shared frozen `{}`.
   * Default `true`. Values never change; what changes is that an update's `object` and
   * `oldObject` share what did not change, so `oldObject.spec === object.spec` tells whether the
   * spec changed, that the cache keeps only the changed paths of each update (at 100k cached pods
   * it took a third off the CPU per event, garbage collection mostly), and that the `{}` markers
   * of `managedFields` cost nothing (a pod's heap: 10.8 → 4.5 KiB). It costs one walk of each
   * stored object, and it writes into the incoming object (not into a frozen one): turn it off
   * when you feed `indexer()` objects that someone else holds and may read as they were.
   */
  shareUnchanged?: boolean;
}

/** A Replace whose `last` page has not arrived yet. */
interface Relist<T extends KubeObject> {
  readonly builder: SnapshotBuilder<T>;
  /** The snapshot the relist started from; its changes are computed against it page by page. */
  readonly base: IndexedSnapshot<T>;
  /** Keys in first-seen order. */
  readonly order: string[];
  readonly updates: Change<T>[];
  readonly adds: AddChange<T>[];
  /** How many keys of `base` the list has named so far: fewer than its size means deletes. */
  matched: number;
  /** A key was listed twice, so the per-page changes are stale and must be recomputed. */
  duplicated: boolean;
}

/** The indexer's state between deltas: the last snapshot, and a relist being built. */
class IndexerState<T extends KubeObject> {
  private current: IndexedSnapshot<T>;
  private relist: Relist<T> | undefined;
  private everSynced = false;
  private readonly prepare: (object: T) => T;
  private readonly share: boolean;

  constructor(config: IndexerConfig<T>) {
    this.current = IndexedSnapshot.empty(config.indexers ?? ({ [NAMESPACE_INDEX]: namespaceIndex } as Record<string, IndexFunc<T>>));
    this.share = config.shareUnchanged ?? true;
    const transform = config.transform;
    const shouldFreeze = config.freeze ?? false;
    if (transform && shouldFreeze) this.prepare = (object) => deepFreeze(transform(object));
    else if (transform) this.prepare = transform;
    else if (shouldFreeze) this.prepare = deepFreeze;
    else this.prepare = (object) => object;
  }

  /** What is stored for `incoming`: shared with the version it replaces, then transformed and frozen. */
  private store(incoming: T, replaced: T | undefined): T {
    if (this.share) shareUnchanged(replaced, incoming);
    return this.prepare(incoming);
  }

  /** Applies one delta; returns the snapshot to emit, or undefined when nothing changed. */
  step(delta: Delta<T>): IndexedSnapshot<T> | undefined {
    switch (delta.type) {
      case 'Added':
      case 'Updated':
        return this.upsert(delta.object);
      case 'Deleted':
        return this.delete(delta.object);
      case 'Bookmark':
        return (this.current = this.current.at(delta.resourceVersion));
      case 'Replace':
        return this.replacePage(delta);
    }
  }

  private upsert(incoming: T): IndexedSnapshot<T> | undefined {
    const key = objectKey(incoming);
    const previous = this.current.get(key);
    const version = incoming.metadata.resourceVersion;
    if (previous !== undefined && version && previous.metadata.resourceVersion === version) return undefined;
    const object = this.store(incoming, previous);
    const change: AddChange<T> | UpdateChange<T> =
      previous === undefined ? { type: 'add', key, object, isInInitialList: false } : { type: 'update', key, oldObject: previous, object };
    return (this.current = this.current.put(key, previous, object, [change], version || this.current.resourceVersion));
  }

  private delete(incoming: T): IndexedSnapshot<T> | undefined {
    const key = objectKey(incoming);
    const previous = this.current.get(key);
    // Deleting what is not cached changes nothing: this also collapses duplicate deletes.
    if (previous === undefined) return undefined;
    const change: DeleteChange<T> = { type: 'delete', key, object: incoming, finalStateUnknown: false };
    return (this.current = this.current.remove(key, previous, [change], incoming.metadata.resourceVersion || this.current.resourceVersion));
  }

  private replacePage(page: ReplaceDelta<T>): IndexedSnapshot<T> | undefined {
    // A first page abandons any unfinished relist; a page with no relist started starts one.
    if (page.first || this.relist === undefined) {
      this.relist = { builder: this.current.builder(), base: this.current, order: [], updates: [], adds: [], matched: 0, duplicated: false };
    }
    const relist = this.relist;
    const { builder, base } = relist;
    const isInInitialList = !this.everSynced;
    for (const incoming of page.items) {
      const key = objectKey(incoming);
      const cached = base.get(key);
      const version = incoming.metadata.resourceVersion;
      // Same resourceVersion, same object: keep the cached one, which is already transformed,
      // frozen and in old-generation memory, instead of retaining a second copy.
      const object = cached !== undefined && version && cached.metadata.resourceVersion === version ? cached : this.store(incoming, cached);
      if (builder.has(key)) relist.duplicated = true;
      else {
        relist.order.push(key);
        if (cached === undefined) relist.adds.push({ type: 'add', key, object, isInInitialList });
        else {
          relist.matched++;
          relist.updates.push({ type: 'update', key, oldObject: cached, object });
        }
      }
      builder.put(key, object);
    }
    if (!page.last) return undefined;
    this.relist = undefined;
    return (this.current = this.swap(relist, page.resourceVersion));
  }

  /**
   * Seals the relist: changes are deletes (final state unknown), then updates, then adds. The
   * changes were gathered page by page, so the last page costs O(deletes), not O(n), unless a
   * key was listed twice or a watch delta moved the cache meanwhile (then they are recomputed).
   */
  private swap(relist: Relist<T>, resourceVersion: string): IndexedSnapshot<T> {
    const { builder, order } = relist;
    const current = this.current;
    let { updates, adds } = relist;
    const stale = relist.duplicated || current !== relist.base;
    if (stale) {
      updates = [];
      adds = [];
      const isInInitialList = !this.everSynced;
      for (const key of order) {
        const object = builder.get(key)!;
        const oldObject = current.get(key);
        if (oldObject === undefined) adds.push({ type: 'add', key, object, isInInitialList });
        else updates.push({ type: 'update', key, oldObject, object });
      }
    }
    const changes: Change<T>[] = [];
    if (stale || relist.matched < current.size) {
      current.forEach((object, key) => {
        if (!builder.has(key)) changes.push({ type: 'delete', key, object, finalStateUnknown: true });
      });
    }
    for (const update of updates) changes.push(update);
    for (const add of adds) changes.push(add);
    this.everSynced = true;
    return builder.finish(resourceVersion, changes);
  }
}

/**
 * Reduces the delta stream into immutable, indexed snapshots of the cache, each carrying the
 * changes (with old and new objects) that produced it.
 *
 * The indexer is the only stage that knows old state: it turns Added/Updated/Deleted into
 * add/update/delete changes and a relist (`Replace`) into deletes, updates and adds. Snapshots are
 * persistent tries: applying one delta costs O(log n) time and allocation, and every snapshot
 * ever emitted stays valid and self-consistent.
 *
 * ```
 * deltas:    -R---U---D---u---B---p---L--|
 * indexer(): -1---2---3-------4-------5--|
 *
 * R Replace [a@1, b@1] first+last  → 1 {a,b} [add a, add b] (isInInitialList), synced
 * U Updated a@2                    → 2 {a,b} [update a@1→a@2]
 * D Deleted b                      → 3 {a}   [delete b]
 * u Updated a@2 again (same RV)    → nothing
 * B Bookmark 9                     → 4 {a}   [] at resourceVersion 9
 * p Replace page [a@3] first       → nothing: pages build the new store silently
 * L Replace page [c@1] last, rv 12 → 5 {a,c} [update a@2→a@3, add c], swapped atomically
 * ```
 *
 * 1. Added/Updated: an add when the key is new, else an update; nothing when the object's
 *    resourceVersion equals the cached one. An update's unchanged subtrees are the cached
 *    version's, and empty objects are one shared frozen `{}` (`shareUnchanged`); `transform` and
 *    `freeze` apply to what is stored.
 * 2. Deleted: a delete carrying the server's final object; nothing when the key is not cached,
 *    so duplicate deletes collapse.
 * 3. Replace pages fill a new store (a `first` page restarts it); the `last` page swaps it in and
 *    emits one synced snapshot at the Replace's resourceVersion whose changes are deletes
 *    (`finalStateUnknown`) for keys missing from the list, then updates for every key present
 *    before and after (even unchanged: a relist resyncs, and an object whose resourceVersion did
 *    not change is kept as is, so `oldObject === object`), then adds, in list order. Adds of the
 *    first Replace carry `isInInitialList`.
 * 4. Bookmark: the same objects at the new resourceVersion, with no changes.
 *
 * Each subscription keeps its own state. An object without `metadata.name` errors the stream with
 * a `ProtocolError` ('missing-metadata'); an index function or transform that throws errors it too.
 *
 * ## Example
 * ```ts
 * import { indexer, dropManagedFields, labelIndex, namespaceIndex, NAMESPACE_INDEX } from 'rx-informer';
 *
 * const snapshots$ = deltas$.pipe(
 *   indexer({ indexers: { [NAMESPACE_INDEX]: namespaceIndex, app: labelIndex('app') }, transform: dropManagedFields }),
 * );
 * snapshots$.subscribe((snapshot) => {
 *   const web = snapshot.list({ namespace: 'default', labelSelector: 'tier in (front,edge)' });
 *   const apps = snapshot.indexValues('app');
 *   for (const change of snapshot.changes) console.log(change.type, change.key);
 * });
 * ```
 *
 * @param config Indexes, transform and freezing; all optional.
 * @returns An operator from deltas to snapshots.
 */
export function indexer<T extends KubeObject = KubeObject>(config: IndexerConfig<T> = {}): OperatorFunction<Delta<T>, Snapshot<T>> {
  return (deltas) =>
    defer(() => {
      const state = new IndexerState(config);
      return deltas.pipe(
        map((delta) => state.step(delta)),
        filter((snapshot): snapshot is IndexedSnapshot<T> => snapshot !== undefined),
      );
    });
}
