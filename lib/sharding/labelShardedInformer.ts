import type { KubeConfig } from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { asyncScheduler, concat, defer, distinctUntilChanged, map, NEVER, type Observable, of, share, skipWhile, Subject, tap } from 'rxjs';
import { checkInformerConfig } from '../informer/checkInformerConfig';
import { informerName, informerOfRuns, type Informer, type InformerOptions, type ReflectorRuns } from '../informer/informer';
import { leaderElectionFrom, type LeaderState } from '../leaderElection/leaderElection';
import { kubeLeaseClient, type LeaseClient } from '../leaderElection/leaseClient';
import { defaultLogger } from '../base/logger';
import { reflectorEvents } from '../reflector/reflect';
import type { ReflectConfig } from '../reflector/reflectConfig';
import type { ReflectorEvent } from '../reflector/reflectorEvent';
import type { Resource } from '../resources/resource';
import { kubeListerWatcher } from '../sources/kubeListerWatcher';
import type { ListerWatcher } from '../sources/listerWatcher';
import type { KubeObject } from '../base/object';
import { CONTROLLER_RING_LABEL, drainingListerWatcher, drainLabelOf, kubeDrainAcknowledger, shardLabelOf, type DrainAcknowledger } from './labelShard';
import type { RingRef } from './ringConfig';

/** Options of {@link labelShardedInformer}. */
export interface LabelShardedInformerOptions<T extends KubeObject = KubeObject> extends InformerOptions<T> {
  /** The sharder's ring (`ControllerRing` name) and the namespace of the shards' Leases. */
  readonly ring: RingRef;
  /** This shard's name: its Lease's name and holder, and the value of the shard label on its objects. */
  readonly identity: string;
  /** Of the shard's Lease, as in leader election. Default 15 000. */
  readonly leaseDuration?: number;
  /** Default 10 000. */
  readonly renewDeadline?: number;
  /** Default 2 000. */
  readonly retryPeriod?: number;
}

/** An informer of the objects a sharder assigned to this shard, and the shard's Lease. */
export interface LabelShardedInformer<T extends KubeObject = KubeObject> extends Informer<T> {
  /**
   * The shard's Lease as the informer holds it, like a leader election's: the cache is filled only
   * while `leading`. It only observes: the shard holds its Lease while its cache runs
   * (`informer$`, `deltas$`, `changes$`, `synced$` or a `handle()` is subscribed), and
   * subscribing to this alone campaigns for nothing (docs/guides/scale-out.md, "Membership is
   * explicit"). A subscriber gets the states from then on.
   */
  readonly lease$: Observable<LeaderState>;
  /** True when `object` is assigned to this shard and not being drained: check it before acting. */
  owns(object: KubeObject): boolean;
}

/** Where a label-sharded informer's objects and its Lease come from. */
export interface LabelShardSources<T extends KubeObject> {
  /** The objects labelled `shard.alpha.sharding.timebertt.dev/<ring>=<identity>` (the selector is the source's). */
  readonly listerWatcher: ListerWatcher<T>;
  readonly leaseClient: LeaseClient;
  /** Removes the shard and drain labels of a drained object. */
  readonly acknowledgeDrain: DrainAcknowledger<T>;
}

/**
 * A shard of a ring run by an external sharder (timebertt/kubernetes-controller-sharding): the
 * sharder labels each object with its shard; this informer selects its own label, holds its
 * shard Lease (name `identity`, label `alpha.sharding.timebertt.dev/controllerring=<ring>`) and
 * acknowledges drains by removing both labels with a resourceVersion precondition, leaving a
 * drained object out of its cache. It is synced once it has listed its objects under its
 * Lease; while it does not hold its Lease after that (renewals failed, or the sharder took the
 * Lease of a shard it thought dead) its cache is empty.
 *
 * ## Example
 * ```ts
 * import type { KubeConfig } from '@kubernetes/client-node';
 * import { configMaps } from 'rx-informer';
 * import { labelShardedInformer } from 'rx-informer/sharding';
 *
 * declare const kubeConfig: KubeConfig;
 * const shard = labelShardedInformer(kubeConfig, configMaps, { ring: { name: 'example', namespace: 'sharding-system' }, identity: 'example-0' });
 * shard.handle({ onAdd: (configMap) => console.log('assigned:', configMap.metadata.name) }).subscribe();
 * ```
 *
 * @param kubeConfig the cluster (the shard's Lease, and `patch` on the resource for drains).
 * @param resource the sharded resource.
 * @param options the ring, this shard's identity, Lease timings, the informer's options.
 * @throws ConfigError, TypeError, RangeError at once for a config no retry can fix.
 */
export function labelShardedInformer<T extends KubeObject = KubeObject>(kubeConfig: KubeConfig, resource: Resource<T>, options: LabelShardedInformerOptions<T>): LabelShardedInformer<T> {
  const { namespace, fieldSelector, listReadAhead, withholdExcerpts, ring, identity } = options;
  const shardSelector = `${shardLabelOf(ring.name)}=${identity}`;
  const labelSelector = options.labelSelector === undefined || options.labelSelector === '' ? shardSelector : `${options.labelSelector},${shardSelector}`;
  const name = options.name ?? informerName(resource, { namespace, labelSelector });
  checkInformerConfig(kubeConfig, name, { labelSelector, fieldSelector });
  return labelShardedInformerFrom(
    {
      listerWatcher: kubeListerWatcher(kubeConfig, resource, { namespace, labelSelector, fieldSelector }, { listReadAhead, withholdExcerpts }),
      leaseClient: kubeLeaseClient(kubeConfig),
      acknowledgeDrain: kubeDrainAcknowledger(kubeConfig, resource, ring.name),
    },
    { ...options, name },
  );
}

/**
 * {@link labelShardedInformer} over any sources (tests in virtual time, other transports).
 *
 * ## Example
 * ```ts
 * import { asyncScheduler, EMPTY } from 'rxjs';
 * import { configMaps } from 'rx-informer';
 * import { labelShardedInformerFrom } from 'rx-informer/sharding';
 * import { createClusterStore, storeLeaseClient, storeListerWatcher } from 'rx-informer-apiserver';
 *
 * const store = createClusterStore();
 * const shard = labelShardedInformerFrom(
 *   {
 *     listerWatcher: storeListerWatcher(store, configMaps, { scheduler: asyncScheduler, labelSelector: 'shard.alpha.sharding.timebertt.dev/example=example-0' }),
 *     leaseClient: storeLeaseClient(store, { scheduler: asyncScheduler }),
 *     acknowledgeDrain: () => EMPTY,
 *   },
 *   { ring: { name: 'example', namespace: 'default' }, identity: 'example-0' },
 * );
 * ```
 *
 * @param sources the shard's objects (selected on its label), the Lease client, the drain acknowledgement.
 * @param options as {@link labelShardedInformer}'s.
 * @throws TypeError, RangeError at once for invalid Lease options.
 */
export function labelShardedInformerFrom<T extends KubeObject = KubeObject>(sources: LabelShardSources<T>, options: LabelShardedInformerOptions<T>): LabelShardedInformer<T> {
  const scheduler = options.scheduler ?? asyncScheduler;
  const logger = options.logger ?? defaultLogger;
  const { ring, identity } = options;
  // The cache's runs hold the Lease; lease$ only listens (docs/guides/scale-out.md, "Membership is explicit").
  const leaseStates = new Subject<LeaderState>();
  const election$ = leaderElectionFrom(sources.leaseClient, {
    namespace: ring.namespace,
    name: identity,
    identity,
    labels: { [CONTROLLER_RING_LABEL]: ring.name },
    leaseDuration: options.leaseDuration,
    renewDeadline: options.renewDeadline,
    retryPeriod: options.retryPeriod,
    scheduler,
    logger,
  }).pipe(
    tap((state) => leaseStates.next(state)),
    share(),
  );
  const listerWatcher = drainingListerWatcher(sources.listerWatcher, ring.name, sources.acknowledgeDrain, logger);
  const empty: Observable<ReflectorEvent<T>> = concat(of<ReflectorEvent<T>>({ type: 'Replace', items: [], first: true, last: true, resourceVersion: '' }), NEVER);
  const runs = (config: ReflectConfig): ReflectorRuns<T> =>
    defer(() =>
      election$.pipe(
        map((state) => state.state === 'leading'),
        distinctUntilChanged(),
        // Before it first holds its Lease its cache is unlisted, not empty: an empty Replace then
        // would declare it synced. Losing the Lease later empties a synced cache.
        skipWhile((leading) => !leading),
        map((leading) => (leading ? reflectorEvents(listerWatcher, config) : empty)),
      ),
    );
  const shardLabel = shardLabelOf(ring.name);
  const drainLabel = drainLabelOf(ring.name);
  return {
    ...informerOfRuns(runs, { ...options, scheduler, logger, name: options.name ?? `sharded#${identity}` }),
    lease$: leaseStates.asObservable(),
    owns: (object) => object.metadata.labels?.[shardLabel] === identity && object.metadata.labels[drainLabel] === undefined,
  };
}
