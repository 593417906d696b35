import type { KubeConfig } from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { asyncScheduler, BehaviorSubject, EMPTY, filter, first, firstValueFrom, isObservable, Subject, switchMap, takeUntil, type Observable, type Subscription } from 'rxjs';
import { checkInformerConfig } from '../informer/checkInformerConfig';
import { informer, informerFrom, informerName, type Informer, type InformerFromOptions, type InformerOptions } from '../informer/informer';
import { defaultLogger } from '../base/logger';
import { defineResource, type Resource } from '../resources/resource';
import type { ListerWatcher } from '../sources/listerWatcher';
import { resolveTarget } from '../sources/transport';
import type { IndexFunc } from '../store/indexers';
import type { KubeObject } from '../base/object';
import type { Snapshot } from '../store/snapshot';
import { InformerStoppedError, waitForSync, type WaitForSyncOptions } from '../informer/waitForSync';
import { lazyInformer, type LazyInformer } from './lazyInformer';
import { checkNamespaces, type NamespaceSet } from '../informer/namespaceRuns';
import type { MetadataOnlyOptions, PartialObjectMetadata } from '../sources/partialObjectMetadata';
import { resourceDiscovery, type ResourceDiscovery } from '../sources/resourceDiscovery';

export { IndexerConflictError } from './lazyInformer';

/** Any resource by group, version and plural name, when no typed descriptor is at hand. */
export interface GroupVersionResource {
  /** API group; '' for the core group. */
  readonly group: string;
  readonly version: string;
  /** The plural, lower-case name used in URLs (`widgets`). */
  readonly resource: string;
  /** Default true. */
  readonly namespaced?: boolean;
  readonly kind?: string;
}

/** The selectors of an informer's list and watch requests, as `tweakListOptions` sees them. */
export interface ListSelectors {
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
}

/**
 * Options of {@link informerFactory}; every informer it makes shares them. All optional. The
 * options passed straight through to each informer are {@link InformerFromOptions}' own, so that
 * their documentation and defaults live in one place. `logger` also gets the factory's own line
 * when an informer stops on an error; `scheduler` also runs the factory's own timers.
 */
export interface InformerFactoryOptions
  extends Pick<InformerFromOptions, 'freeze' | 'shareUnchanged' | 'streamingList' | 'scheduler' | 'logger' | 'backoff' | 'resourceGoneBackoff' | 'pageSize'>,
    Pick<InformerOptions, 'listReadAhead'> {
  /** Watch one namespace (client-go's WithNamespace). Default: all. */
  readonly namespace?: string;
  /**
   * Watch a set of namespaces (controller-runtime's cache `DefaultNamespaces`): each informer of a
   * namespaced resource keeps one cache of them all (see `InformerNamespacesOptions`). A list, or
   * an Observable of lists that changes the set at run time. Not with `namespace`. Cluster-scoped
   * resources are watched whole.
   */
  readonly namespaces?: NamespaceSet;
  /** Default resync period (ms) of handlers added with `informer.handle()`. Default 0 (never); minimum 1000. */
  readonly resyncPeriod?: number;
  /** Adjusts the selectors of every informer (client-go's WithTweakListOptions); the result is part of the sharing key. */
  readonly tweakListOptions?: (selectors: ListSelectors) => ListSelectors;
  /** Runs once per object before it is cached by any informer, e.g. `dropManagedFields`. */
  readonly transform?: <T extends KubeObject>(object: T) => T;
  /**
   * The least time (ms) between two discovery fetches that look-ups of `informerForKind` and
   * `informerForName` which find nothing cause (see `resourceDiscovery`). Default 30_000.
   */
  readonly discoveryRefreshInterval?: number;
}

/** Options of one `informerFor` call. */
export interface InformerForOptions<T extends KubeObject = KubeObject> {
  /** Overrides the factory's namespace (or namespaces) for this informer. */
  readonly namespace?: string;
  /**
   * A set of namespaces for this informer, overriding the factory's namespace (or namespaces); not
   * with `namespace`. Shared by set: the same names in any order and with repeats (or the same
   * Observable) give the same informer.
   */
  readonly namespaces?: NamespaceSet;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /**
   * Index functions, merged into the shared informer's (client-go's AddIndexers), which always has
   * the namespace index (`NAMESPACE_INDEX`, used by `snapshot.list({ namespace })`). Allowed until
   * the informer first runs; after that, a new index name throws an `IndexerConflictError`.
   */
  readonly indexers?: Readonly<Record<string, IndexFunc<T>>>;
  /** Default false. See {@link MetadataInformerForOptions}. */
  readonly metadataOnly?: false;
}

/**
 * Options of a metadata-only `informerFor` (client-go's `metadatainformer` factory's `ForResource`):
 * a metadata-only informer is shared apart from the whole-object one of the same resource and scope.
 */
export interface MetadataInformerForOptions extends Omit<InformerForOptions<PartialObjectMetadata>, 'metadataOnly'> {
  /** `true`, or what to keep of each object's metadata: see `MetadataInformerOptions`. */
  readonly metadataOnly: true | MetadataOnlyOptions;
}

/** Makes and shares informers; see {@link informerFactory}. */
export interface InformerFactory {
  /**
   * The shared informer for a resource (typed descriptor, or any group/version/resource) in a
   * namespace with selectors: the same arguments give the same informer. Its streams may be
   * subscribed at once, but nothing is requested before `start()`; they complete at `shutdown()`.
   *
   * @throws ConfigError at once for a label or field selector that does not parse.
   */
  informerFor<T extends KubeObject>(resource: Resource<T>, options?: InformerForOptions<T>): Informer<T>;
  /** The shared metadata-only informer for a resource (see `MetadataInformerOptions`). */
  informerFor(resource: Resource<KubeObject> | GroupVersionResource, options: MetadataInformerForOptions): Informer<PartialObjectMetadata>;
  /** The shared informer for a resource named by group, version and plural, typed as `KubeObject`. */
  informerFor(resource: GroupVersionResource, options?: InformerForOptions): Informer<KubeObject>;
  /**
   * The shared informer for the resource of `kind` in `apiVersion` (`'apps/v1'`, `'Deployment'`),
   * built-in or custom, found through the API server's discovery (see {@link discovery}): the
   * informer `informerFor` gives for that resource, shared with it.
   *
   * @throws ResourceGoneError (rejects) when the server serves no such resource, even after a
   * discovery refresh; StatusError, NetworkError when discovery fails.
   */
  informerForKind(apiVersion: string, kind: string, options?: InformerForOptions): Promise<Informer<KubeObject>>;
  /** The shared metadata-only informer for the resource of `kind` in `apiVersion`. */
  informerForKind(apiVersion: string, kind: string, options: MetadataInformerForOptions): Promise<Informer<PartialObjectMetadata>>;
  /**
   * The shared informer for the resource a kubectl-style name names (`'deploy'`, `'po'`,
   * `'certificates.cert-manager.io'`, `'deployments.v1.apps'`), found through discovery as
   * `informerForKind`'s.
   *
   * @throws ResourceGoneError (rejects) when the server serves no such resource, even after a
   * discovery refresh; StatusError, NetworkError when discovery fails.
   */
  informerForName(name: string, options?: InformerForOptions): Promise<Informer<KubeObject>>;
  /** The shared metadata-only informer for the resource a kubectl-style name names. */
  informerForName(name: string, options: MetadataInformerForOptions): Promise<Informer<PartialObjectMetadata>>;
  /**
   * The factory's discovery: the resources the API server serves, cached, fetched again when a
   * look-up finds nothing (at most once per `discoveryRefreshInterval`).
   */
  readonly discovery: ResourceDiscovery;
  /**
   * Tears one informer down (controller-runtime's `RemoveInformer`): completes its streams as
   * `shutdown()` does, stops its requests and timers, and forgets it, so that the next
   * `informerFor` of the same resource and scope makes a new one. Resolves once it has stopped;
   * at once for an informer the factory does not hold (any more).
   */
  removeInformer(informer: Informer<KubeObject> | Informer<PartialObjectMetadata>): Promise<void>;
  /**
   * Runs every informer made so far, and those made later, and lets every stream subscribed to
   * them through. Idempotent. An informer whose cache failed is started again.
   */
  start(): void;
  /**
   * Waits for every informer the factory has made (see the `waitForSync` function); resolves with
   * their snapshots by name. Rejects at once before `start()`, and with an `InformerStoppedError`
   * naming an informer whose cache failed (client-go's WaitForCacheSync reports it unsynced).
   */
  waitForSync(options?: WaitForSyncOptions): Promise<ReadonlyMap<string, Snapshot<KubeObject>>>;
  /**
   * Stops every informer: completes every stream of every informer the factory made (`informer$`,
   * `handle()` streams, `synced$`, `changes$`, `deltas$`; `health$` goes on and reports `idle`), so
   * that nothing it runs keeps the process alive. Resolves once every informer has stopped: its
   * requests aborted and its timers cleared. A later `start()` starts them again with new lists.
   */
  shutdown(): Promise<void>;
}

interface Entry {
  readonly lazy: LazyInformer;
  /** Completes the informer's streams when `removeInformer` tears it down. */
  readonly removed$: Subject<void>;
  /** The factory's own subscription, which keeps the informer running between start and shutdown. */
  running: Subscription | undefined;
  /** Why the informer's cache failed, when it did (cleared by the next start). */
  failure: { readonly error: unknown } | undefined;
}

/**
 * One shared informer per (resource, namespace, selectors): client-go's SharedInformerFactory.
 * Many parts of a program can ask for the pods informer and ride one watch and one cache.
 *
 * 1. `informerFor` makes (or finds) an informer; its streams may be subscribed to at once.
 * 2. Nothing is requested before `start()`: subscriptions made before it wait for it.
 * 3. `shutdown()` completes every stream and stops every request and timer, then resolves: a
 *    process that calls it, with nothing else to do, exits.
 *
 * ## Example
 * ```ts
 * import type { KubeConfig } from '@kubernetes/client-node';
 * import { informerFactory, pods, deployments, dropManagedFields } from 'rx-informer';
 *
 * declare const kubeConfig: KubeConfig;
 * const factory = informerFactory(kubeConfig, { namespace: 'default', resyncPeriod: 60_000, transform: dropManagedFields });
 * const podInformer = factory.informerFor(pods);
 * const deploymentInformer = factory.informerFor(deployments);
 * podInformer.handle({ onAdd: (pod) => console.log('pod', pod.metadata.name) }).subscribe(); // waits for start()
 * factory.start();
 * await factory.waitForSync({ timeout: 30_000 });
 * console.log(deploymentInformer.name, 'synced');
 * process.once('SIGTERM', () => void factory.shutdown()); // every stream completes; the process exits
 * ```
 *
 * @param kubeConfig the cluster and credentials.
 * @param options scope, resync, selector tweaks, transform and timers shared by every informer.
 * @throws ConfigError at once for a kubeconfig without a usable current context.
 * @throws RangeError at once for an option out of range.
 * @throws TypeError at once for `namespace` with `namespaces`, or a set that is not of names.
 */
export function informerFactory(kubeConfig: KubeConfig, options: InformerFactoryOptions = {}): InformerFactory {
  resolveTarget(kubeConfig);
  checkScope(options, 'informerFactory');
  // Made and dropped: informerFrom checks every shared option (RangeError) and requests nothing,
  // so a bad one fails here instead of killing each informer at start().
  informerFrom(NOTHING, options);
  const entries = new Map<string, Entry>();
  // Informers over an Observable set of namespaces are shared by the Observable's identity.
  const observableIds = new WeakMap<object, number>();
  let observableCount = 0;
  const observableId = (observable: object): number => {
    let id = observableIds.get(observable);
    if (id === undefined) observableIds.set(observable, (id = ++observableCount));
    return id;
  };
  const logger = options.logger ?? defaultLogger;
  const scheduler = options.scheduler ?? asyncScheduler;
  const started$ = new BehaviorSubject(false);
  const shutdowns$ = new Subject<void>();
  // Every stream of every informer waits for start() and completes at the next shutdown().
  const gate = <V>(source: Observable<V>): Observable<V> =>
    started$.pipe(
      first((started) => started),
      switchMap(() => source),
      takeUntil(shutdowns$),
    );
  // removeInformer completes one informer's streams as shutdown() completes them all.
  const gateUntil =
    (removed$: Observable<void>) =>
    <V>(source: Observable<V>): Observable<V> =>
      gate(source).pipe(takeUntil(removed$));
  // Made now, so that a bad interval throws here; it requests nothing before its first look-up.
  const discovery: ResourceDiscovery = resourceDiscovery(kubeConfig, { scheduler, minRefreshInterval: options.discoveryRefreshInterval });

  const run = (entry: Entry): void => {
    if (entry.running !== undefined && !entry.running.closed) return;
    entry.failure = undefined;
    entry.running = entry.lazy.informer.informer$.subscribe({
      error: (error: unknown) => {
        // Nothing the server or the data does ends informer$; this is a bug, reported as such.
        logger.error({ informer: entry.lazy.informer.name, err: error }, 'informer stopped');
        entry.failure = { error };
        entry.running = undefined;
      },
    });
  };

  function informerFor(resource: Resource<KubeObject> | GroupVersionResource, forOptions: InformerForOptions | MetadataInformerForOptions = {}): Informer<KubeObject> {
    const descriptor = toResource(resource);
    checkScope(forOptions, 'informerFor');
    const { namespace, namespaces } = namespaceScope(descriptor, forOptions, options);
    const requested: ListSelectors = { labelSelector: forOptions.labelSelector, fieldSelector: forOptions.fieldSelector };
    const selectors = options.tweakListOptions ? options.tweakListOptions(requested) : requested;
    const metadataOnly = forOptions.metadataOnly ?? false;
    const where = namespaces === undefined ? namespace : setKey(namespaces, observableId);
    const key = JSON.stringify([descriptor.group, descriptor.version, descriptor.plural, where, selectors.labelSelector ?? '', selectors.fieldSelector ?? '', metadataOnly]);
    let entry = entries.get(key);
    if (entry === undefined) {
      const scope = { namespace, namespaces, ...selectors };
      const name = metadataOnly === false ? informerName(descriptor, scope) : `${informerName(descriptor, scope)} (metadata)`;
      checkInformerConfig(kubeConfig, name, selectors);
      const { tweakListOptions: _tweak, discoveryRefreshInterval: _interval, ...informerOptions } = options;
      const build = (indexers: Readonly<Record<string, IndexFunc<KubeObject>>>): Informer<KubeObject> => {
        const buildOptions = { ...informerOptions, ...scope, name, namespace: namespace || undefined, namespaces, indexers };
        return metadataOnly === false ? informer(kubeConfig, descriptor, buildOptions) : informer(kubeConfig, descriptor, { ...buildOptions, metadataOnly });
      };
      const removed$ = new Subject<void>();
      entry = { lazy: lazyInformer(name, build, gateUntil(removed$), scheduler), removed$, running: undefined, failure: undefined };
      entries.set(key, entry);
      if (started$.value) run(entry);
    }
    entry.lazy.addIndexers((forOptions.indexers ?? {}) as Readonly<Record<string, IndexFunc<KubeObject>>>);
    return entry.lazy.informer;
  }

  /** Stops an entry's informer and resolves once it reports idle. */
  const stop = async (stopping: readonly Entry[]): Promise<void> => {
    for (const entry of stopping) {
      entry.running?.unsubscribe();
      entry.running = undefined;
    }
    // Each informer stops after its grace period (by default when this task ends) and reports idle.
    const built = stopping.flatMap((entry) => entry.lazy.built() ?? []);
    await Promise.all(built.map((informer) => firstValueFrom(informer.health$.pipe(filter((health) => health.phase === 'idle')))));
  };

  return {
    informerFor: informerFor as InformerFactory['informerFor'],
    informerForKind: (async (apiVersion: string, kind: string, forOptions?: InformerForOptions | MetadataInformerForOptions) =>
      informerFor((await discovery.resourceForKind(apiVersion, kind)).resource, forOptions)) as InformerFactory['informerForKind'],
    informerForName: (async (name: string, forOptions?: InformerForOptions | MetadataInformerForOptions) =>
      informerFor((await discovery.resourceForName(name)).resource, forOptions)) as InformerFactory['informerForName'],
    discovery,
    async removeInformer(removed) {
      const found = [...entries].find(([, entry]) => entry.lazy.informer === removed);
      if (found === undefined) return;
      const [key, entry] = found;
      entries.delete(key);
      entry.removed$.next();
      await stop([entry]);
    },
    start() {
      if (!started$.value) started$.next(true);
      for (const entry of entries.values()) run(entry);
    },
    async waitForSync(waitOptions?: WaitForSyncOptions) {
      if (!started$.value) throw new Error('informerFactory: waitForSync() before start(): nothing runs until start() is called');
      const all = [...entries.values()];
      const failed = all.find((entry) => entry.failure !== undefined);
      if (failed !== undefined) throw new InformerStoppedError(failed.lazy.informer.name, failed.failure!.error);
      const informers = all.map((entry) => entry.lazy.informer);
      const snapshots = await waitForSync(informers, { scheduler, ...waitOptions });
      return new Map(informers.map((informer, index) => [informer.name, snapshots[index]]));
    },
    async shutdown() {
      started$.next(false);
      shutdowns$.next();
      await stop([...entries.values()]);
    },
  };
}

/**
 * Throws when `namespace` and `namespaces` are both given, or a list of namespaces holds something
 * other than names.
 */
function checkScope(scope: { readonly namespace?: string; readonly namespaces?: NamespaceSet }, where: string): void {
  if (scope.namespace !== undefined && scope.namespaces !== undefined) throw new TypeError(`${where}: give \`namespace\` or \`namespaces\`, not both`);
  if (scope.namespaces !== undefined && !isObservable(scope.namespaces)) checkNamespaces(scope.namespaces);
}

/**
 * Where an informer of the factory watches: one informerFor's scope, else the factory's; all of a
 * cluster-scoped resource.
 */
function namespaceScope(resource: Resource<KubeObject>, forOptions: InformerForOptions | MetadataInformerForOptions, options: InformerFactoryOptions): { readonly namespace: string; readonly namespaces?: NamespaceSet } {
  if (!resource.namespaced) return { namespace: '' };
  if (forOptions.namespaces !== undefined) return { namespace: '', namespaces: forOptions.namespaces };
  if (forOptions.namespace !== undefined) return { namespace: forOptions.namespace };
  if (options.namespaces !== undefined) return { namespace: '', namespaces: options.namespaces };
  return { namespace: options.namespace ?? '' };
}

/** The sharing key of a set of namespaces: its sorted distinct names, or its Observable's identity (`idOf`). */
function setKey(namespaces: NamespaceSet, idOf: (observable: object) => number): readonly (string | number)[] {
  return isObservable(namespaces) ? ['observable', idOf(namespaces)] : ['set', ...[...new Set(namespaces)].sort()];
}

/** A lister-watcher that is never subscribed to: the factory's check of its options needs one. */
const NOTHING: ListerWatcher = Object.freeze({ list: () => EMPTY, watch: () => EMPTY });

function toResource(resource: Resource<KubeObject> | GroupVersionResource): Resource<KubeObject> {
  if ('plural' in resource) return resource;
  return defineResource({ group: resource.group, version: resource.version, plural: resource.resource, kind: resource.kind ?? '', namespaced: resource.namespaced ?? true });
}
