/**
 * rx-informer: Kubernetes informers as RxJS streams.
 *
 * This module only re-exports. The loopback API server for tests lives at `rx-informer/testing`.
 */

// Wiring: informers, the factory, waiting for sync.
export { informer, informerFrom, informerName } from './informer/informer';
export type { Informer, InformerOptions, InformerFromOptions, MetadataInformerOptions } from './informer/informer';
export { informerFactory, IndexerConflictError } from './factory/factory';
export type {
  InformerFactory,
  InformerFactoryOptions,
  InformerForOptions,
  GroupVersionResource,
  ListSelectors,
  MetadataInformerForOptions,
} from './factory/factory';
export { waitForSync, SyncTimeoutError, InformerStoppedError } from './informer/waitForSync';
export type { WaitForSyncOptions, UnsyncedInformer, SyncedSnapshots } from './informer/waitForSync';

// Metadata-only informers.
export { metadataListerWatcher } from './sources/metadataListerWatcher';
export {
  toPartialObjectMetadata,
  METADATA_ACCEPT,
  METADATA_LIST_ACCEPT,
  PARTIAL_OBJECT_METADATA_API_VERSION,
} from './sources/partialObjectMetadata';
export type { PartialObjectMetadata, MetadataOnlyOptions } from './sources/partialObjectMetadata';

// Resources.
export { resourcePath, apiVersionOf, defineResource } from './resources/resource';
export type { Resource, ResourceScope, WireObject, WireJson } from './resources/resource';
// Every built-in resource (pods, deployments, ...) and its object type (Pod, Deployment, ...).
export * from './resources/builtins';

// The delta stream, health and logging.
export type { Delta, DeltaType, ReplaceDelta, AddedDelta, UpdatedDelta, DeletedDelta, BookmarkDelta } from './reflector/delta';
export type { Health, ReflectorPhase, InformerHealth, CacheHealth } from './reflector/health';
export { silentLogger } from './base/logger';
export type { Logger } from './base/logger';

// Sources.
export { list$, defaultPageSize, defaultIncrementalDecoding } from './sources/list';
export type { ListStreamOptions, IncrementalDecoding } from './sources/list';
export { watch$ } from './sources/watch';
export type { WatchStreamOptions } from './sources/watch';
export { kubeListerWatcher, type KubeListerWatcherOptions } from './sources/kubeListerWatcher';
export { inContext } from './sources/transport';
export type { ListOptions, ListPage, WatchOptions, WatchEvent, ListerWatcher, Scope } from './sources/listerWatcher';
export {
  InformerError,
  StatusError,
  NetworkError,
  ProtocolError,
  ConfigError,
  IdleTimeoutError,
  RejectedObjectError,
  isBadRequest,
  isExpired,
  isTooLargeResourceVersion,
} from './base/errors';
export type { Status, InformerErrorKind, ProtocolProblem, ConfigProblem, RejectionStage, RejectionOutcome } from './base/errors';

// Operators.
export { reflect, reflectorEvents } from './reflector/reflect';
export type { ReflectConfig } from './reflector/reflectConfig';
export { INITIAL_EVENTS_END_ANNOTATION } from './reflector/watchEvents';
export type { ReflectorEvent, ReflectorReport, HealthReport } from './reflector/reflectorEvent';
export type { RequestEvent, RequestOpened, RequestEnded, RequestOutcome, RequestSummary } from './reflector/requestEvent';
export { defaultBackoffConfig } from './reflector/backoff';
export type { BackoffConfig, ResolvedBackoffConfig } from './reflector/backoff';
export { backoff } from './operators/backoff';
export type { BackoffOperatorConfig } from './operators/backoff';
export { indexer } from './store/indexer';
export type { IndexerBatchConfig, IndexerConfig } from './store/indexerConfig';
export { handle } from './handlers/handle';
export type { HandleOptions } from './handlers/handle';
export type { ResourceHandlers, HandlerEvent } from './handlers/resourceHandlers';
export { HandlerQueueOverflowError } from './handlers/notifications';
export type { HandlerNotification, AddNotification, UpdateNotification, DeleteNotification } from './handlers/notifications';
export { resync, MINIMUM_RESYNC_PERIOD_MS } from './handlers/resync';
export type { ResyncConfig, ResyncTick } from './handlers/resync';
export { ofType } from './operators/ofType';
export { inNamespace } from './operators/inNamespace';
export { matchLabels } from './operators/matchLabels';
export { changedGeneration } from './operators/changedGeneration';
export { changedAt } from './operators/changedAt';

// Controllers: a rate-limited work queue.
export { reconcile } from './workqueue/reconcile';
export type { ReconcileOptions, ReconcileContext, ReconcileEvent, Reconciler, QueueStats } from './workqueue/reconcile';
export { requeueAfter } from './workqueue/reconcileResult';
export type { ReconcileResult, ReconcileOutcome } from './workqueue/reconcileResult';
export { changedKeys } from './workqueue/changedKeys';
export type { ChangedKeysOptions } from './workqueue/changedKeys';
export { defaultRetryRateLimit } from './workqueue/rateLimiter';
export type { RetryRateLimit } from './workqueue/rateLimiter';

// Metrics as plain values, for any metrics library (rx-informer/prometheus maps them to prom-client).
export type { InformerMetricEvent, RelistCause, WatchEventType } from './informer/informerMetrics';
export type { WorkqueueMetricEvent, WorkqueueMetricsSink } from './workqueue/workqueueMetrics';

// Controllers: leader election on a Lease.
export { leaderElection, leaderElectionFrom } from './leaderElection/leaderElection';
export type { LeaderState, LeaderElectionOptions } from './leaderElection/leaderElection';
export { whileLeader } from './leaderElection/whileLeader';
export { kubeLeaseClient } from './leaderElection/leaseClient';
export type { LeaseClient } from './leaderElection/leaseClient';
export { JITTER_FACTOR } from './leaderElection/electionConfig';

// The store.
export type { Snapshot, ListQuery } from './store/snapshot';
export type { Change, AddChange, UpdateChange, DeleteChange } from './store/change';
export type { BucketHandover } from './reflector/delta';
export type { HandoverMark } from './store/change';
export type { KubeObject, ObjectMeta, OwnerReference } from './base/object';
export { IndexNotFoundError } from './store/indexedSnapshot';
export { NAMESPACE_INDEX, OWNER_INDEX, namespaceIndex, labelIndex, ownerIndex, fieldIndex } from './store/indexers';
export type { IndexFunc } from './store/indexers';
export { objectKey, splitKey } from './store/keys';
export type { SplitKey } from './store/keys';
export { dropManagedFields } from './store/transforms';
export { shareUnchanged } from './store/shareUnchanged';
export { parseLabelSelector, parseFieldSelector, SelectorSyntaxError } from './store/selector';
export type { LabelSelector, LabelRequirement, FieldSelector, FieldRequirement } from './store/selector';
export { shardedInformer, shardedInformerFrom } from './sharding/shardedInformer';
export type { ShardedInformer, ShardedInformerOptions, LabelModeOptions, ShardSources, ShardFilterMode } from './sharding/shardedInformer';
export { objectBucket, type ShardKey } from './sharding/shardListerWatcher';
export { ringMembership, type OwnershipEvent, type ReleaseReason } from './sharding/ringMember';
export type { RingMemberOptions, RingRef } from './sharding/ringConfig';
export { RING_LABEL, BUCKETS_ANNOTATION } from './sharding/ringLease';
export { fnv1a64, hashHex, type Hash64 } from './sharding/fnv1a64';
export { bucketOf, shardSelectorOf, type ShardField } from './sharding/buckets';
export { placeBuckets, bucketsOf } from './sharding/placement';
export { labelShardedInformer, labelShardedInformerFrom } from './sharding/labelShardedInformer';
export type { LabelShardedInformer, LabelShardedInformerOptions, LabelShardSources } from './sharding/labelShardedInformer';
export { kubeDrainAcknowledger, shardLabelOf, drainLabelOf, CONTROLLER_RING_LABEL, type DrainAcknowledger } from './sharding/labelShard';
