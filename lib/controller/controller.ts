import type { KubeConfig } from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import type { Observable } from 'rxjs';
import type { KubeObject } from '../base/object';
import type { InformerFactory, InformerForOptions } from '../factory/factory';
import type { Resource } from '../resources/resource';
import { OWNER_INDEX, ownerIndex, type IndexFunc } from '../store/indexers';
import type { ControllerEvent } from './controllerEvents';
import type { ChangePredicate, KeySource } from './controllerKeys';
import type { ControllerReconciler, ControllerSnapshots } from './controllerRequest';
import { runController, type ControllerRunOptions } from './controllerRun';
import { kubeObjectClient, type ObjectClient } from './objectClient';
import { ownerKeys } from './relatedKeys';
import { qualifiedName, resourceId, watchedResource, type WatchedResource, type WatchScope } from './watchedResources';

export type { ControllerEvent, StaleCacheEvent, UnseenWrite, ReadAfterWriteMetricEvent } from './controllerEvents';
export type { ControllerRequest, ControllerReconciler, ControllerSnapshots, ControllerWrites } from './controllerRequest';
export type { ControllerRunOptions } from './controllerRun';
export type { ChangePredicate } from './controllerKeys';

/** Where a controller's informers come from, and where its writes go. */
export interface ControllerSources {
  /**
   * The informers: an `informerFactory`, so that every controller (and anything else) asking for
   * the same resource in the same scope shares one watch and one cache. The controller asks for
   * its informers when it is built, so build it before `factory.start()` (an index it adds, the
   * owner index of `owns`, can only join an informer that does not run yet). Nothing runs before
   * `start()`.
   */
  readonly factory: Pick<InformerFactory, 'informerFor'>;
  /** Where writes go (and `/version` is read), over HTTP: `kubeObjectClient(kubeConfig)`. */
  readonly kubeConfig?: KubeConfig;
  /** Where writes go, instead of `kubeConfig`: any client with the API server's semantics (a test's). */
  readonly client?: ObjectClient;
}

/** The informer of a resource a controller watches, and the predicates its changes pass through. All optional. */
export interface WatchOptions<R extends KubeObject = KubeObject> extends Pick<InformerForOptions<R>, 'namespace' | 'labelSelector' | 'fieldSelector' | 'indexers'> {
  /**
   * Operators its changes pass through before they become keys, in order: `changedGeneration()`,
   * `changedLabels()`, `matchLabels(...)`, `changedWhen(fn)` or any filter of changes. They see
   * the whole cache as adds when a run starts. Default none.
   */
  readonly predicates?: readonly ChangePredicate<R>[];
}

/** Options of `owns`: {@link WatchOptions}, and which owner references count. */
export interface OwnsOptions<R extends KubeObject = KubeObject> extends WatchOptions<R> {
  /** Only the reference marked `controller: true` maps a child to its owner (controller-runtime's `Owns`). Default true. */
  readonly onlyController?: boolean;
}

/** Maps a related object to the keys of the primaries it stands for; it may read the caches. */
export type RelatedKeys<R extends KubeObject = KubeObject> = (object: R, snapshots: ControllerSnapshots) => Iterable<string>;

/**
 * A controller being described: its primary resource and the related ones that reconcile it.
 * Immutable: each method returns a new builder; `run()` starts nothing until it is subscribed.
 */
export interface ControllerBuilder<T extends KubeObject> {
  /**
   * Reconciles the owner of each object of `resource` that changes: its owner reference to the
   * primary's group and kind (the controller reference only, unless `onlyController: false`);
   * namespaced owners in their child's namespace, cluster-scoped ones by name. Adds the owner
   * index, so that `snapshots.owned(resource, primary)` finds a primary's children.
   * controller-runtime's `Owns`, kube-runtime's `owns`.
   */
  owns<C extends KubeObject>(resource: Resource<C>, options?: OwnsOptions<C>): ControllerBuilder<T>;
  /**
   * Reconciles the primaries `keysOf` names for each object of `resource` that changes (both the
   * old and the new version of an update). `ownerKeys(...)` and `labelKeys(...)` make common
   * mappers. controller-runtime's `Watches` with `EnqueueRequestsFromMapFunc`, kube-runtime's
   * `watches`.
   */
  watches<R extends KubeObject>(resource: Resource<R>, keysOf: RelatedKeys<R>, options?: WatchOptions<R>): ControllerBuilder<T>;
  /** Predicates for the changes of every resource, ahead of each one's own. controller-runtime's `WithEventFilter`. */
  withEventFilter(...predicates: readonly ChangePredicate[]): ControllerBuilder<T>;
  /**
   * Runs the controller: a cold Observable of its work queue's events. Each subscription waits for
   * every informer's first synced snapshot, then reconciles every primary key (and every key a
   * related object names), then the keys each change names, through `reconcile`: one reconcile
   * per key at a time, coalesced, retried with backoff, `requeueAfter`. Each reconcile is handed
   * the primary and every snapshot as they are when it starts, after the cache has shown the
   * writes the reconciles of its key made before (see `readAfterWriteTimeout`). Stop it by
   * unsubscribing, or with the `signal` option (for `whileLeader`: the term's signal), after
   * which it completes once running reconciles have settled.
   *
   * @throws RangeError at once for an option out of range.
   */
  run(reconciler: ControllerReconciler<T>, options?: ControllerRunOptions): Observable<ControllerEvent>;
}

/**
 * A controller: a primary resource, the related resources whose changes reconcile it, predicates,
 * and a reconcile function fed by a rate-limited work queue. The RxJS shape of controller-runtime's
 * builder (`NewControllerManagedBy(mgr).For(&Widget{}).Owns(&ConfigMap{}).Watches(...)
 * .WithEventFilter(...)`) and kube-runtime's `Controller::new(..).owns(..).watches(..)`.
 *
 * 1. **Informers from the factory.** One per resource, asked for when the builder is made, so a
 *    resource two controllers use is one watch.
 * 2. **Keys.** A primary's change reconciles its key; a related object's change reconciles the
 *    keys it maps to (its owners for `owns`, your mapper's for `watches`). Each resource's changes
 *    pass its predicates first. The keys of changes that arrived together are queued once each.
 * 3. **Caches first.** Nothing is reconciled before every informer has synced; then every key.
 * 4. **One consistent read.** The reconciler gets `{ key, primary, snapshots, writes, signal }`:
 *    the snapshots of all informers as they were when it started, and writes whose answers the
 *    next reconcile of the key will read back.
 *
 * ## Example
 * ```ts
 * import type { KubeConfig } from '@kubernetes/client-node';
 * import { changedGeneration, configMaps, defineResource, informerFactory, type KubeObject } from 'rx-informer';
 * import { controller } from 'rx-informer/controller';
 *
 * interface Widget extends KubeObject {
 *   readonly spec?: { readonly size?: number };
 * }
 * const widgets = defineResource<Widget>({ group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget', namespaced: true });
 * declare const kubeConfig: KubeConfig;
 *
 * const factory = informerFactory(kubeConfig, { namespace: 'shop' });
 * const widgetController = controller({ factory, kubeConfig }, widgets, { predicates: [changedGeneration()] }).owns(configMaps);
 * factory.start();
 * widgetController
 *   .run(async ({ key, primary, snapshots }) => {
 *     if (primary === undefined) return; // deleted: its ConfigMaps go with it (garbage collection)
 *     const children = snapshots.owned(configMaps, primary);
 *     console.log(key, 'has', children.length, 'ConfigMaps');
 *   })
 *   .subscribe((event) => {
 *     if (event.type === 'failed') console.error('reconcile of', event.key, 'failed:', event.error);
 *   });
 * ```
 *
 * @param sources the factory the informers come from, and the kubeconfig (or client) writes go to.
 * @param resource the primary resource.
 * @param options the primary informer's scope and indexes, and its predicates.
 * @returns a builder.
 * @throws SelectorSyntaxError for a selector that does not parse; `IndexerConflictError` from the
 *   factory for an index it cannot add.
 */
export function controller<T extends KubeObject>(sources: ControllerSources, resource: Resource<T>, options: WatchOptions<T> = {}): ControllerBuilder<T> {
  const client = sources.client ?? (sources.kubeConfig === undefined ? undefined : kubeObjectClient(sources.kubeConfig));
  const empty: BuilderState<T> = { sources, client, resource, watched: [], related: [], globalPredicates: [] };
  const erased = options as unknown as WatchOptions;
  const primary = watch(empty, resource as Resource<KubeObject>, erased);
  return builder({ ...primary.state, related: [{ index: primary.index, predicates: erased.predicates ?? [], keysOf: undefined }] });
}

interface BuilderState<T extends KubeObject> {
  readonly sources: ControllerSources;
  readonly client: ObjectClient | undefined;
  readonly resource: Resource<T>;
  readonly watched: readonly WatchedResource[];
  /** The primary's source first, then each related resource's, in the order they were added. */
  readonly related: readonly KeySource[];
  readonly globalPredicates: readonly ChangePredicate[];
}

function builder<T extends KubeObject>(state: BuilderState<T>): ControllerBuilder<T> {
  return {
    owns(resource, options = {}) {
      const { onlyController, ...watchOptions } = options as unknown as OwnsOptions;
      const indexers: Readonly<Record<string, IndexFunc<KubeObject>>> = { ...watchOptions.indexers, [OWNER_INDEX]: ownerIndex };
      const mapper = ownerKeys(state.resource as Resource<KubeObject>, { onlyController });
      return builder(addRelated(state, resource as Resource<KubeObject>, { ...watchOptions, indexers }, (object) => mapper(object)));
    },
    watches(resource, keysOf, options = {}) {
      return builder(addRelated(state, resource as Resource<KubeObject>, options as unknown as WatchOptions, keysOf as RelatedKeys));
    },
    withEventFilter(...predicates) {
      return builder({ ...state, globalPredicates: [...state.globalPredicates, ...predicates] });
    },
    run(reconciler, options = {}) {
      const sources = state.related.map((source) => ({ ...source, predicates: [...state.globalPredicates, ...source.predicates] }));
      return runController({ resource: state.resource, watched: state.watched, sources, client: state.client }, reconciler, options);
    },
  };
}

function addRelated<T extends KubeObject>(state: BuilderState<T>, resource: Resource<KubeObject>, options: WatchOptions, keysOf: RelatedKeys): BuilderState<T> {
  const { state: next, index } = watch(state, resource, options);
  return { ...next, related: [...next.related, { index, predicates: options.predicates ?? [], keysOf }] };
}

/** The informer of `resource` in `options`' scope: the one the controller has, or a new one from the factory. */
function watch<T extends KubeObject>(state: BuilderState<T>, resource: Resource<KubeObject>, options: WatchOptions): { readonly state: BuilderState<T>; readonly index: number } {
  const scope: WatchScope = { namespace: options.namespace, labelSelector: options.labelSelector, fieldSelector: options.fieldSelector };
  const existing = state.watched.findIndex((entry) => resourceId(entry.resource) === resourceId(resource));
  if (existing >= 0 && !sameScope(state.watched[existing]!.scope, scope)) {
    throw new Error(`${qualifiedName(resource)} is already watched by this controller in another scope (${describeScope(state.watched[existing]!.scope)}); a controller watches a resource once`);
  }
  const informer = state.sources.factory.informerFor(resource, { ...scope, ...(options.indexers === undefined ? {} : { indexers: options.indexers as Readonly<Record<string, IndexFunc<KubeObject>>> }) });
  if (existing >= 0) return { state, index: existing };
  return { state: { ...state, watched: [...state.watched, watchedResource(resource, informer, scope)] }, index: state.watched.length };
}

function sameScope(a: WatchScope, b: WatchScope): boolean {
  return (a.namespace ?? '') === (b.namespace ?? '') && (a.labelSelector ?? '') === (b.labelSelector ?? '') && (a.fieldSelector ?? '') === (b.fieldSelector ?? '');
}

function describeScope(scope: WatchScope): string {
  const parts = [scope.namespace ? `namespace ${scope.namespace}` : 'all namespaces', scope.labelSelector ? `labels ${scope.labelSelector}` : '', scope.fieldSelector ? `fields ${scope.fieldSelector}` : ''];
  return parts.filter((part) => part !== '').join(', ');
}
