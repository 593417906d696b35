import { defer, filter, map, type OperatorFunction } from 'rxjs';
import type { Delta, ReplaceDelta } from '../reflector/delta';
import { ProtocolError, RejectedObjectError, type RejectionOutcome } from '../sources/errors';
import { sameResourceVersion, type AddChange, type Change, type DeleteChange, type UpdateChange } from '../store/change';
import { ChangeSequencer } from '../store/changeSequence';
import { deepFreeze } from '../store/deepFreeze';
import { markHandover } from '../store/handover';
import { IndexedSnapshot, type SnapshotBuilder } from '../store/indexedSnapshot';
import { NAMESPACE_INDEX, namespaceIndex, type IndexFunc } from '../store/indexers';
import { objectKey } from '../store/keys';
import type { KubeObject } from '../store/object';
import { shareUnchanged } from '../store/shareUnchanged';
import { checkTransformed, guardIndexers, IndexFunctionFailure } from './indexerGuards';
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
   * Runs once per object before it is stored, and on the final state a Deleted delta carries (as
   * client-go's DeltaFIFO does), never on delete tombstones; must not mutate its input.
   * `dropManagedFields` is the usual choice. An object whose resourceVersion equals the cached
   * one's is not stored again, so it is not transformed again either. When it throws (or returns
   * no object with `metadata`), the object is rejected: see `onRejected`.
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
  /**
   * Called with each object the indexer cannot cache: one without a `metadata.name` string, or one
   * on which `transform` or an index function throws. Such an object is a value, not an error of
   * the stream: a new object is left out, an update keeps the cached version, a deletion still
   * deletes (with the cached version as the final state), and the next delta is applied as usual.
   * Default: none (the object is still left out). `informer()` reports them on `health$` and
   * through its logger. A callback that throws is ignored.
   */
  onRejected?: (rejection: RejectedObjectError) => void;
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
  /** Keys a page's `deleted` dropped from the new store (they stay in `order`). */
  removed: Set<string> | undefined;
}

/** The indexer's state between deltas: the last snapshot, and a relist being built. */
class IndexerState<T extends KubeObject> {
  private current: IndexedSnapshot<T>;
  private relist: Relist<T> | undefined;
  private everSynced = false;
  private readonly prepare: (object: T) => T;
  private readonly share: boolean;
  private readonly onRejected: ((rejection: RejectedObjectError) => void) | undefined;
  /** Numbers the snapshots, so that a lagging `handle()` can tell cheaply when changes must coalesce. */
  private readonly sequencer = new ChangeSequencer();

  constructor(config: IndexerConfig<T>) {
    this.current = IndexedSnapshot.empty(guardIndexers(config.indexers ?? ({ [NAMESPACE_INDEX]: namespaceIndex } as Record<string, IndexFunc<T>>)));
    this.share = config.shareUnchanged ?? true;
    this.onRejected = config.onRejected;
    const transform = config.transform;
    const shouldFreeze = config.freeze ?? false;
    if (transform && shouldFreeze) this.prepare = (object) => deepFreeze(checkTransformed(transform(object)));
    else if (transform) this.prepare = (object) => checkTransformed(transform(object));
    else if (shouldFreeze) this.prepare = deepFreeze;
    else this.prepare = (object) => object;
  }

  /**
   * What is stored for `incoming`: shared with the version it replaces, then transformed and
   * frozen; undefined (reported) when the transform fails.
   */
  private store(key: string, incoming: T, replaced: T | undefined, outcome: RejectionOutcome): T | undefined {
    if (this.share) shareUnchanged(replaced, incoming);
    try {
      return this.prepare(incoming);
    } catch (cause) {
      this.reject({ key, stage: 'transform', outcome, cause });
      return undefined;
    }
  }

  /** The object's cache key; undefined (reported) when it has none. */
  private keyOf(incoming: T): string | undefined {
    try {
      return objectKey(incoming);
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error;
      // Not the ProtocolError itself: its excerpt would carry the object's data into logs.
      this.reject({ key: undefined, stage: 'key', outcome: 'left-out' });
      return undefined;
    }
  }

  /** Reports a write that an index function failed (writes are all or nothing); rethrows anything else. */
  private indexFailed(failure: unknown, key: string, outcome: RejectionOutcome): undefined {
    if (!(failure instanceof IndexFunctionFailure)) throw failure;
    this.reject({ key, stage: 'index', indexName: failure.indexName, outcome, cause: failure.cause });
    return undefined;
  }

  private reject(details: ConstructorParameters<typeof RejectedObjectError>[0]): void {
    if (this.onRejected === undefined) return;
    try {
      this.onRejected(new RejectedObjectError(details));
    } catch {
      // The report is the last resort; a broken one must not stop the cache.
    }
  }

  /** Applies one delta; returns the snapshot to emit, or undefined when nothing changed. */
  step(delta: Delta<T>): IndexedSnapshot<T> | undefined {
    const snapshot = this.apply(delta);
    // A relist's snapshot changes each key once (its changes come from one key set).
    if (snapshot !== undefined) this.sequencer.stamp(snapshot, delta.type === 'Replace');
    return snapshot;
  }

  private apply(delta: Delta<T>): IndexedSnapshot<T> | undefined {
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
    const key = this.keyOf(incoming);
    if (key === undefined) return undefined;
    const previous = this.current.get(key);
    const version = incoming.metadata.resourceVersion;
    if (previous !== undefined && version && previous.metadata.resourceVersion === version) return undefined;
    const outcome = previous === undefined ? 'left-out' : 'kept-previous';
    const object = this.store(key, incoming, previous, outcome);
    if (object === undefined) return undefined;
    const change: AddChange<T> | UpdateChange<T> =
      previous === undefined ? { type: 'add', key, object, isInInitialList: false } : { type: 'update', key, oldObject: previous, object, isResync: false };
    // No closure here: this is the path of every watch event.
    try {
      return (this.current = this.current.put(key, previous, object, [change], version || this.current.resourceVersion));
    } catch (failure) {
      return this.indexFailed(failure, key, outcome);
    }
  }

  private delete(incoming: T): IndexedSnapshot<T> | undefined {
    const key = this.keyOf(incoming);
    if (key === undefined) return undefined;
    const previous = this.current.get(key);
    // Deleting what is not cached changes nothing: this also collapses duplicate deletes.
    if (previous === undefined) return undefined;
    const object = this.store(key, incoming, previous, 'deleted') ?? previous;
    const change: DeleteChange<T> = { type: 'delete', key, object, finalStateUnknown: false };
    try {
      return (this.current = this.current.remove(key, previous, [change], incoming.metadata.resourceVersion || this.current.resourceVersion));
    } catch (failure) {
      return this.indexFailed(failure, key, 'kept-previous');
    }
  }

  private replacePage(page: ReplaceDelta<T>): IndexedSnapshot<T> | undefined {
    // A first page abandons any unfinished relist; a page with no relist started starts one.
    if (page.first || this.relist === undefined) {
      this.relist = { builder: this.current.builder(), base: this.current, order: [], updates: [], adds: [], matched: 0, duplicated: false, removed: undefined };
    }
    const relist = this.relist;
    const isInInitialList = !this.everSynced;
    // Objects an earlier page held and the server deleted meanwhile (a streaming list).
    for (const gone of page.deleted ?? []) {
      const key = this.keyOf(gone);
      if (key !== undefined && relist.builder.remove(key)) {
        relist.duplicated = true;
        (relist.removed ??= new Set()).add(key);
      }
    }
    for (const incoming of page.items) {
      const key = this.keyOf(incoming);
      if (key === undefined) continue;
      const cached = relist.base.get(key);
      // Listed before in this relist, or dropped by a later page's `deleted` (still in `order`).
      const listedBefore = relist.builder.has(key) || relist.removed?.has(key) === true;
      const object = this.relistVersion(relist.builder, key, incoming, cached);
      if (object === undefined) continue;
      if (listedBefore) relist.duplicated = true;
      else {
        relist.order.push(key);
        if (cached === undefined) relist.adds.push({ type: 'add', key, object, isInInitialList });
        else {
          relist.matched++;
          relist.updates.push({ type: 'update', key, oldObject: cached, object, isResync: sameResourceVersion(cached, object) });
        }
      }
    }
    if (!page.last) return undefined;
    this.relist = undefined;
    return (this.current = this.swap(relist, page.resourceVersion, page.handover));
  }

  /**
   * Puts a listed object into the relist's store and returns what was put: the cached version
   * when the resourceVersion did not change (it is already transformed, frozen and in
   * old-generation memory, so no second copy is retained) or when the new one is rejected;
   * undefined when a new object is rejected and left out.
   */
  private relistVersion(builder: SnapshotBuilder<T>, key: string, incoming: T, cached: T | undefined): T | undefined {
    const version = incoming.metadata.resourceVersion;
    const outcome = cached === undefined ? 'left-out' : 'kept-previous';
    const object = cached !== undefined && version && cached.metadata.resourceVersion === version ? cached : this.store(key, incoming, cached, outcome);
    if (object !== undefined) {
      try {
        builder.put(key, object);
        return object;
      } catch (failure) {
        this.indexFailed(failure, key, outcome);
      }
    }
    if (cached === undefined) return undefined;
    builder.put(key, cached);
    return cached;
  }

  /**
   * Seals the relist: changes are deletes (final state unknown), then updates, then adds. The
   * changes were gathered page by page, so the last page costs O(deletes), not O(n), unless a
   * key was listed twice or a watch delta moved the cache meanwhile (then they are recomputed).
   */
  private swap(relist: Relist<T>, resourceVersion: string, handover: ReplaceDelta<T>['handover']): IndexedSnapshot<T> {
    const { builder, order } = relist;
    const current = this.current;
    let { updates, adds } = relist;
    const stale = relist.duplicated || current !== relist.base;
    if (stale) {
      updates = [];
      adds = [];
      const isInInitialList = !this.everSynced;
      for (const key of order) {
        const object = builder.get(key);
        if (object === undefined) continue;
        const oldObject = current.get(key);
        if (oldObject === undefined) adds.push({ type: 'add', key, object, isInInitialList });
        else updates.push({ type: 'update', key, oldObject, object, isResync: sameResourceVersion(oldObject, object) });
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
    return builder.finish(resourceVersion, handover === undefined ? changes : markHandover(changes, handover));
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
 * 2. Deleted: a delete carrying the server's final object (shared, transformed and frozen as an
 *    update's would be); nothing when the key is not cached, so duplicate deletes collapse.
 * 3. Replace pages fill a new store (a `first` page restarts it; a page's `deleted` drop objects
 *    from it before its `items` go in); the `last` page swaps it in and
 *    emits one synced snapshot at the Replace's resourceVersion whose changes are deletes
 *    (`finalStateUnknown`) for keys missing from the list, then updates for every key present
 *    before and after (even unchanged: a relist resyncs, and an object whose resourceVersion did
 *    not change is kept as is, so `oldObject === object`), then adds, in list order. Adds of the
 *    first Replace carry `isInInitialList`. A Replace with a `handover` (a sharded informer's new
 *    buckets) marks its adds in the buckets acquired and its deletes in those released.
 * 4. Bookmark: the same objects at the new resourceVersion, with no changes.
 *
 * 5. An object it cannot cache (no `metadata.name`, a throwing transform or index function) is
 *    rejected, not fatal: a new object is left out, an update or a relisted object keeps the cached
 *    version, a deletion still deletes; `onRejected` hears of each as a `RejectedObjectError`. The
 *    stream never errors on data. (client-go logs and drops such a watch event, fails and retries
 *    a whole list over one such item, and panics on an index function's error.)
 *
 * Each subscription keeps its own state.
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
 * @param config Indexes, transform, freezing and where rejected objects are reported; all optional.
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
