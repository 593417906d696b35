import { asapScheduler, defer, filter, map, type OperatorFunction } from 'rxjs';
import type { KubeObject } from '../base/object';
import type { Delta } from '../reflector/delta';
import { RECORD_LIMIT } from './changeSequence';
import { deltaBatches } from './deltaBatches';
import type { IndexedSnapshot } from './indexedSnapshot';
import type { IndexerConfig } from './indexerConfig';
import { initialIndexerState, reduceDeltas, withoutEmitted, type DeltaBatch, type IndexerState } from './reduceDeltas';
import type { Snapshot } from './snapshot';

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
 *    A Replace with a `scope` (one namespace of an informer over several) replaces that
 *    namespace's objects only, at O(objects in it); the cache is synced once every namespace of
 *    the set has listed, and a namespace joining or leaving the set marks its adds or deletes
 *    (`namespaceSet`).
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
 * import type { Observable } from 'rxjs';
 * import { indexer } from 'rx-informer/pipeline';
 * import { dropManagedFields, labelIndex, namespaceIndex, NAMESPACE_INDEX, type Delta, type Pod } from 'rx-informer';
 *
 * declare const deltas$: Observable<Delta<Pod>>; // reflect()'s deltas, for one
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
  const batches: OperatorFunction<Delta<T>, DeltaBatch<T>> =
    batch === undefined ? map((delta) => (delta.type === 'Replace' ? delta : [delta])) : deltaBatches(batch.scheduler ?? asapScheduler, maxDeltas);
  const report = rejectionReporter<T>(config.onRejected);
  return (deltas) =>
    defer(() => {
      // A scan of the reducer that keeps between steps only the state, never the snapshot a step
      // emitted: the state's own snapshot is settled (no changes), so a quiet cache holds no
      // changes, and a relist's (one per object) go once delivered.
      let state = initialIndexerState(config);
      return deltas.pipe(
        batches,
        map((batch: DeltaBatch<T>): IndexedSnapshot<T> | undefined => {
          const next = reduceDeltas(state, batch);
          state = withoutEmitted(next);
          report(next);
          return next.emitted;
        }),
        filter((snapshot): snapshot is IndexedSnapshot<T> => snapshot !== undefined),
      );
    });
}

/** Hands each step's rejections to `onRejected`; a callback that throws must not stop the cache. */
function rejectionReporter<T extends KubeObject>(onRejected: IndexerConfig<T>['onRejected']): (state: IndexerState<T>) => void {
  if (onRejected === undefined) return () => undefined;
  return (state) => {
    for (const rejection of state.rejections) {
      try {
        onRejected(rejection);
      } catch {
        // The report is the last resort; there is nowhere left to report its failure.
      }
    }
  };
}
