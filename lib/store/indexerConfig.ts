import type { SchedulerLike } from 'rxjs';
import type { RejectedObjectError } from '../base/errors';
import type { KubeObject } from '../base/object';
import type { IndexFunc } from './indexers';

/** Options of `indexer()`. */
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
   * shares the object. Default `false`, because freezing walks every new object, a cost of the
   * order of its `JSON.parse` (docs/PERFORMANCE.md, "Freezing"). An update shared with its cached
   * version (`shareUnchanged`) freezes only its changed paths, since freezing stops at subtrees
   * already frozen. Objects kept across a relist are not frozen twice.
   */
  freeze?: boolean;
  /**
   * Structural sharing (see `shareUnchanged`): before `transform` (after it for
   * `dropManagedFields`, which builds its result from the incoming object alone, so that the walk
   * skips the managedFields it drops), every subtree of an incoming
   * update that is deep-equal to the cached version's at the same path is replaced by the cached
   * one, and every other empty object `{}` of any stored object by one shared frozen `{}`.
   * Default `true`. Values never change; what changes is that an update's `object` and
   * `oldObject` share what did not change, so `oldObject.spec === object.spec` tells whether the
   * spec changed, and that the cache keeps only the changed paths of each update, which is most
   * of its memory and garbage-collection time (docs/performance-notes.md, "Rounds of changes": the
   * structural-sharing rows). It costs one walk of each stored object, and it writes into the
   * incoming object (not into a frozen one): turn it off when you feed `indexer()` objects that
   * someone else holds and may read as they were.
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
