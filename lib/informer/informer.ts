import type { KubeConfig } from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { asapScheduler, asyncScheduler, defer, filter, finalize, isObservable, map, mergeMap, Observable, of, share, startWith, Subject, switchMap, take, tap, timer } from 'rxjs';
import type { Delta } from '../reflector/delta';
import type { InformerHealth } from '../reflector/health';
import { defaultLogger } from '../base/logger';
import { longDelays } from '../base/longDelays';
import { handle, type HandleOptions } from '../handlers/handle';
import type { HandlerEvent, ResourceHandlers } from '../handlers/resourceHandlers';
import { indexer } from '../store/indexer';
import { settledSnapshot } from '../store/indexedSnapshot';
import { reflectorEvents } from '../reflector/reflect';
import type { ReflectConfig } from '../reflector/reflectConfig';
import { isDelta, type ReflectorEvent } from '../reflector/reflectorEvent';
import type { Resource } from '../resources/resource';
import type { RejectedObjectError } from '../base/errors';
import { kubeListerWatcher } from '../sources/kubeListerWatcher';
import type { ListerWatcher, WatchScope } from '../sources/listerWatcher';
import type { Change } from '../store/change';
import { NAMESPACE_INDEX, namespaceIndex, type IndexFunc } from '../store/indexers';
import type { KubeObject } from '../base/object';
import type { Snapshot } from '../store/snapshot';
import { checkInformerConfig } from './checkInformerConfig';
import { InformerHealthTracker } from './informerHealth';
import { informerMetricEvents, type InformerMetricEvent } from './informerMetrics';
import { RunReports, type RunLane } from './runReports';
import { metadataListerWatcher } from '../sources/metadataListerWatcher';
import { checkNamespaces, namespaceRuns, type NamespaceSet } from './namespaceRuns';
import type { PartialObjectMetadata } from '../sources/partialObjectMetadata';
import type { InformerFromOptions, InformerNamespacesOptions, InformerOptions, MetadataInformerOptions } from './informerOptions';

export type { InformerFromOptions, InformerNamespacesOptions, InformerOptions, MetadataInformerOptions } from './informerOptions';

/**
 * A shared informer: one list/watch, one cache, several views of it. Every stream is cold and
 * reference counted: the watch starts with the first subscriber to `informer$`, `deltas$`,
 * `changes$`, `synced$` or a `handle()` stream, and stops (aborting the request, clearing every
 * timer) `gracePeriodMs` after the last one leaves (default: when the current task ends); a
 * subscription after that starts fresh with a new list. `health$` alone never starts the watch.
 */
export interface Informer<T extends KubeObject = KubeObject> {
  readonly name: string;
  /**
   * Snapshots of the cache, one per batch of changes (a relist, or the watch events that arrived
   * together); a late subscriber first gets the latest state, with no `changes` (it did not see
   * them happen, and the informer keeps none once they are delivered).
   * The first synced snapshot follows the initial list. It does not error on what the server or
   * your `transform` and index functions do: failed requests are retried and shown on `health$`,
   * objects that cannot be cached are left out and counted there.
   */
  readonly informer$: Observable<Snapshot<T>>;
  /**
   * The reflector's raw delta stream, from the same watch. Subscribing also keeps the cache
   * running, since the cache must see every delta from the start; a subscriber that joins a
   * running informer sees the deltas from then on (the initial Replace may have gone by).
   */
  readonly deltas$: Observable<Delta<T>>;
  /**
   * Every change applied to the cache, with old and new objects. A subscriber that joins a running
   * informer gets the changes from then on, not those that built the current cache: read
   * `informer$` (or use `handle()`, which starts with the current cache as adds) for the state.
   */
  readonly changes$: Observable<Change<T>>;
  /** The first synced state (the initial list applied, with no `changes`), then completes. */
  readonly synced$: Observable<Snapshot<T>>;
  /**
   * The reflector's health (its error attributed to this informer, so that the message names it)
   * and the objects the cache rejected; replays the latest report, `idle` while nothing runs.
   */
  readonly health$: Observable<InformerHealth>;
  /**
   * Measurements of the list/watch, as plain values: each list and watch as it starts and ends
   * (duration, items, outcome, relist cause) and each watch event by type, for client-go's
   * reflector metrics (`rx-informer/prometheus` maps them to Prometheus). Like `health$`, it never
   * starts the watch; nothing is measured while nobody subscribes, beyond a counter per event.
   * See docs/guides/metrics.md.
   */
  readonly metrics$: Observable<InformerMetricEvent>;
  /**
   * Adds a handler with its own queue: `informer$.pipe(handle(handlers, options))`, with this
   * informer's scheduler, logger and default resync period. Unsubscribe to remove it.
   */
  handle(handlers: ResourceHandlers<T>, options?: HandleOptions): Observable<HandlerEvent<T>>;
}

/**
 * An informer over the API server: lists and watches `resource` through `kubeConfig` and keeps
 * an immutable, indexed cache of it, with client-go's retry behaviour.
 *
 * ## Example
 * ```ts
 * import { KubeConfig } from '@kubernetes/client-node';
 * import { informer, pods, waitForSync } from 'rx-informer';
 *
 * const kubeConfig = new KubeConfig();
 * kubeConfig.loadFromDefault();
 * const podInformer = informer(kubeConfig, pods, { namespace: 'default' });
 * const running = podInformer.informer$.subscribe();          // run
 * const [snapshot] = await waitForSync([podInformer], { timeout: 30_000 });
 * console.log(snapshot.size, 'pods');
 * running.unsubscribe();                                      // stop
 * ```
 *
 * With `metadataOnly`, it caches each object's metadata only (see `metadataListerWatcher`):
 *
 * ```ts
 * import type { KubeConfig } from '@kubernetes/client-node';
 * import { informer, pods } from 'rx-informer';
 *
 * declare const kubeConfig: KubeConfig;
 * const podMetadata = informer(kubeConfig, pods, { metadataOnly: true }); // Informer<PartialObjectMetadata>
 * ```
 *
 * @param kubeConfig the cluster and credentials.
 * @param resource what to watch: a built-in descriptor (`pods`) or `defineResource(...)`.
 * Over a set of namespaces, one cache (see {@link InformerNamespacesOptions}):
 *
 * ```ts
 * const teamPods = informer(kubeConfig, pods, { namespaces: ['team-a', 'team-b'] });
 * ```
 *
 * @param options scope (namespace or namespaces, selectors), indexes, transform, timers, metadata
 * only; all optional.
 * @throws ConfigError at once for what no retry can fix: a kubeconfig without a usable current
 * context, a label or field selector that does not parse.
 * @throws TypeError at once for `namespaces` with `namespace`, on a cluster-scoped resource, or
 * holding something other than non-empty names.
 * @throws RangeError at once for an option out of range.
 */
export function informer<T extends KubeObject = KubeObject>(kubeConfig: KubeConfig, resource: Resource<T>, options: MetadataInformerOptions & InformerNamespacesOptions): Informer<PartialObjectMetadata>;
export function informer<T extends KubeObject = KubeObject>(kubeConfig: KubeConfig, resource: Resource<T>, options?: InformerOptions<T> & InformerNamespacesOptions): Informer<T>;
export function informer<T extends KubeObject>(kubeConfig: KubeConfig, resource: Resource<T>, options: (InformerOptions<T> | MetadataInformerOptions) & InformerNamespacesOptions = {}): Informer<T> | Informer<PartialObjectMetadata> {
  const { namespace, namespaces, labelSelector, fieldSelector, listReadAhead, withholdExcerpts, compression, incrementalDecoding, metadataOnly } = options;
  const scope = { namespace, labelSelector, fieldSelector };
  const transport = { listReadAhead, withholdExcerpts, compression, incrementalDecoding };
  if (namespaces !== undefined) return namespacesInformer<T>(kubeConfig, resource, options, namespaces);
  if (metadataOnly !== undefined && metadataOnly !== false) {
    const name = options.name ?? `${informerName(resource, options)} (metadata)`;
    checkInformerConfig(kubeConfig, name, scope);
    const listerWatcher = metadataListerWatcher(kubeConfig, resource, scope, { ...transport, ...(metadataOnly === true ? {} : metadataOnly) });
    return informerFrom(listerWatcher, { ...(options as MetadataInformerOptions), name });
  }
  const name = options.name ?? informerName(resource, options);
  checkInformerConfig(kubeConfig, name, scope);
  return informerFrom(kubeListerWatcher(kubeConfig, resource, scope, transport), { ...(options as InformerOptions<T>), name });
}

/**
 * An informer over any list/watch pair: the seam `informer()` is built on. Plug in your own
 * source (a file, another cluster, a test double) and get the same cache, handlers and health.
 *
 * ## Example
 * ```ts
 * import { of, NEVER } from 'rxjs';
 * import { informerFrom, type ListerWatcher } from 'rx-informer/pipeline';
 *
 * const fixed: ListerWatcher = {
 *   list: () => of({ items: [{ metadata: { name: 'a', resourceVersion: '1' } }], resourceVersion: '1', last: true, remainingItemCount: undefined }),
 *   watch: () => NEVER,
 * };
 * informerFrom(fixed, { name: 'fixed' }).synced$.subscribe((snapshot) => console.log(snapshot.keys().next().value)); // 'a'
 * ```
 *
 * @param listerWatcher where lists and watches come from.
 * @param options indexes, transform, timers; all optional.
 * @throws RangeError at once for an option out of range.
 */
export function informerFrom<T extends KubeObject = KubeObject>(listerWatcher: ListerWatcher<T>, options: InformerFromOptions<T> = {}): Informer<T> {
  return informerOfRuns((reflectConfig) => of(reflectorEvents(listerWatcher, reflectConfig)), options);
}

/** Options of {@link informerFromNamespaces}: the set of namespaces, and everything {@link informerFrom} takes. */
export interface InformerFromNamespacesOptions<T extends KubeObject = KubeObject> extends InformerFromOptions<T> {
  /** The namespaces: a list of names, or an Observable of lists, each replacing the set. */
  readonly namespaces: NamespaceSet;
}

/**
 * An informer over a set of namespaces from any list/watch source: the seam that
 * `informer(kubeConfig, resource, { namespaces })` is built on. One cache and one index hold every
 * namespace; underneath, each namespace has its own reflector over `listerWatcherOf(namespace)`.
 *
 * 1. A relist of one namespace (after a 410, say) replaces only that namespace's objects: its cost
 *    is that namespace's size, not the cache's.
 * 2. The cache is synced (`synced$`, `waitForSync`) once every namespace of the first set has
 *    listed; an empty set syncs at once, empty.
 * 3. From an Observable, each list replaces the set: a namespace added starts its watch and its
 *    objects arrive as adds, one removed stops its watch and its objects leave as deletes
 *    (`finalStateUnknown`); both are marked `namespaceSet` on the changes and in handlers' `info`.
 * 4. `health$` shows the least healthy watch (backing off, then listing, then watching), its error
 *    naming the request and so the namespace; `metrics$` measures every watch.
 *
 * The namespace index is always configured (added to `indexers` when they lack it).
 *
 * ## Example
 * ```ts
 * import { BehaviorSubject } from 'rxjs';
 * import type { KubeObject } from 'rx-informer';
 * import { informerFromNamespaces, type ListerWatcher } from 'rx-informer/pipeline';
 *
 * declare const listerWatcherOf: (namespace: string) => ListerWatcher<KubeObject>;
 * const teams = new BehaviorSubject<readonly string[]>(['team-a', 'team-b']);
 * const shared = informerFromNamespaces(listerWatcherOf, { name: 'configmaps@teams', namespaces: teams });
 * shared.handle({ onDelete: (object, { namespaceSet }) => console.log(namespaceSet?.type === 'removed' ? 'unwatched' : 'deleted', object.metadata.name) }).subscribe();
 * teams.next(['team-b', 'team-c']); // team-a's objects leave, team-c's arrive
 * ```
 *
 * @param listerWatcherOf the source of one namespace's lists and watches.
 * @param options the namespaces; indexes, transform, timers as {@link informerFrom}'s.
 * @throws TypeError at once for a list holding something other than non-empty strings (from an
 * Observable, `informer$` errors with it).
 * @throws RangeError at once for an option out of range.
 */
export function informerFromNamespaces<T extends KubeObject = KubeObject>(listerWatcherOf: (namespace: string) => ListerWatcher<T>, options: InformerFromNamespacesOptions<T>): Informer<T> {
  const { namespaces } = options;
  if (!isObservable(namespaces)) checkNamespaces(namespaces);
  const indexers = options.indexers === undefined || NAMESPACE_INDEX in options.indexers ? options.indexers : { [NAMESPACE_INDEX]: namespaceIndex as IndexFunc<T>, ...options.indexers };
  return informerOfRuns((config) => namespaceRuns(listerWatcherOf, namespaces, config), { ...options, indexers }, 'merge');
}

/** `informer()` with `namespaces`: one lister-watcher per namespace, whole objects or metadata only. */
function namespacesInformer<T extends KubeObject>(kubeConfig: KubeConfig, resource: Resource<T>, options: InformerOptions<T> | MetadataInformerOptions, namespaces: NamespaceSet): Informer<T> | Informer<PartialObjectMetadata> {
  const { namespace, labelSelector, fieldSelector, listReadAhead, withholdExcerpts, compression, incrementalDecoding, metadataOnly } = options;
  if (namespace !== undefined) throw new TypeError('informer: give `namespace` or `namespaces`, not both');
  if (!resource.namespaced) throw new TypeError(`informer: \`namespaces\` is for namespaced resources; ${resource.plural} is cluster-scoped`);
  const selectors = { labelSelector, fieldSelector };
  const transport = { listReadAhead, withholdExcerpts, compression, incrementalDecoding };
  const base = informerName(resource, { ...selectors, namespaces });
  if (metadataOnly !== undefined && metadataOnly !== false) {
    const name = options.name ?? `${base} (metadata)`;
    checkInformerConfig(kubeConfig, name, selectors);
    const metadata = { ...transport, ...(metadataOnly === true ? {} : metadataOnly) };
    return informerFromNamespaces((ns) => metadataListerWatcher(kubeConfig, resource, { namespace: ns, ...selectors }, metadata), { ...(options as MetadataInformerOptions), name, namespaces });
  }
  const name = options.name ?? base;
  checkInformerConfig(kubeConfig, name, selectors);
  return informerFromNamespaces((ns) => kubeListerWatcher(kubeConfig, resource, { namespace: ns, ...selectors }, transport), { ...(options as InformerOptions<T>), name, namespaces });
}

/**
 * Reflector runs: each inner Observable is one run's events (`reflectorEvents`, or a stand-in with
 * no reports). Under `switch` the next run ends the one before, as `switchAll` does; under `merge`
 * they run side by side, as `mergeAll` does, each until it ends.
 * @internal
 */
export type ReflectorRuns<T extends KubeObject = KubeObject> = Observable<Observable<ReflectorEvent<T>>>;

/**
 * The informer over the reflector runs built from the reflector config it is handed: one run, or
 * several one after another (`switch`: a sharded informer relists when its buckets change), or
 * several at once (`merge`: one per namespace of an informer over a set of namespaces). Each run
 * reports through its own lane (see `RunReports`): its reports feed `health$` and `metrics$`, its
 * deltas the cache; a run stopped (by the next one, by its own end, or by the informer stopping)
 * cannot report that itself, so the informer does: its request in flight `stopped`, and health
 * idle once no run is left.
 * @internal
 */
export function informerOfRuns<T extends KubeObject = KubeObject>(
  runs: (config: ReflectConfig) => ReflectorRuns<T>,
  options: InformerFromOptions<T> = {},
  overlap: 'switch' | 'merge' = 'switch',
): Informer<T> {
  const name = options.name ?? 'informer';
  const scheduler = options.scheduler ?? asyncScheduler;
  const logger = options.logger ?? defaultLogger;
  const gracePeriodMs = options.gracePeriodMs ?? 0;
  if (!(gracePeriodMs >= 0 && Number.isFinite(gracePeriodMs))) throw new RangeError(`informer gracePeriodMs must be a finite number of ms >= 0, got ${gracePeriodMs}`);
  const health = new InformerHealthTracker(name, scheduler.now());
  const onRejected = (rejection: RejectedObjectError): void => {
    const reported = health.rejected(rejection);
    try {
      logger.error({ informer: name, key: reported.key, stage: reported.stage, outcome: reported.outcome, err: reported }, 'object not cached');
    } catch {
      // A broken logger must not stop the cache; health$ still has it.
    }
  };
  // Every delta passes through here on its way to the indexer: deltas$ subscribers listen in.
  const deltaBus = new Subject<Delta<T>>();
  const reports = new RunReports(health);
  // A run's reports go to health$ and metrics$; its deltas to deltas$ listeners and on to the cache.
  const route = (lane: RunLane, event: ReflectorEvent<T>): void => {
    switch (event.type) {
      case 'health':
        return lane.health(event.health);
      case 'opened':
      case 'ended':
        return lane.request(event);
      default:
        lane.count(event);
        // Skipping an unobserved bus spares a closure and an iterator per event.
        if (deltaBus.observed) deltaBus.next(event);
    }
  };
  // A stopped run's stream is closed: the informer, which stopped it, reports the stop.
  const laneOf = (run: Observable<ReflectorEvent<T>>): Observable<Delta<T>> =>
    defer(() => {
      const lane = reports.lane();
      return run.pipe(
        tap((event) => route(lane, event)),
        filter(isDelta),
        finalize(() => lane.stop(scheduler.now())),
      );
    });
  // The snapshot the share would replay to a subscriber arriving now; undefined while stopped.
  let current: Snapshot<T> | undefined;
  const shared$ = runs({
    name,
    scheduler,
    logger,
    backoff: options.backoff,
    resourceGoneBackoff: options.resourceGoneBackoff,
    pageSize: options.pageSize,
    streamingList: options.streamingList,
    watchTimeoutSeconds: options.watchTimeoutSeconds,
    initialEventsTimeoutMs: options.initialEventsTimeoutMs,
    listPageTimeoutMs: options.listPageTimeoutMs,
  }).pipe(
    overlap === 'switch' ? switchMap(laneOf) : mergeMap(laneOf),
    indexer<T>({
      indexers: options.indexers,
      transform: options.transform,
      freeze: options.freeze,
      shareUnchanged: options.shareUnchanged,
      onRejected,
      // What arrives together is applied together: one edit, one snapshot, one emission; on the
      // scheduler given too, so that tests in virtual time run the path production runs.
      batch: { scheduler: options.scheduler ?? asapScheduler },
    }),
    tap((snapshot) => (current = settledSnapshot(snapshot))),
    finalize(() => (current = undefined)),
    // shareReplay's refCount has no grace: leaving and coming back in one tick would relist.
    share({ connector: () => new Subject<Snapshot<T>>(), resetOnError: true, resetOnComplete: true, resetOnRefCountZero: () => timer(gracePeriodMs, longDelays(scheduler)) }),
  );
  // A subscriber arriving later starts from the latest state, settled: without the changes that
  // produced it, which it did not see happen (and which, after a relist, are one per object: a
  // replay buffer holding them would keep them alive for as long as the cache is quiet).
  const informer$ = defer(() => {
    const latest = current;
    return latest === undefined ? shared$ : shared$.pipe(startWith(latest));
  });

  // Listening before starting the cache: a deltas$ subscriber that starts the watch sees it all.
  const deltas$ = new Observable<Delta<T>>((subscriber) => {
    const deltas = deltaBus.subscribe(subscriber);
    const cache = informer$.subscribe({ error: (error: unknown) => subscriber.error(error) });
    return () => {
      deltas.unsubscribe();
      cache.unsubscribe();
    };
  });

  const changes$ = defer(() => {
    const replayed = current;
    return informer$.pipe(
      filter((snapshot, index) => !(index === 0 && snapshot === replayed)),
      mergeMap((snapshot) => snapshot.changes),
    );
  });

  // The state once synced, settled: the initial list's changes (one per object) are for handlers
  // and changes$, and whoever keeps this snapshot (waitForSync's callers do) keeps only the cache.
  const synced$ = informer$.pipe(
    filter((snapshot) => snapshot.synced),
    take(1),
    map(settledSnapshot),
  );

  const handlerDefaults: HandleOptions = { resyncPeriod: options.resyncPeriod, scheduler, logger, name };
  return {
    name,
    informer$,
    deltas$,
    changes$,
    synced$,
    health$: health.health$,
    metrics$: informerMetricEvents(reports.requests$, deltaBus),
    handle: (handlers, handleOptions) => informer$.pipe(handle(handlers, { ...handlerDefaults, ...handleOptions })),
  };
}

/** The scope {@link informerName} names: a namespace or a set of them, and the selectors. */
export interface InformerNameScope extends WatchScope {
  /** A set of namespaces: named `@[a,b]` when a list, `@[...]` when an Observable. */
  readonly namespaces?: NamespaceSet;
}

/**
 * The default name of an informer: its resource and scope, as in `pods`, `deployments.apps`,
 * `pods@default`, `pods@default?app=web`, `pods@[a,b]`. Log lines and sync errors carry it.
 *
 * ## Example
 * ```ts
 * import { informerName, pods } from 'rx-informer';
 *
 * informerName(pods, { namespace: 'default', labelSelector: 'app=web' }); // 'pods@default?app=web'
 * ```
 */
export function informerName(resource: Resource<KubeObject>, scope: InformerNameScope): string {
  let name = resource.group === '' ? resource.plural : `${resource.plural}.${resource.group}`;
  if (resource.namespaced && scope.namespaces !== undefined) name += isObservable(scope.namespaces) ? '@[...]' : `@[${[...new Set(scope.namespaces)].join(',')}]`;
  else if (resource.namespaced && scope.namespace) name += `@${scope.namespace}`;
  const selectors = [scope.labelSelector, scope.fieldSelector].filter((s): s is string => s !== undefined && s !== '');
  if (selectors.length > 0) name += `?${selectors.join('&')}`;
  return name;
}
