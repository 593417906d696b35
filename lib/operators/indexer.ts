import { asapScheduler, defer, filter, map, Observable, type OperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import type { Delta, ReplaceDelta } from '../reflector/delta';
import { ProtocolError, RejectedObjectError, type RejectionOutcome } from '../sources/errors';
import { sameResourceVersion, type AddChange, type Change } from '../store/change';
import { ChangeSequencer, RECORD_LIMIT } from '../store/changeSequence';
import { deepFreeze } from '../store/deepFreeze';
import { markHandover } from '../store/handover';
import { IndexedSnapshot, type SnapshotBuilder, type SnapshotEdit } from '../store/indexedSnapshot';
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
  /**
   * Apply the watch deltas that arrive together as one batch: one in-place edit of the cache, one
   * snapshot whose `changes` hold the batch's changes in order (a key may appear several times),
   * one emission. Default: none, one snapshot per delta. `informer()` batches (see
   * {@link IndexerBatchConfig} for when a batch closes).
   */
  batch?: IndexerBatchConfig;
}

/**
 * When the indexer's batch closes: at the end of the current task (an action of 0 ms on
 * `scheduler`, scheduled by the batch's first delta), at `maxDeltas` deltas, before a Replace
 * page, and when the deltas complete or fail. The events one network chunk holds arrive in one
 * task, so by default they make one batch, and a batch waits for nothing but the rest of its task.
 */
export interface IndexerBatchConfig {
  /**
   * Closes the batch with an action of 0 ms. Default `asapScheduler` (a microtask). On a
   * virtual-time scheduler that action runs at the same instant, after the actions already due
   * then, where a microtask would run before them: production can see that order too (which of
   * a timer and a network chunk due in the same millisecond runs first is not defined), so tests
   * in virtual time exercise the batches production makes.
   */
  readonly scheduler?: SchedulerLike;
  /**
   * The most deltas in one batch. Default 256, the most changes of one
   * snapshot that `handle()` can check key by key cheaply.
   */
  readonly maxDeltas?: number;
}

/** A delta a watch delivers: everything but a Replace page. */
type WatchDelta<T extends KubeObject> = Exclude<Delta<T>, ReplaceDelta<T>>;

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
  /** The open batch: watch deltas written in place into an edit of `current`; undefined between batches. */
  private edit: SnapshotEdit<T> | undefined;
  /** The open batch's changes, in order; a key may appear several times. */
  private changes: Change<T>[] = [];
  /** The open batch's resourceVersion so far. */
  private version = '';
  /** The open batch changed something, or moved the resourceVersion (a bookmark). */
  private dirty = false;

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
    if (delta.type !== 'Replace') {
      this.add(delta);
      return this.seal();
    }
    // A relist starts from `current`: the open batch must have been sealed (and emitted) first.
    if (this.edit !== undefined) throw new Error('indexer: a Replace arrived while a batch was open');
    const snapshot = this.replacePage(delta);
    // A relist's snapshot changes each key once (its changes come from one key set).
    if (snapshot !== undefined) this.sequencer.stamp(snapshot, true);
    return snapshot;
  }

  /**
   * Applies a watch delta to the open batch (opening one on `current`): nothing is emitted until
   * {@link seal}. Each delta reads the state the batch's earlier deltas left, so the batch's
   * changes replay in order from `current`, and an update's `oldObject` is the state before it.
   */
  add(delta: WatchDelta<T>): void {
    if (this.edit === undefined) {
      this.edit = this.current.edit();
      this.version = this.current.resourceVersion;
    }
    switch (delta.type) {
      case 'Added':
      case 'Updated':
        return this.upsert(this.edit, delta.object);
      case 'Deleted':
        return this.delete(this.edit, delta.object);
      case 'Bookmark':
        this.version = delta.resourceVersion;
        this.dirty = true;
    }
  }

  /** Closes the open batch: its one snapshot, numbered, or undefined when it changed nothing. */
  seal(): IndexedSnapshot<T> | undefined {
    const edit = this.edit;
    if (edit === undefined) return undefined;
    this.edit = undefined;
    if (!this.dirty) return undefined;
    this.dirty = false;
    const changes = this.changes;
    this.changes = [];
    const snapshot = (this.current = edit.finish(this.version, changes));
    this.sequencer.stamp(snapshot, changes.length <= 1);
    return snapshot;
  }

  private upsert(edit: SnapshotEdit<T>, incoming: T): void {
    const key = this.keyOf(incoming);
    if (key === undefined) return;
    const previous = edit.get(key);
    const version = incoming.metadata.resourceVersion;
    if (previous !== undefined && version && previous.metadata.resourceVersion === version) return;
    const outcome = previous === undefined ? 'left-out' : 'kept-previous';
    const object = this.store(key, incoming, previous, outcome);
    if (object === undefined) return;
    // No closure here: this is the path of every watch event.
    try {
      edit.put(key, previous, object);
    } catch (failure) {
      return this.indexFailed(failure, key, outcome);
    }
    this.changes.push(previous === undefined ? { type: 'add', key, object, isInInitialList: false } : { type: 'update', key, oldObject: previous, object, isResync: false });
    if (version) this.version = version;
    this.dirty = true;
  }

  private delete(edit: SnapshotEdit<T>, incoming: T): void {
    const key = this.keyOf(incoming);
    if (key === undefined) return;
    const previous = edit.get(key);
    // Deleting what is not cached changes nothing: this also collapses duplicate deletes.
    if (previous === undefined) return;
    const object = this.store(key, incoming, previous, 'deleted') ?? previous;
    try {
      edit.remove(key, previous);
    } catch (failure) {
      return this.indexFailed(failure, key, 'kept-previous');
    }
    this.changes.push({ type: 'delete', key, object, finalStateUnknown: false });
    const version = incoming.metadata.resourceVersion;
    if (version) this.version = version;
    this.dirty = true;
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
  const batch = config.batch;
  const maxDeltas = batch?.maxDeltas ?? RECORD_LIMIT;
  if (!(Number.isInteger(maxDeltas) && maxDeltas >= 1)) throw new RangeError(`indexer batch.maxDeltas must be an integer >= 1, got ${maxDeltas}`);
  if (batch !== undefined) return (deltas) => batchedSnapshots(deltas, config, batch.scheduler ?? asapScheduler, maxDeltas);
  return (deltas) =>
    defer(() => {
      const state = new IndexerState(config);
      return deltas.pipe(
        map((delta) => state.step(delta)),
        filter((snapshot): snapshot is IndexedSnapshot<T> => snapshot !== undefined),
      );
    });
}

/** The indexer with batches (see {@link IndexerBatchConfig}). */
function batchedSnapshots<T extends KubeObject>(deltas: Observable<Delta<T>>, config: IndexerConfig<T>, scheduler: SchedulerLike, maxDeltas: number): Observable<Snapshot<T>> {
  return new Observable<Snapshot<T>>((subscriber) => {
    const state = new IndexerState(config);
    let closing: Subscription | undefined;
    let size = 0;
    const close = (): void => {
      closing?.unsubscribe();
      closing = undefined;
      size = 0;
      const snapshot = state.seal();
      if (snapshot !== undefined) subscriber.next(snapshot);
    };
    const upstream = deltas.subscribe({
      next: (delta) => {
        try {
          if (delta.type === 'Replace') {
            close();
            const snapshot = state.step(delta);
            if (snapshot !== undefined) subscriber.next(snapshot);
            return;
          }
          state.add(delta);
          if (++size >= maxDeltas) close();
          else closing ??= scheduler.schedule(close);
        } catch (error) {
          // Not data (that is rejected, not thrown): a bug, which ends the stream as `map` would.
          subscriber.error(error);
        }
      },
      error: (error: unknown) => {
        close();
        subscriber.error(error);
      },
      complete: () => {
        close();
        subscriber.complete();
      },
    });
    return () => {
      upstream.unsubscribe();
      closing?.unsubscribe();
    };
  });
}
