import type { KubeConfig } from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { asyncScheduler, BehaviorSubject, defer, distinctUntilChanged, filter, finalize, map, NEVER, type Observable, of, share, startWith, Subject, switchMap, concat, tap } from 'rxjs';
import { checkInformerConfig } from '../informer/checkInformerConfig';
import { informerFrom, informerName, informerOfRuns, type Informer, type InformerOptions, type ReflectorRuns } from '../informer/informer';
import { kubeLeaseClient } from '../leaderElection/leaseClient';
import type { LeaseClient } from '../leaderElection/leaseClient';
import { defaultLogger } from '../base/logger';
import { reflectorEvents } from '../reflector/reflect';
import type { ReflectConfig } from '../reflector/reflectConfig';
import type { ReflectorEvent } from '../reflector/reflectorEvent';
import { leases, type Lease } from '../resources/builtins';
import type { Resource } from '../resources/resource';
import { kubeListerWatcher } from '../sources/kubeListerWatcher';
import type { ListerWatcher } from '../sources/listerWatcher';
import type { BucketHandover } from '../reflector/delta';
import type { KubeObject } from '../base/object';
import { resolveRingConfig, ringViewBackoff, type RingMemberOptions } from './ringConfig';
import { RING_LABEL } from './ringLease';
import { labelShardedInformer, type LabelShardedInformer, type LabelShardedInformerOptions } from './labelShardedInformer';
import { ringMembership, type OwnershipEvent } from './ringMember';
import { objectBucket, shardListerWatcher, type ShardKey } from './shardListerWatcher';

/**
 * How a sharded informer narrows the resource to its buckets.
 * - `server`: KEP-5866's `shardSelector` (Kubernetes 1.36+ with the `ShardedListAndWatch` gate):
 *   the API server sends only this replica's objects, so ingest and heap shrink with the replica
 *   count. Trusted only when a list echoes it in `metadata.shardInfo`; otherwise `client`.
 * - `client`: any server. Every replica receives and decodes everything and keeps its share: the
 *   cache (heap) shrinks, ingest (network, CPU) does not.
 *
 * The third mode of {@link shardedInformer}, `label`, has no buckets (an external sharder places
 * the objects): see {@link LabelModeOptions}.
 */
export type ShardFilterMode = 'server' | 'client';

/** Options of {@link shardedInformer} in a bucket mode: the ring, the scope and everything an informer takes. */
export interface ShardedInformerOptions<T extends KubeObject = KubeObject> extends InformerOptions<T>, Omit<RingMemberOptions, 'scheduler' | 'logger'> {
  /** What is hashed into buckets: the object's uid (default; spreads evenly) or its namespace (keeps a namespace together). */
  readonly key?: ShardKey;
  /** Server-side filtering, falling back to client-side where the server ignores it (default `server`), or client-side only. */
  readonly mode?: ShardFilterMode;
}

/**
 * Options of {@link shardedInformer} in `label` mode: a shard of a ring that an external sharder
 * runs (timebertt/kubernetes-controller-sharding). The same as {@link labelShardedInformer}'s:
 * `ring` names the sharder's `ControllerRing` and the namespace of the shard Leases, `identity`
 * is this shard's Lease name and label value; no `buckets` or `key` (the sharder places objects).
 */
export interface LabelModeOptions<T extends KubeObject = KubeObject> extends LabelShardedInformerOptions<T> {
  readonly mode: 'label';
}

/** A sharded informer: an {@link Informer} of the objects in this replica's buckets, and the buckets. */
export interface ShardedInformer<T extends KubeObject = KubeObject> extends Informer<T> {
  /**
   * This replica's ring membership as it happens: the members it sees, the buckets it acquires and
   * releases, its renewals, and (`released` with reason `left`) every bucket it held when it left
   * the ring. It only observes: the replica is a member while its cache runs (`informer$`,
   * `deltas$`, `changes$`, `synced$` or a `handle()` is subscribed), and subscribing to this alone
   * joins nothing (docs/guides/scale-out.md, "Membership is explicit"). A subscriber gets the
   * events from then on: read {@link ShardedInformer.owned} for the current buckets.
   */
  readonly ownership$: Observable<OwnershipEvent>;
  /** How the current list and watch are filtered: `server` until a server ignores the selector, then `client`. Replays the latest. */
  readonly filtering$: Observable<ShardFilterMode>;
  /** The buckets this replica serves now, sorted. */
  owned(): readonly number[];
  /** True when `object` hashes into a bucket this replica serves now: check it before acting on an object. */
  owns(object: KubeObject): boolean;
  /** The bucket `object` hashes into (served here or not). */
  bucketOf(object: KubeObject): number;
}

/** Where a sharded informer's objects and Leases come from. */
export interface ShardSources<T extends KubeObject> {
  /** The whole resource in the informer's scope; the shard's filtering is added on top. */
  readonly listerWatcher: ListerWatcher<T>;
  /** Writes this replica's Lease and takes over silent members'. */
  readonly leaseClient: LeaseClient;
  /** The ring's Leases: label `rx-informer.io/ring=<ring>` in the ring's namespace. */
  readonly ringListerWatcher: ListerWatcher<Lease>;
}

/**
 * An informer of one replica's share of a resource, in the bucket modes `server` (default) and
 * `client`; `mode: 'label'` (the next signature) joins a ring that an external sharder runs
 * instead. In the bucket modes the replicas form a ring over Leases (one per
 * replica, label `rx-informer.io/ring=<ring>`); the hash space of the objects' uids (or
 * namespaces) is cut into `buckets` ranges, each placed on one live member by rendezvous hashing;
 * a replica serves a bucket it gained only once the previous owner has released it or has been
 * silent for two lease durations, and stops serving everything when it cannot renew in time.
 *
 * Every change of this replica's bucket set restarts its list and watch for the new set: objects
 * of buckets gained arrive as adds, those of buckets released leave as deletes (in `changes$` and
 * handlers), in the Replace that the new list makes. That Replace carries the handover, so those
 * adds and deletes are marked: `change.handover` (and a handler's `info.handover`) says
 * `acquired` or `released`, the object's bucket, and the whole handover (buckets acquired,
 * released, served). A delete without a mark in that Replace is an object deleted meanwhile.
 * Until the ring view has synced the informer is not synced; then it is synced once it has listed
 * the first buckets it acquired, or at once, empty, when the placement gives it no bucket.
 *
 * No fencing exists: a paused replica can act on an object after another has taken its bucket
 * (docs/guides/scale-out.md gives the bounds). Handlers must be idempotent, and may check
 * `owns(object)` before acting.
 *
 * ## Example
 * ```ts
 * import { KubeConfig } from '@kubernetes/client-node';
 * import { pods } from 'rx-informer';
 * import { shardedInformer } from 'rx-informer/sharding';
 *
 * const kubeConfig = new KubeConfig();
 * kubeConfig.loadFromDefault();
 * const shard = shardedInformer(kubeConfig, pods, { ring: { name: 'shop-pods', namespace: 'shop' }, identity: process.env.POD_NAME ?? 'replica-0' });
 * shard.ownership$.subscribe((event) => console.log(event.type, 'buckets' in event ? event.buckets : ''));
 * shard.handle({ onAdd: (pod) => console.log('mine:', pod.metadata.name) }).subscribe();
 * ```
 *
 * @param kubeConfig the cluster and credentials (Leases need get, create, update, list, watch in the ring's namespace).
 * @param resource what to shard.
 * @param options the ring and this replica's identity; bucket count, key, filter mode, ring timings; the informer's options.
 * @throws ConfigError, TypeError, RangeError at once for a config no retry can fix.
 */
export function shardedInformer<T extends KubeObject = KubeObject>(kubeConfig: KubeConfig, resource: Resource<T>, options: ShardedInformerOptions<T>): ShardedInformer<T>;
/**
 * `mode: 'label'`: the shard `identity` of a sharder's ring, as {@link labelShardedInformer}
 * (which this calls): its cache holds the objects the sharder labelled for it, filled while it
 * holds its shard Lease; it acknowledges drains. No buckets, so no `ownership$` or `owned()`:
 * the sharder, not the replicas, decides placement.
 *
 * ## Example
 * ```ts
 * import type { KubeConfig } from '@kubernetes/client-node';
 * import { configMaps } from 'rx-informer';
 * import { shardedInformer } from 'rx-informer/sharding';
 *
 * declare const kubeConfig: KubeConfig;
 * const shard = shardedInformer(kubeConfig, configMaps, { mode: 'label', ring: { name: 'example', namespace: 'sharding-system' }, identity: 'example-0' });
 * shard.lease$.subscribe((state) => console.log('shard lease:', state.state));
 * ```
 *
 * @param kubeConfig the cluster (the shard's Lease, and `patch` on the resource for drains).
 * @param resource the sharded resource.
 * @param options `mode: 'label'`, the sharder's ring, this shard's identity, Lease timings, the informer's options.
 * @throws ConfigError, TypeError, RangeError at once for a config no retry can fix.
 */
export function shardedInformer<T extends KubeObject = KubeObject>(kubeConfig: KubeConfig, resource: Resource<T>, options: LabelModeOptions<T>): LabelShardedInformer<T>;
/**
 * Either mode, chosen at run time: a {@link ShardedInformer} or a {@link LabelShardedInformer}.
 *
 * @param kubeConfig the cluster and credentials.
 * @param resource what to shard.
 * @param options a bucket mode's options, or `label` mode's.
 * @throws ConfigError, TypeError, RangeError at once for a config no retry can fix.
 */
export function shardedInformer<T extends KubeObject = KubeObject>(
  kubeConfig: KubeConfig,
  resource: Resource<T>,
  options: ShardedInformerOptions<T> | LabelModeOptions<T>,
): ShardedInformer<T> | LabelShardedInformer<T>;
export function shardedInformer<T extends KubeObject = KubeObject>(
  kubeConfig: KubeConfig,
  resource: Resource<T>,
  options: ShardedInformerOptions<T> | LabelModeOptions<T>,
): ShardedInformer<T> | LabelShardedInformer<T> {
  if (options.mode === 'label') return labelShardedInformer(kubeConfig, resource, options);
  const { namespace, labelSelector, fieldSelector, listReadAhead, withholdExcerpts, ring } = options;
  const name = options.name ?? `${informerName(resource, options)}#${options.identity}`;
  checkInformerConfig(kubeConfig, name, { labelSelector, fieldSelector });
  return shardedInformerFrom(
    {
      listerWatcher: kubeListerWatcher(kubeConfig, resource, { namespace, labelSelector, fieldSelector }, { listReadAhead, withholdExcerpts }),
      leaseClient: kubeLeaseClient(kubeConfig),
      ringListerWatcher: kubeListerWatcher(kubeConfig, leases, { namespace: ring.namespace, labelSelector: `${RING_LABEL}=${ring.name}` }),
    },
    { ...options, name },
  );
}

/**
 * {@link shardedInformer} over any sources: the seam for tests in virtual time (`storeListerWatcher`
 * and `storeLeaseClient` from `rx-informer-apiserver`) and for other transports.
 *
 * ## Example
 * ```ts
 * import { leases, pods } from 'rx-informer';
 * import { shardedInformerFrom } from 'rx-informer/sharding';
 * import { createClusterStore, storeLeaseClient, storeListerWatcher } from 'rx-informer-apiserver';
 * import { VirtualAction, VirtualTimeScheduler } from 'rxjs';
 *
 * const scheduler = new VirtualTimeScheduler(VirtualAction, 60_000);
 * const store = createClusterStore();
 * const shard = shardedInformerFrom(
 *   {
 *     listerWatcher: storeListerWatcher(store, pods, { scheduler }),
 *     leaseClient: storeLeaseClient(store, { scheduler }),
 *     ringListerWatcher: storeListerWatcher(store, leases, { scheduler, labelSelector: 'rx-informer.io/ring=demo' }),
 *   },
 *   { ring: { name: 'demo', namespace: 'default' }, identity: 'a', scheduler, mode: 'client' },
 * );
 * ```
 *
 * @param sources the resource's list and watch, the Lease client, the ring's Leases.
 * @param options as {@link shardedInformer}'s (the scope options are the sources' business here).
 * @throws TypeError, RangeError at once for an invalid ring or option.
 */
export function shardedInformerFrom<T extends KubeObject = KubeObject>(sources: ShardSources<T>, options: ShardedInformerOptions<T>): ShardedInformer<T> {
  const scheduler = options.scheduler ?? asyncScheduler;
  const logger = options.logger ?? defaultLogger;
  const ringOptions: RingMemberOptions = { ...options, scheduler, logger };
  const ringConfig = resolveRingConfig(ringOptions);
  const { buckets: count, identity } = ringConfig;
  const key = options.key ?? 'uid';
  const name = options.name ?? `sharded#${identity}`;
  const filtering = new BehaviorSubject<ShardFilterMode>(options.mode ?? 'server');
  if (filtering.value !== 'server' && filtering.value !== 'client') throw new TypeError(`mode must be 'server' or 'client' here (for a ring run by a sharder: labelShardedInformerFrom, or shardedInformer with mode 'label'), got ${JSON.stringify(options.mode)}`);

  // Per informer, not per module: the buckets served now, and whether the ring view has synced.
  const owned = new Set<number>();
  let ready = false;
  /** The buckets the placement gives this replica (the last `members` event's target). */
  let placed: readonly number[] = [];
  const ringView = informerFrom(sources.ringListerWatcher, { name: `${name} ring`, scheduler, logger, backoff: ringViewBackoff(ringConfig) });
  // Membership is held by the cache's runs alone; ownership$ only listens (docs/guides/scale-out.md,
  // "Membership is explicit"), so a logger on it cannot keep buckets that nothing serves.
  const ownershipEvents = new Subject<OwnershipEvent>();
  const membership$ = ringMembership(sources.leaseClient, ringView.informer$, ringOptions).pipe(
    tap((event) => {
      if (event.type === 'members') {
        ready = true;
        placed = event.target;
      }
      else if (event.type === 'acquired') for (const bucket of event.buckets) owned.add(bucket);
      else if (event.type === 'released') for (const bucket of event.buckets) owned.delete(bucket);
      ownershipEvents.next(event);
    }),
    finalize(() => {
      const left = ownedNow();
      owned.clear();
      ready = false;
      placed = [];
      if (left.length > 0) ownershipEvents.next({ type: 'released', buckets: left, owned: [], reason: 'left' });
    }),
    share(),
  );
  const ownedNow = (): number[] => [...owned].sort((a, b) => a - b);

  const onIgnored = (echoed: string | undefined, sent: string): void => {
    if (filtering.value !== 'server') return;
    logger.warn({ informer: name, sent, echoed }, 'the API server ignored the shard selector (no metadata.shardInfo echo): filtering client-side from now on');
    filtering.next('client');
  };

  const bucketOf = (object: KubeObject): number => objectBucket(object, key, count);

  // One reflector run per bucket set: a new set relists (the indexer's Replace turns the difference
  // into adds and deletes), and that Replace carries the handover so the indexer can mark them.
  const runs = (reflectConfig: ReflectConfig): ReflectorRuns<T> =>
    defer(() => {
      // The buckets the cache holds: those of the last Replace that completed, per subscription.
      let cached: readonly number[] = [];
      // A bucket set has been handed to the reflector (an empty one included), per subscription.
      let started = false;
      const handOver = (buckets: readonly number[]) => (source: Observable<ReflectorEvent<T>>): Observable<ReflectorEvent<T>> => {
        const handover = bucketHandover(cached, buckets, bucketOf);
        if (handover === undefined) return source;
        let done = false;
        return source.pipe(
          map((event) => {
            if (done || event.type !== 'Replace') return event;
            if (event.last) {
              done = true;
              cached = buckets;
            }
            return { ...event, handover };
          }),
        );
      };
      return membership$.pipe(
        startWith(undefined),
        filter(() => ready),
        map(() => ownedNow()),
        // Synced means this replica's share is cached. Before its first set, owning nothing only
        // means the buckets placed on it are not acquired yet: an empty Replace then would declare
        // an unlisted cache synced. It waits, unless the placement gives it no bucket at all.
        filter((buckets) => started || buckets.length > 0 || placed.length === 0),
        distinctUntilChanged(sameBuckets),
        tap(() => (started = true)),
        switchMap((buckets) => filtering.pipe(map((mode) => ({ buckets, mode })))),
        map(({ buckets, mode }): Observable<ReflectorEvent<T>> => {
          if (buckets.length === 0) return concat(of<ReflectorEvent<T>>({ type: 'Replace', items: [], first: true, last: true, resourceVersion: '' }), NEVER).pipe(handOver(buckets));
          return reflectorEvents(shardListerWatcher(sources.listerWatcher, { buckets, count, key, filtering: mode, onIgnored }), reflectConfig).pipe(handOver(buckets));
        }),
      );
    });

  const informer = informerOfRuns(runs, { ...options, name, scheduler, logger });
  return {
    ...informer,
    ownership$: ownershipEvents.asObservable(),
    filtering$: filtering.pipe(distinctUntilChanged()),
    owned: ownedNow,
    owns: (object) => owned.has(bucketOf(object)),
    bucketOf,
  };
}

function sameBuckets(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((bucket, i) => bucket === b[i]);
}

/** The handover from the sorted bucket set `before` to `after`; undefined when they are equal. */
function bucketHandover(before: readonly number[], after: readonly number[], bucketOf: (object: KubeObject) => number): BucketHandover | undefined {
  if (sameBuckets(before, after)) return undefined;
  const wasServed = new Set(before);
  const isServed = new Set(after);
  return {
    acquired: after.filter((bucket) => !wasServed.has(bucket)),
    released: before.filter((bucket) => !isServed.has(bucket)),
    served: after,
    bucketOf,
  };
}
