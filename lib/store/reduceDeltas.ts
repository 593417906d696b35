import { ProtocolError, RejectedObjectError, type RejectionOutcome } from '../base/errors';
import type { KubeObject } from '../base/object';
import type { AddedDelta, BookmarkDelta, DeletedDelta, NamespaceScope, ReplaceDelta, UpdatedDelta } from '../reflector/delta';
import { sameResourceVersion, type AddChange, type Change } from './change';
import { ChangeSequencer } from './changeSequence';
import { deepFreeze } from './deepFreeze';
import { markHandover } from './handover';
import { IndexedSnapshot, type SnapshotBuilder, type SnapshotEdit } from './indexedSnapshot';
import { NamespaceRelist, type RelistObjects } from './namespaceRelist';
import type { IndexerConfig } from './indexerConfig';
import { checkTransformed, guardIndexers, IndexFunctionFailure } from './indexerGuards';
import { NAMESPACE_INDEX, namespaceIndex, type IndexFunc } from './indexers';
import { objectKey } from './keys';
import { shareUnchanged } from './shareUnchanged';
import { dropManagedFields } from './transforms';

/**
 * The store's reducer: one step folds a batch of deltas into the next state of the cache. The
 * indexer is RxJS `scan` over it (`indexer.ts`); the batching decides what one step receives
 * (`deltaBatches.ts`).
 */

/** A delta a watch delivers: everything but a Replace page. */
export type WatchDelta<T extends KubeObject = KubeObject> = AddedDelta<T> | UpdatedDelta<T> | DeletedDelta<T> | BookmarkDelta;

/**
 * What one step of the reducer receives: one Replace page, or watch deltas that arrived together
 * (applied as one edit, in order, into one snapshot).
 */
export type DeltaBatch<T extends KubeObject = KubeObject> = ReplaceDelta<T> | readonly WatchDelta<T>[];

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

/** How objects are prepared for the store; fixed for the life of one indexer subscription. */
interface Preparation<T extends KubeObject> {
  /** The configured transform, its result checked; undefined when there is none. */
  readonly transform: ((object: T) => T) | undefined;
  readonly freeze: boolean;
  /**
   * When unchanged subtrees are shared with the cached version (`shareUnchanged`): before the
   * transform (on the object as received), after it (on what the transform returned), or never.
   * After only for a transform known to return objects nobody else holds (see `sharesAfter`).
   */
  readonly share: 'before' | 'after' | 'never';
}

/**
 * Sharing mutates the object it walks, so it runs on what the transform returned only when the
 * transform is known to build that from the parsed object alone: `dropManagedFields` (a fresh
 * top level and metadata over the parsed object's children). Then the walk no longer visits the
 * fields the transform drops (managedFields, most of a pod's objects), and it compares like with
 * like, the cached version being transformed too. Any other transform may return objects someone
 * else holds (a shared default, a memo), which the walk must not write: it shares before.
 */
function sharesAfter<T extends KubeObject>(transform: ((object: T) => T) | undefined): boolean {
  return transform === (dropManagedFields as (object: T) => T);
}

/**
 * The indexer's state between steps.
 *
 * A step takes over the working parts of the state it is given (the relist being built, the
 * change sequencer) and hands them on in the state it returns, as a transient does, so that a
 * large relist is never copied: a state must be stepped at most once, which `scan` guarantees
 * and {@link reduceDeltas} checks.
 */
export interface IndexerState<T extends KubeObject = KubeObject> {
  /** The cache as of this state. */
  readonly snapshot: IndexedSnapshot<T>;
  /** The snapshot the step that made this state produced, to emit; undefined when it changed nothing observable. */
  readonly emitted: IndexedSnapshot<T> | undefined;
  /** What the step that made this state could not cache (empty when all went in). */
  readonly rejections: readonly RejectedObjectError[];
  /** @internal */
  readonly working: Working<T>;
}

/** The parts a step takes over from the state before it. */
interface Working<T extends KubeObject> {
  readonly preparation: Preparation<T>;
  /** Numbers the snapshots, so that a lagging `handle()` can tell cheaply when changes must coalesce. */
  readonly sequencer: ChangeSequencer;
  readonly relist: Relist<T> | undefined;
  /** The unfinished Replaces of single namespaces (`NamespaceScope`), by namespace; mutated in place. */
  readonly namespaceRelists: Map<string, NamespaceRelist<T>> | undefined;
  /** A Replace has ended (and the cache synced): later adds are not in the initial list. */
  readonly everSynced: boolean;
  /** Set once a step has taken these parts over. */
  consumed: boolean;
}

const NO_REJECTIONS: readonly RejectedObjectError[] = Object.freeze([]);

/**
 * The state before the first delta: an empty, unsynced snapshot with the configured indexes.
 *
 * @param config indexes, transform, freezing and sharing (see `IndexerConfig`).
 */
export function initialIndexerState<T extends KubeObject>(config: Pick<IndexerConfig<T>, 'indexers' | 'transform' | 'freeze' | 'shareUnchanged'>): IndexerState<T> {
  const indexers = guardIndexers(config.indexers ?? ({ [NAMESPACE_INDEX]: namespaceIndex } as Record<string, IndexFunc<T>>));
  const transform = config.transform;
  const share = (config.shareUnchanged ?? true) ? (sharesAfter(transform) ? 'after' : 'before') : 'never';
  const working: Working<T> = {
    preparation: { transform, freeze: config.freeze ?? false, share },
    sequencer: new ChangeSequencer(),
    relist: undefined,
    namespaceRelists: undefined,
    everSynced: false,
    consumed: false,
  };
  return { snapshot: IndexedSnapshot.empty(indexers), emitted: undefined, rejections: NO_REJECTIONS, working };
}

/**
 * One step of the store: the state after `batch`.
 *
 * 1. Watch deltas (Added/Updated/Deleted/Bookmark) are applied in order to one in-place edit of
 *    the cache, sealed into one snapshot whose `changes` replay them: an Added or Updated becomes
 *    an add when the key is new, else an update (nothing when the object's resourceVersion equals
 *    the cached one's); a Deleted becomes a delete carrying the server's final object (nothing when
 *    the key is not cached, so duplicate deletes collapse); a Bookmark moves the resourceVersion.
 *    Nothing observable changed: nothing is emitted.
 * 2. Replace pages fill a new store (a `first` page restarts it; a page's `deleted` drop objects
 *    from it before its `items` go in); the `last` page swaps it in as one synced snapshot whose
 *    changes are deletes (`finalStateUnknown`) for keys missing from the list, then updates for
 *    every key present before and after (even unchanged: `isResync`, and the cached object kept
 *    as it is), then adds, in list order. Adds of the first Replace carry `isInInitialList`. A
 *    Replace with a `handover` marks its adds in the buckets acquired and its deletes in those
 *    released. A Replace with a `scope` (one namespace of an informer over several) replaces that
 *    namespace's objects only, in an edit of the cache at its `last` page (see `NamespaceRelist`);
 *    its pages may interleave with other namespaces' and with watch deltas.
 * 3. What is stored is shared with the version it replaces (`shareUnchanged`), then transformed
 *    and frozen as configured (`dropManagedFields` transforms first, then shares what it returned). An object that cannot be cached (no `metadata.name`, a throwing
 *    transform or index function) is rejected, never thrown: a new object is left out, an update
 *    or a relisted object keeps the cached version, a deletion still deletes. The rejections are
 *    in the state's `rejections`.
 *
 * @param state the state before; taken over (see {@link IndexerState}).
 * @param batch one Replace page, or the watch deltas of one batch.
 * @returns the state after, whose `emitted` is the snapshot to emit, if any.
 * @throws Error when `state` was stepped before: the reducer takes over its working parts.
 */
export function reduceDeltas<T extends KubeObject>(state: IndexerState<T>, batch: DeltaBatch<T>): IndexerState<T> {
  const working = state.working;
  if (working.consumed) throw new Error('reduceDeltas: this state was stepped before; step each state once, as scan does');
  working.consumed = true;
  const step = new Step(state.snapshot, working);
  const emitted = isWatchBatch(batch) ? step.watchDeltas(batch) : step.replacePage(batch);
  return {
    // The cache to edit next, settled: the state holds no changes once they are emitted.
    snapshot: emitted?.settled() ?? state.snapshot,
    emitted,
    rejections: step.rejections ?? NO_REJECTIONS,
    working: { ...working, relist: step.relist, namespaceRelists: step.namespaceRelists, everSynced: step.everSynced, consumed: false },
  };
}

/**
 * The state to keep until the next step: the same, without the snapshot and rejections the step
 * handed out, so that holding it holds none of their changes.
 */
export function withoutEmitted<T extends KubeObject>(state: IndexerState<T>): IndexerState<T> {
  return state.emitted === undefined && state.rejections.length === 0 ? state : { ...state, emitted: undefined, rejections: NO_REJECTIONS };
}

function isWatchBatch<T extends KubeObject>(batch: DeltaBatch<T>): batch is readonly WatchDelta<T>[] {
  return Array.isArray(batch);
}

/** One step's work: the mutable parts live here for the duration of {@link reduceDeltas}. */
class Step<T extends KubeObject> implements RelistObjects<T> {
  relist: Relist<T> | undefined;
  namespaceRelists: Map<string, NamespaceRelist<T>> | undefined;
  everSynced: boolean;
  rejections: RejectedObjectError[] | undefined;
  private readonly preparation: Preparation<T>;
  private readonly sequencer: ChangeSequencer;

  constructor(
    private readonly current: IndexedSnapshot<T>,
    working: Working<T>,
  ) {
    this.relist = working.relist;
    this.namespaceRelists = working.namespaceRelists;
    this.everSynced = working.everSynced;
    this.preparation = working.preparation;
    this.sequencer = working.sequencer;
  }

  /** Applies watch deltas in order to one edit; its snapshot, numbered, or undefined when nothing changed. */
  watchDeltas(deltas: readonly WatchDelta<T>[]): IndexedSnapshot<T> | undefined {
    const edit = this.current.edit();
    const changes: Change<T>[] = [];
    let version = this.current.resourceVersion;
    let dirty = false;
    for (const delta of deltas) {
      if (delta.type === 'Bookmark') {
        version = delta.resourceVersion;
        dirty = true;
        continue;
      }
      const written = delta.type === 'Deleted' ? this.delete(edit, delta.object, changes) : this.upsert(edit, delta.object, changes);
      if (written === undefined) continue;
      if (written !== '') version = written;
      dirty = true;
    }
    // An unsealed edit is dropped: its writes were to a transient copy nobody else sees.
    if (!dirty) return undefined;
    const snapshot = edit.finish(version, changes);
    this.sequencer.stamp(snapshot, changes.length <= 1);
    return snapshot;
  }

  /** Writes an Added or Updated delta; the resourceVersion it carries ('' for none), or undefined when nothing was written. */
  private upsert(edit: SnapshotEdit<T>, incoming: T, changes: Change<T>[]): string | undefined {
    const key = this.keyOf(incoming);
    if (key === undefined) return undefined;
    const previous = edit.get(key);
    const version = incoming.metadata.resourceVersion;
    if (previous !== undefined && version && previous.metadata.resourceVersion === version) return undefined;
    const outcome = previous === undefined ? 'left-out' : 'kept-previous';
    const object = this.store(key, incoming, previous, outcome);
    if (object === undefined) return undefined;
    // No closure here: this is the path of every watch event.
    try {
      edit.put(key, previous, object);
    } catch (failure) {
      return this.indexFailed(failure, key, outcome);
    }
    changes.push(previous === undefined ? { type: 'add', key, object, isInInitialList: false } : { type: 'update', key, oldObject: previous, object, isResync: false });
    return version || '';
  }

  /** Writes a Deleted delta; the resourceVersion it carries ('' for none), or undefined when nothing was written. */
  private delete(edit: SnapshotEdit<T>, incoming: T, changes: Change<T>[]): string | undefined {
    const key = this.keyOf(incoming);
    if (key === undefined) return undefined;
    const previous = edit.get(key);
    // Deleting what is not cached changes nothing: this also collapses duplicate deletes.
    if (previous === undefined) return undefined;
    const object = this.store(key, incoming, previous, 'deleted') ?? previous;
    try {
      edit.remove(key, previous);
    } catch (failure) {
      return this.indexFailed(failure, key, 'kept-previous');
    }
    changes.push({ type: 'delete', key, object, finalStateUnknown: false });
    return incoming.metadata.resourceVersion || '';
  }

  /** Adds a Replace page to the relist; at the `last` page, the swapped-in snapshot, numbered. */
  replacePage(page: ReplaceDelta<T>): IndexedSnapshot<T> | undefined {
    if (page.scope !== undefined) return this.namespacePage(page, page.scope);
    // A Replace of everything supersedes every unfinished Replace of a namespace.
    if (page.first) this.namespaceRelists = undefined;
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
    const snapshot = this.swap(relist, page.resourceVersion, page.handover);
    // A relist's snapshot changes each key once (its changes come from one key set).
    this.sequencer.stamp(snapshot, true);
    return snapshot;
  }

  /**
   * Adds a page of one namespace's Replace to that namespace's relist (a first page restarts it);
   * at the `last` page, the cache with that namespace replaced, numbered. Removing a namespace
   * from the set is such a Replace, with no items and no resourceVersion: the cache keeps its own.
   */
  private namespacePage(page: ReplaceDelta<T>, scope: NamespaceScope): IndexedSnapshot<T> | undefined {
    const relists = (this.namespaceRelists ??= new Map());
    let relist = relists.get(scope.namespace);
    if (page.first || relist === undefined) relists.set(scope.namespace, (relist = new NamespaceRelist<T>()));
    relist.page(page, this.current, this);
    if (!page.last) return undefined;
    relists.delete(scope.namespace);
    const snapshot = relist.swap(this.current, scope, page.resourceVersion || this.current.resourceVersion, !this.everSynced, this);
    if (snapshot.synced) this.everSynced = true;
    // A relist's snapshot changes each key once.
    this.sequencer.stamp(snapshot, true);
    return snapshot;
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

  /**
   * What is stored for `incoming`: shared with the version it replaces, transformed (sharing
   * after the transform for `dropManagedFields`, see `sharesAfter`) and frozen; undefined
   * (rejected) when the transform fails.
   */
  store(key: string, incoming: T, replaced: T | undefined, outcome: RejectionOutcome): T | undefined {
    const { transform, freeze, share } = this.preparation;
    if (share === 'before') shareUnchanged(replaced, incoming);
    try {
      const transformed = transform === undefined ? incoming : checkTransformed(transform(incoming));
      if (share === 'after') shareUnchanged(replaced, transformed);
      return freeze ? deepFreeze(transformed) : transformed;
    } catch (cause) {
      this.reject({ key, stage: 'transform', outcome, cause });
      return undefined;
    }
  }

  /** The object's cache key; undefined (rejected) when it has none. */
  keyOf(incoming: T): string | undefined {
    try {
      return objectKey(incoming);
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error;
      // Not the ProtocolError itself: its excerpt would carry the object's data into logs.
      this.reject({ key: undefined, stage: 'key', outcome: 'left-out' });
      return undefined;
    }
  }

  /** Rejects a write that an index function failed (writes are all or nothing); rethrows anything else. */
  indexFailed(failure: unknown, key: string, outcome: RejectionOutcome): undefined {
    if (!(failure instanceof IndexFunctionFailure)) throw failure;
    this.reject({ key, stage: 'index', indexName: failure.indexName, outcome, cause: failure.cause });
    return undefined;
  }

  private reject(details: ConstructorParameters<typeof RejectedObjectError>[0]): void {
    (this.rejections ??= []).push(new RejectedObjectError(details));
  }
}
