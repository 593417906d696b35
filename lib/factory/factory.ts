import type { KubeConfig } from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { defer, type Observable, type Subscription } from 'rxjs';
import { informer, informerName, type Informer, type InformerFromOptions, type InformerOptions } from '../informer/informer';
import { silentLogger } from '../logger';
import { defineResource, type Resource } from '../resources/resource';
import type { IndexFunc } from '../store/indexers';
import type { KubeObject } from '../store/object';
import type { Snapshot } from '../store/snapshot';
import { waitForSync, type WaitForSyncOptions } from '../informer/waitForSync';

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
 * when an informer stops on an error.
 */
export interface InformerFactoryOptions
  extends Pick<InformerFromOptions, 'freeze' | 'shareUnchanged' | 'streamingList' | 'scheduler' | 'logger' | 'backoff' | 'pageSize'>,
    Pick<InformerOptions, 'listReadAhead'> {
  /** Watch one namespace (client-go's WithNamespace). Default: all. */
  readonly namespace?: string;
  /** Default resync period (ms) of handlers added with `informer.handle()`. Default 0 (never); minimum 1000. */
  readonly resyncPeriod?: number;
  /** Adjusts the selectors of every informer (client-go's WithTweakListOptions); the result is part of the sharing key. */
  readonly tweakListOptions?: (selectors: ListSelectors) => ListSelectors;
  /** Runs once per object before it is cached by any informer, e.g. `dropManagedFields`. */
  readonly transform?: <T extends KubeObject>(object: T) => T;
}

/** Options of one `informerFor` call. */
export interface InformerForOptions<T extends KubeObject = KubeObject> {
  /** Overrides the factory's namespace for this informer. */
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /**
   * Index functions, merged into the shared informer's (client-go's AddIndexers). Allowed until the
   * informer is first subscribed; after that, a new index name throws {@link IndexerConflictError}.
   */
  readonly indexers?: Readonly<Record<string, IndexFunc<T>>>;
}

/** An index was requested that the shared informer cannot take: it already runs, or the name is taken. */
export class IndexerConflictError extends Error {
  constructor(readonly informerName: string, readonly indexName: string, why: string) {
    super(`cannot add index ${JSON.stringify(indexName)} to informer ${informerName}: ${why}`);
    this.name = 'IndexerConflictError';
  }
}

/** Makes and shares informers; see {@link informerFactory}. */
export interface InformerFactory {
  /**
   * The shared informer for a resource (typed descriptor, or any group/version/resource) in a
   * namespace with selectors: the same arguments give the same informer. It runs once `start()`
   * has been called (at once when made after it).
   */
  informerFor<T extends KubeObject>(resource: Resource<T>, options?: InformerForOptions<T>): Informer<T>;
  /** The shared informer for a resource named by group, version and plural, typed as `KubeObject`. */
  informerFor(resource: GroupVersionResource, options?: InformerForOptions): Informer<KubeObject>;
  /** Runs every informer made so far, and those made later. Idempotent. */
  start(): void;
  /** Waits for every started informer (see the `waitForSync` function); resolves with their snapshots by name. */
  waitForSync(options?: WaitForSyncOptions): Promise<ReadonlyMap<string, Snapshot<KubeObject>>>;
  /** Stops every informer the factory runs. A later `start()` starts them fresh, with new lists. */
  shutdown(): void;
}

interface Entry extends LazyInformer {
  /** What the factory's own subscription keeps running; undefined when not started by it. */
  running: Subscription | undefined;
}

/**
 * One shared informer per (resource, namespace, selectors): client-go's SharedInformerFactory.
 * Many parts of a program can ask for the pods informer and ride one watch and one cache.
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
 * podInformer.handle({ onAdd: (pod) => console.log('pod', pod.metadata.name) }).subscribe();
 * factory.start();
 * await factory.waitForSync({ timeout: 30_000 });
 * console.log(deploymentInformer.name, 'synced');
 * factory.shutdown();
 * ```
 *
 * @param kubeConfig the cluster and credentials.
 * @param options scope, resync, selector tweaks, transform and timers shared by every informer.
 */
export function informerFactory(kubeConfig: KubeConfig, options: InformerFactoryOptions = {}): InformerFactory {
  const entries = new Map<string, Entry>();
  const logger = options.logger ?? silentLogger;
  let started = false;

  const run = (entry: Entry): void => {
    if (entry.running !== undefined && !entry.running.closed) return;
    entry.running = entry.informer.informer$.subscribe({
      error: (error: unknown) => {
        // Only a throwing transform or index function gets here; the next start() retries.
        logger.error({ informer: entry.informer.name, error }, 'informer stopped');
        entry.running = undefined;
      },
    });
  };

  function informerFor(resource: Resource<KubeObject> | GroupVersionResource, forOptions: InformerForOptions = {}): Informer<KubeObject> {
    const descriptor = toResource(resource);
    const namespace = descriptor.namespaced ? (forOptions.namespace ?? options.namespace ?? '') : '';
    const requested: ListSelectors = { labelSelector: forOptions.labelSelector, fieldSelector: forOptions.fieldSelector };
    const selectors = options.tweakListOptions ? options.tweakListOptions(requested) : requested;
    const key = JSON.stringify([descriptor.group, descriptor.version, descriptor.plural, namespace, selectors.labelSelector ?? '', selectors.fieldSelector ?? '']);
    let entry = entries.get(key);
    if (entry === undefined) {
      entry = { ...lazyInformer(kubeConfig, descriptor, { ...options, namespace, ...selectors }), running: undefined };
      entries.set(key, entry);
      if (started) run(entry);
    }
    entry.addIndexers(forOptions.indexers ?? {});
    return entry.informer;
  }

  return {
    informerFor: informerFor as InformerFactory['informerFor'],
    start() {
      started = true;
      for (const entry of entries.values()) run(entry);
    },
    async waitForSync(waitOptions?: WaitForSyncOptions) {
      const running = [...entries.values()].filter((entry) => entry.running !== undefined).map((entry) => entry.informer);
      const snapshots = await waitForSync(running, waitOptions);
      return new Map(running.map((informer, index) => [informer.name, snapshots[index]]));
    },
    shutdown() {
      started = false;
      for (const entry of entries.values()) {
        entry.running?.unsubscribe();
        entry.running = undefined;
      }
    },
  };
}

function toResource(resource: Resource<KubeObject> | GroupVersionResource): Resource<KubeObject> {
  if ('plural' in resource) return resource;
  return defineResource({ group: resource.group, version: resource.version, plural: resource.resource, kind: resource.kind ?? '', namespaced: resource.namespaced ?? true });
}

type Indexers = Record<string, IndexFunc<KubeObject>>;

/** A shared informer and the way to add index functions to it before it is built. */
interface LazyInformer {
  readonly informer: Informer<KubeObject>;
  addIndexers(indexers: Readonly<Record<string, IndexFunc<never>>>): void;
}

/**
 * An informer whose indexers can still grow: the real one is built at the first subscription to
 * any of its streams, with the indexers gathered until then.
 */
function lazyInformer(
  kubeConfig: KubeConfig,
  resource: Resource<KubeObject>,
  options: InformerFactoryOptions & { namespace: string; labelSelector?: string; fieldSelector?: string },
): LazyInformer {
  const name = informerName(resource, options);
  let indexers: Indexers | undefined;
  let built: Informer<KubeObject> | undefined;
  const real = (): Informer<KubeObject> => {
    if (built === undefined) {
      const { tweakListOptions: _tweak, ...informerOptions } = options;
      built = informer(kubeConfig, resource, { ...informerOptions, name, namespace: options.namespace || undefined, indexers });
    }
    return built;
  };
  const lazy = <V>(pick: (i: Informer<KubeObject>) => Observable<V>): Observable<V> => defer(() => pick(real()));
  return {
    informer: {
      name,
      informer$: lazy((i) => i.informer$),
      deltas$: lazy((i) => i.deltas$),
      changes$: lazy((i) => i.changes$),
      events$: lazy((i) => i.changes$),
      synced$: lazy((i) => i.synced$),
      health$: lazy((i) => i.health$),
      handle: (handlers, handleOptions) => lazy((i) => i.handle(handlers, handleOptions)),
    },
    addIndexers(add) {
      for (const [indexName, indexFunc] of Object.entries(add) as [string, IndexFunc<KubeObject>][]) {
        const existing = indexers?.[indexName];
        if (existing === indexFunc) continue;
        if (existing !== undefined) throw new IndexerConflictError(name, indexName, 'another index function already has that name');
        if (built !== undefined) throw new IndexerConflictError(name, indexName, 'the informer already runs; pass indexers on its first informerFor');
        indexers = { ...indexers, [indexName]: indexFunc };
      }
    },
  };
}
