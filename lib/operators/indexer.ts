import { asapScheduler, defer, filter, map, Observable, type OperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import type { Delta } from '../reflector/delta';
import { RejectedObjectError } from '../sources/errors';
import { RECORD_LIMIT } from '../store/changeSequence';
import { IndexedSnapshot } from '../store/indexedSnapshot';
import type { IndexFunc } from '../store/indexers';
import type { KubeObject } from '../store/object';
import type { Snapshot } from '../store/snapshot';
import { IndexerState } from './indexerState';

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
