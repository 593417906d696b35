import { randomUUID } from 'node:crypto';
import type { SchedulerLike } from 'rxjs';
import type { KubeObject, ObjectMeta } from 'rx-informer';
import { apiVersionOf, events, eventsV1, type Resource } from 'rx-informer';
import { resourceId } from './builtinResources';
import { coreEventOf, eventsV1EventOf } from './eventConversion';
import { EventHistory, type WatchCacheLimits } from './eventHistory';
import { storedObject, type ChangeType, type StoreEvent, type StoredObject } from './history';
import { alreadyExists, ApiStatusError, conflict, invalid, notFound, requiredField } from './status';

/**
 * In-process CRUD over the loopback server's data. Objects are plain wire JSON. Every mutation
 * bumps one integer resourceVersion counter (emitted as strings, as etcd's revision is) and feeds
 * open watches.
 *
 * Stored objects are shared, not copied: treat what `get` and `list` return as immutable.
 *
 * Core `events` and `eventsV1` (events.k8s.io/v1) are one kind, as in the API server: an Event
 * created, updated or deleted through either is the other's too, converted, at the same
 * resourceVersion.
 *
 * Writes here are not requests: they record no `metadata.managedFields` and run no kind's
 * strategy (a status given to `update` is stored); the HTTP endpoints do both.
 */
export interface ClusterStore {
  /** Sets uid, resourceVersion, creationTimestamp and generation 1. @throws ApiStatusError 409 AlreadyExists, 422 without a name */
  create<T extends KubeObject>(resource: Resource<T>, object: T): T;
  /** @throws ApiStatusError 409 Conflict when metadata.resourceVersion is set and stale; 404 when missing. Generation +1 when spec changed. */
  update<T extends KubeObject>(resource: Resource<T>, object: T): T;
  /** Deletes now, or marks `deletionTimestamp` while finalizers remain. @throws ApiStatusError 404 when missing */
  delete<T extends KubeObject>(resource: Resource<T>, namespace: string | undefined, name: string): T;
  /** The object under namespace/name, or undefined. */
  get<T extends KubeObject>(resource: Resource<T>, namespace: string | undefined, name: string): T | undefined;
  /** Objects sorted by key (namespace/name), as etcd returns them; all namespaces when `namespace` is undefined. */
  list<T extends KubeObject>(resource: Resource<T>, namespace?: string): T[];
  /** The current counter. */
  readonly resourceVersion: string;
  /**
   * Compacts "etcd" at the current resourceVersion: an Exact list or a continue token from before
   * it gets 410. The watch cache's history goes too (a watch from before it gets 410 as well),
   * unless `keepWatchCache`: a real compaction leaves the watch cache alone.
   */
  compact(options?: CompactOptions): void;
  /**
   * Empties the watch cache's history, as an API server restart does: a watch from an older
   * resourceVersion gets 410, while an Exact list there is still served from etcd's history.
   */
  resetWatchCache(): void;
}

/** How {@link ClusterStore.compact} compacts. */
export interface CompactOptions {
  /** Leave the watch cache's history as it is (what etcd's compaction does); default false. */
  readonly keepWatchCache?: boolean;
}

/** How much history a store keeps (the loopback server's `historyLimit` and watch cache options). */
export interface HistoryLimits {
  /** Events kept per resource for etcd's history and the watch cache alike (a memory bound); default 10 000. */
  readonly historyLimit?: number;
  /** Events the watch cache keeps per resource; default (and at most) `historyLimit`. */
  readonly watchCacheCapacity?: number;
  /** Events older than this leave the watch cache as new ones arrive; default: no time bound. */
  readonly watchCacheWindowMs?: number;
  /** The clock of that window; default `Date.now`. */
  readonly now?: () => number;
}

/** Called synchronously for each change of a resource, in resourceVersion order. */
export type ChangeListener = (event: StoreEvent) => void;

/**
 * A resource whose objects are another resource's, seen through a conversion: events.k8s.io/v1
 * Events are the core Events (`eventConversion.ts`). Writes to it are converted and made to the
 * base resource; every change of the base is recorded in the view's bucket too, at the same
 * resourceVersion, so that lists and watches of either see every object.
 */
interface StoredView {
  readonly base: Resource<KubeObject>;
  readonly view: Resource<KubeObject>;
  readonly toView: (object: KubeObject) => KubeObject;
  readonly toBase: (object: KubeObject) => KubeObject;
}

const STORED_VIEWS: readonly StoredView[] = [{ base: events, view: eventsV1, toView: eventsV1EventOf, toBase: coreEventOf }];

class Bucket {
  readonly objects = new Map<string, StoredObject>();
  readonly listeners = new Set<ChangeListener>();
  readonly history: EventHistory;
  private sorted: string[] | undefined;

  constructor(
    historyLimit: number,
    watchCache: WatchCacheLimits,
    cacheStartRv: number,
    /** The views whose buckets each change of this one is recorded in too. */
    readonly views: readonly StoredView[],
  ) {
    this.history = new EventHistory(historyLimit, watchCache, cacheStartRv);
  }

  /** Keys in etcd order; recomputed only after the key set changes, so updates keep it. */
  sortedKeys(): readonly string[] {
    this.sorted ??= [...this.objects.keys()].sort(compareKeys);
    return this.sorted;
  }

  keysChanged(): void {
    this.sorted = undefined;
  }
}

/** Byte order of keys, as etcd sorts them (keys here are ASCII in practice). */
export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The store key of an object: `namespace/name`, or `name` for cluster-scoped resources. */
export function storeKey(resource: Resource<KubeObject>, namespace: string | undefined, name: string): string {
  return resource.namespaced ? `${namespace ?? ''}/${name}` : name;
}

const NAME_SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

function timestamp(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** kind, apiVersion, metadata first (metadata filled in by the caller), then the rest, as the API server orders them. */
function wireShape(resource: Resource<KubeObject>, object: KubeObject): Record<string, unknown> {
  const { kind: _kind, apiVersion: _apiVersion, metadata: _metadata, ...body } = object;
  return { kind: resource.kind, apiVersion: apiVersionOf(resource), metadata: undefined, ...body };
}

/** Whether spec differs; the same reference (the usual spread-based edit) skips serializing. */
function specChanged(before: KubeObject, after: KubeObject): boolean {
  const a = (before as { spec?: unknown }).spec;
  const b = (after as { spec?: unknown }).spec;
  if (a === b) return false;
  if (a === undefined || b === undefined) return true;
  return JSON.stringify(a) !== JSON.stringify(b);
}

/** The store behind a loopback server: the public {@link ClusterStore} plus what handlers need. */
export class ClusterStoreImpl implements ClusterStore {
  private readonly buckets = new Map<string, Bucket>();
  /** Requests waiting for the counter to reach a resourceVersion; checked on each change. */
  private readonly rvWaiters = new Set<() => void>();
  private rv = 1;
  /** etcd's compaction point: the state at an older resourceVersion is gone. */
  private compactedRv = 1;
  /** Where the watch cache of a resource first touched from now on starts (the last restart). */
  private watchCacheStartRv = 1;
  private readonly historyLimit: number;
  private readonly watchCache: WatchCacheLimits;

  constructor(limits: HistoryLimits = {}) {
    this.historyLimit = limits.historyLimit ?? 10_000;
    this.watchCache = {
      capacity: Math.min(limits.watchCacheCapacity ?? this.historyLimit, this.historyLimit),
      windowMs: limits.watchCacheWindowMs,
      now: limits.now ?? Date.now,
    };
  }

  get resourceVersion(): string {
    return String(this.rv);
  }

  /** The counter as a number, for the handlers' comparisons. */
  get currentRv(): number {
    return this.rv;
  }

  bucket(resource: Resource<KubeObject>): Bucket {
    const id = resourceId(resource);
    let bucket = this.buckets.get(id);
    if (bucket === undefined) {
      // A base and its views are made together, empty, so that each view sees every change of its base.
      const view = this.viewOf(resource);
      if (view !== undefined) {
        this.bucket(view.base);
        return this.buckets.get(id)!;
      }
      const views = STORED_VIEWS.filter((v) => resourceId(v.base) === id);
      bucket = new Bucket(this.historyLimit, this.watchCache, this.watchCacheStartRv, views);
      this.buckets.set(id, bucket);
      for (const v of views) this.buckets.set(resourceId(v.view), new Bucket(this.historyLimit, this.watchCache, this.watchCacheStartRv, []));
    }
    return bucket;
  }

  /** The view `resource` is, when its objects are another resource's. */
  private viewOf(resource: Resource<KubeObject>): StoredView | undefined {
    const id = resourceId(resource);
    return STORED_VIEWS.find((v) => resourceId(v.view) === id);
  }

  create<T extends KubeObject>(resource: Resource<T>, object: T): T {
    return this.createEntry(resource, object).object as T;
  }

  /** {@link create}, returning the stored entry (whose cached bytes the HTTP answer reuses). */
  createEntry(resource: Resource<KubeObject>, object: KubeObject): StoredObject {
    const view = this.viewOf(resource);
    if (view !== undefined) return this.bucket(resource).objects.get(this.createEntry(view.base, view.toBase(object)).key)!;
    const bucket = this.bucket(resource);
    const meta: ObjectMeta = object.metadata ?? { name: '' };
    const namespace = resource.namespaced ? meta.namespace || 'default' : undefined;
    let name = meta.name;
    if (!name) {
      if (!meta.generateName) {
        throw new ApiStatusError(invalid(resource.kind, resource.group, '', [requiredField('metadata.name', 'name or generateName is required')]));
      }
      do {
        let suffix = '';
        for (let i = 0; i < 5; i++) suffix += NAME_SUFFIX_ALPHABET[Math.floor(Math.random() * NAME_SUFFIX_ALPHABET.length)];
        name = meta.generateName + suffix;
      } while (bucket.objects.has(storeKey(resource, namespace, name)));
    }
    const key = storeKey(resource, namespace, name);
    if (bucket.objects.has(key)) throw new ApiStatusError(alreadyExists(resource, name));
    const rv = ++this.rv;
    // The server owns deletionTimestamp; cluster-scoped objects carry no namespace.
    const { deletionTimestamp: _deletion, namespace: _namespace, ...rest } = meta;
    const stored = {
      ...wireShape(resource, object),
      metadata: {
        ...rest,
        name,
        ...(namespace === undefined ? {} : { namespace }),
        uid: randomUUID(),
        resourceVersion: String(rv),
        generation: 1,
        creationTimestamp: timestamp(),
      },
    } as KubeObject;
    const entry = storedObject(key, stored);
    bucket.objects.set(key, entry);
    bucket.keysChanged();
    this.record(bucket, rv, 'ADDED', namespace, entry, undefined);
    return entry;
  }

  update<T extends KubeObject>(resource: Resource<T>, object: T): T {
    return this.updateEntry(resource, object).object as T;
  }

  /**
   * {@link update}, returning the stored entry (whose cached bytes the HTTP answer reuses).
   * `generationChanged` overrides the store's rule (a change of spec) with the kind's.
   */
  updateEntry(resource: Resource<KubeObject>, object: KubeObject, generationChanged?: boolean): StoredObject {
    const view = this.viewOf(resource);
    if (view !== undefined) return this.bucket(resource).objects.get(this.updateEntry(view.base, view.toBase(object), generationChanged).key)!;
    const bucket = this.bucket(resource);
    const meta = object.metadata;
    const namespace = resource.namespaced ? meta.namespace || 'default' : undefined;
    const key = storeKey(resource, namespace, meta.name);
    const existing = bucket.objects.get(key);
    if (existing === undefined) throw new ApiStatusError(notFound(resource, meta.name));
    const old = existing.object;
    if (meta.resourceVersion !== undefined && meta.resourceVersion !== '' && meta.resourceVersion !== old.metadata.resourceVersion) {
      throw new ApiStatusError(conflict(resource, meta.name));
    }
    const rv = ++this.rv;
    const generation = (old.metadata.generation ?? 1) + ((generationChanged ?? specChanged(old, object)) ? 1 : 0);
    const { deletionTimestamp: _deletion, namespace: _namespace, ...rest } = meta;
    const stored = {
      ...wireShape(resource, object),
      metadata: {
        ...rest,
        ...(namespace === undefined ? {} : { namespace }),
        uid: old.metadata.uid,
        resourceVersion: String(rv),
        generation,
        creationTimestamp: old.metadata.creationTimestamp,
        ...(old.metadata.deletionTimestamp === undefined ? {} : { deletionTimestamp: old.metadata.deletionTimestamp }),
      },
    } as KubeObject;
    const entry = storedObject(key, stored, existing);
    if (stored.metadata.deletionTimestamp !== undefined && (stored.metadata.finalizers ?? []).length === 0) {
      // The last finalizer is gone from an object being deleted: the update completes the deletion.
      bucket.objects.delete(key);
      bucket.keysChanged();
      this.record(bucket, rv, 'DELETED', namespace, entry, existing);
      return entry;
    }
    bucket.objects.set(key, entry);
    this.record(bucket, rv, 'MODIFIED', namespace, entry, existing);
    return entry;
  }

  delete<T extends KubeObject>(resource: Resource<T>, namespace: string | undefined, name: string): T {
    const view = this.viewOf(resource);
    if (view !== undefined) return view.toView(this.delete(view.base, namespace, name)) as T;
    const bucket = this.bucket(resource);
    const ns = resource.namespaced ? namespace || 'default' : undefined;
    const key = storeKey(resource, ns, name);
    const existing = bucket.objects.get(key);
    if (existing === undefined) throw new ApiStatusError(notFound(resource, name));
    const old = existing.object;
    if ((old.metadata.finalizers ?? []).length > 0) {
      // Finalizers hold the object: mark it, as the API server does, and let an update finish it.
      if (old.metadata.deletionTimestamp !== undefined) return old as T;
      const rv = ++this.rv;
      const marked = {
        ...old,
        metadata: { ...old.metadata, resourceVersion: String(rv), deletionTimestamp: timestamp(), deletionGracePeriodSeconds: 0 },
      };
      const entry = storedObject(key, marked, existing);
      bucket.objects.set(key, entry);
      this.record(bucket, rv, 'MODIFIED', ns, entry, existing);
      return marked as unknown as T;
    }
    const rv = ++this.rv;
    const last = { ...old, metadata: { ...old.metadata, resourceVersion: String(rv) } };
    bucket.objects.delete(key);
    bucket.keysChanged();
    this.record(bucket, rv, 'DELETED', ns, storedObject(key, last, existing), existing);
    return last as T;
  }

  get<T extends KubeObject>(resource: Resource<T>, namespace: string | undefined, name: string): T | undefined {
    const ns = resource.namespaced ? namespace || 'default' : undefined;
    return this.bucket(resource).objects.get(storeKey(resource, ns, name))?.object as T | undefined;
  }

  /** The stored entry of one object (its cached bytes answer a GET), or undefined when missing. */
  entry(resource: Resource<KubeObject>, namespace: string | undefined, name: string): StoredObject | undefined {
    const ns = resource.namespaced ? namespace || 'default' : undefined;
    return this.bucket(resource).objects.get(storeKey(resource, ns, name));
  }

  list<T extends KubeObject>(resource: Resource<T>, namespace?: string): T[] {
    const bucket = this.bucket(resource);
    const out: T[] = [];
    const prefix = resource.namespaced && namespace !== undefined && namespace !== '' ? `${namespace}/` : undefined;
    for (const key of bucket.sortedKeys()) {
      if (prefix !== undefined && !key.startsWith(prefix)) continue;
      out.push(bucket.objects.get(key)!.object as T);
    }
    return out;
  }

  compact(options: CompactOptions = {}): void {
    this.compactTo(this.rv, options.keepWatchCache ?? false);
  }

  /** Compacts etcd at `rv` (at most the current one); see {@link compact}. */
  compactTo(rv: number, keepWatchCache: boolean): void {
    this.compactedRv = Math.max(this.compactedRv, Math.min(rv, this.rv));
    if (keepWatchCache) return;
    this.watchCacheStartRv = this.rv;
    for (const bucket of this.buckets.values()) bucket.history.forgetAll(this.rv);
  }

  resetWatchCache(): void {
    this.watchCacheStartRv = this.rv;
    for (const bucket of this.buckets.values()) bucket.history.resetWatchCache(this.rv);
  }

  /** Whether etcd still holds the revision `rv` (it is not older than the last compaction). */
  etcdHas(rv: number): boolean {
    return rv >= this.compactedRv;
  }

  /**
   * Resolves true as soon as the counter reaches `rv`, or false once `timeoutMs` has passed on
   * `scheduler` or `signal` aborted (a client that went away).
   */
  waitForRv(rv: number, timeoutMs: number, scheduler: SchedulerLike, signal: AbortSignal): Promise<boolean> {
    if (this.rv >= rv) return Promise.resolve(true);
    if (timeoutMs <= 0 || signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const settle = (reached: boolean): void => {
        this.rvWaiters.delete(check);
        timer.unsubscribe();
        signal.removeEventListener('abort', abort);
        resolve(reached);
      };
      const check = (): void => {
        if (this.rv >= rv) settle(true);
      };
      const abort = (): void => settle(false);
      const timer = scheduler.schedule(() => settle(false), timeoutMs);
      signal.addEventListener('abort', abort);
      this.rvWaiters.add(check);
    });
  }

  /** Registers a listener for a resource's changes; returns its removal. */
  subscribe(resource: Resource<KubeObject>, listener: ChangeListener): () => void {
    const bucket = this.bucket(resource);
    bucket.listeners.add(listener);
    return () => bucket.listeners.delete(listener);
  }

  /** The watch cache's events of a resource after `rv`, or undefined when `rv` is before its window. */
  watchCacheSince(resource: Resource<KubeObject>, rv: number): StoreEvent[] | undefined {
    return this.bucket(resource).history.watchCacheSince(rv);
  }

  /** The `(Y)` of "too old resource version: X (Y)" for a resource's watch cache. */
  watchCacheOldestRv(resource: Resource<KubeObject>): number {
    return this.bucket(resource).history.watchCacheOldestRv;
  }

  /**
   * The resource's objects as they were at `rv`, in key order, as etcd has them: undefined when
   * `rv` is older than etcd's compaction or than the history kept. Past states are rebuilt by
   * undoing the events after `rv`.
   */
  objectsAt(resource: Resource<KubeObject>, rv: number): StoredObject[] | undefined {
    const bucket = this.bucket(resource);
    const current = (): StoredObject[] => bucket.sortedKeys().map((key) => bucket.objects.get(key)!);
    if (rv >= this.rv) return current();
    if (!this.etcdHas(rv)) return undefined;
    const events = bucket.history.since(rv);
    if (events === undefined) return undefined;
    if (events.length === 0) return current();
    const past = new Map<string, StoredObject | null>();
    for (const event of events) if (!past.has(event.object.key)) past.set(event.object.key, event.prev ?? null);
    const out: StoredObject[] = [];
    for (const key of bucket.sortedKeys()) {
      const before = past.get(key);
      if (before === undefined) out.push(bucket.objects.get(key)!);
      else if (before !== null) out.push(before);
      past.delete(key);
    }
    let added = false;
    for (const before of past.values()) {
      if (before !== null) {
        out.push(before);
        added = true;
      }
    }
    if (added) out.sort((a, b) => compareKeys(a.key, b.key));
    return out;
  }

  private record(bucket: Bucket, rv: number, type: ChangeType, namespace: string | undefined, object: StoredObject, prev: StoredObject | undefined): void {
    const event: StoreEvent = { rv, type, namespace, object, prev, stampedPrev: undefined };
    bucket.history.push(event);
    for (const listener of bucket.listeners) listener(event);
    for (const view of bucket.views) this.recordInView(view, rv, type, namespace, object);
    if (this.rvWaiters.size > 0) for (const check of [...this.rvWaiters]) check();
  }

  /** The same change, seen through `view`, in the view's bucket. */
  private recordInView(view: StoredView, rv: number, type: ChangeType, namespace: string | undefined, object: StoredObject): void {
    const bucket = this.bucket(view.view);
    const previous = bucket.objects.get(object.key);
    const entry = storedObject(object.key, view.toView(object.object), previous);
    if (type === 'DELETED') {
      bucket.objects.delete(object.key);
      bucket.keysChanged();
    } else {
      bucket.objects.set(object.key, entry);
      if (previous === undefined) bucket.keysChanged();
    }
    const event: StoreEvent = { rv, type, namespace, object: entry, prev: previous, stampedPrev: undefined };
    bucket.history.push(event);
    for (const listener of bucket.listeners) listener(event);
  }
}

/** A fresh, empty store (the server makes its own; this is for tests of code that only needs a store). */
export function createClusterStore(options: HistoryLimits = {}): ClusterStore {
  return new ClusterStoreImpl(options);
}
