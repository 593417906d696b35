/**
 * A benchmark replica's sharded pod informer (lib/sharding, a bucket mode), built from URLs: the
 * pods from one server, the ring's Leases from another, or both from one loopback API server.
 * bench/sharding.ts runs one per replica process; spec/bench/generatorServer.spec.ts runs them
 * in-process against the million-pod generating server, whose pods are served without Leases.
 */
import type { Logger } from '../lib/base/logger';
import type { KubeObject } from '../lib/base/object';
import { kubeLeaseClient } from '../lib/leaderElection/leaseClient';
import { leases, pods } from '../lib/resources/builtins';
import { RING_LABEL } from '../lib/sharding/ringLease';
import { shardedInformerFrom, type ShardedInformer, type ShardFilterMode } from '../lib/sharding/shardedInformer';
import { kubeListerWatcher } from '../lib/sources/kubeListerWatcher';
import { metadataListerWatcher } from '../lib/sources/metadataListerWatcher';
import { dropManagedFields } from '../lib/store/transforms';
import { loopbackKubeConfig } from '../apiserver/src/kubeConfig';

/**
 * What a replica caches of each pod: whole (managedFields included), without its managedFields
 * (`transform: dropManagedFields`, bench:million's `lean`), or its metadata only (`metadataOnly`,
 * bench:million's `metadata`).
 */
export type ReplicaCache = 'whole' | 'lean' | 'metadata';

/** A ring's Lease timings (ms). */
export interface RingTimings {
  readonly leaseDuration: number;
  readonly renewDeadline: number;
  readonly retryPeriod: number;
}

export interface ReplicaShardOptions {
  /** The server of the pods. */
  readonly podsUrl: string;
  /** The server of the ring's Leases. */
  readonly leasesUrl: string;
  readonly identity: string;
  readonly ring: { readonly name: string; readonly namespace: string };
  readonly buckets: number;
  readonly mode: ShardFilterMode;
  readonly cache: ReplicaCache;
  /** The ring's Lease timings; the library's defaults when absent. */
  readonly timings?: RingTimings;
  readonly pageSize?: number;
  /** How long a list may go without a byte before it is retried (a million-pod list takes minutes on a busy machine). */
  readonly listPageTimeoutMs?: number;
  readonly logger?: Logger;
}

/** A replica's sharded informer of pods; its objects are `Pod`s or `PartialObjectMetadata` as `cache` says. */
export function replicaShard(options: ReplicaShardOptions): ShardedInformer<KubeObject> {
  const podsConfig = loopbackKubeConfig({ url: options.podsUrl, tls: false, token: undefined });
  const leasesConfig = options.leasesUrl === options.podsUrl ? podsConfig : loopbackKubeConfig({ url: options.leasesUrl, tls: false, token: undefined });
  const { ring, identity, cache } = options;
  return shardedInformerFrom<KubeObject>(
    {
      listerWatcher: cache === 'metadata' ? metadataListerWatcher(podsConfig, pods) : kubeListerWatcher<KubeObject>(podsConfig, pods),
      leaseClient: kubeLeaseClient(leasesConfig),
      ringListerWatcher: kubeListerWatcher(leasesConfig, leases, { namespace: ring.namespace, labelSelector: `${RING_LABEL}=${ring.name}` }),
    },
    {
      name: `pods#${identity}`,
      ring,
      identity,
      buckets: options.buckets,
      mode: options.mode,
      ...(options.timings ?? {}),
      ...(options.pageSize === undefined ? {} : { pageSize: options.pageSize }),
      ...(options.listPageTimeoutMs === undefined ? {} : { listPageTimeoutMs: options.listPageTimeoutMs }),
      ...(cache === 'lean' ? { transform: dropManagedFields } : {}),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    },
  );
}
