import type { Delta, ReplaceDelta } from '../reflector/delta';
import { ProtocolError, RejectedObjectError, type RejectionOutcome } from '../sources/errors';
import { sameResourceVersion, type AddChange, type Change } from '../store/change';
import { ChangeSequencer } from '../store/changeSequence';
import { deepFreeze } from '../store/deepFreeze';
import { markHandover } from '../store/handover';
import { IndexedSnapshot, type SnapshotBuilder, type SnapshotEdit } from '../store/indexedSnapshot';
import { NAMESPACE_INDEX, namespaceIndex, type IndexFunc } from '../store/indexers';
import { objectKey } from '../store/keys';
import type { KubeObject } from '../store/object';
import { shareUnchanged } from '../store/shareUnchanged';
import type { IndexerConfig } from './indexer';
import { checkTransformed, guardIndexers, IndexFunctionFailure } from './indexerGuards';

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
export class IndexerState<T extends KubeObject> {
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
