/**
 * rx-informer: Kubernetes informers as RxJS streams.
 *
 * The root names what an informer's user meets: informers and their factory, waiting for sync,
 * handlers, the snapshot and its indexes, the operators users pipe, errors and resources. The
 * rest lives behind subpaths, each its own entry point:
 * - `rx-informer/pipeline`: the stages an informer is built from (list and watch sources, the
 *   reflector, the indexer, `informerFrom`), to assemble your own;
 * - `rx-informer/writes`: writing back: `edit()` of cached objects into patches, server-side
 *   `apply()`, conditions, an Event recorder;
 * - `rx-informer/workqueue`: `reconcile()`, a rate-limited work queue of keys;
 * - `rx-informer/leader-election`: leader election on a Lease;
 * - `rx-informer/sharding`: replicas that split a resource between them;
 * - `rx-informer/prometheus`: the metrics in a prom-client registry;
 * - `rx-informer/testing`: in-process test helpers (the loopback API server is the package
 *   `rx-informer-apiserver`).
 *
 * This module only re-exports.
 */

// Informers, the factory, waiting for sync.
export { informer, informerName } from './informer/informer';
export type { Informer, InformerOptions, InformerFromOptions, MetadataInformerOptions, InformerNamespacesOptions, InformerNameScope } from './informer/informer';
export type { NamespaceSet } from './informer/namespaceRuns';
export { informerFactory } from './factory/factory';
export type { InformerFactory, InformerFactoryOptions, InformerForOptions, GroupVersionResource, ListSelectors, MetadataInformerForOptions } from './factory/factory';
export { IndexerConflictError } from './factory/lazyInformer';
export { waitForSync, SyncTimeoutError, InformerStoppedError } from './informer/waitForSync';
export type { WaitForSyncOptions, UnsyncedInformer, SyncedSnapshots } from './informer/waitForSync';
export type { PartialObjectMetadata, MetadataOnlyOptions } from './sources/partialObjectMetadata';
export type { IncrementalDecoding } from './sources/list';
export type { BackoffConfig } from './reflector/backoff';
export type { WatchScope } from './sources/listerWatcher';

// Health, metrics as plain values, logging.
export type { Health, ReflectorPhase, InformerHealth, CacheHealth } from './reflector/health';
export type { InformerMetricEvent, RelistCause, WatchEventType } from './informer/informerMetrics';
export { defaultLogger, silentLogger, stderrLogger } from './base/logger';
export type { Logger, LogLevel, StderrLoggerOptions } from './base/logger';

// Handlers.
export { handle } from './handlers/handle';
export type { HandleOptions } from './handlers/handle';
export type { ResourceHandlers, HandlerEvent } from './handlers/resourceHandlers';
export { HandlerQueueOverflowError } from './handlers/notifications';
export type { HandlerNotification, UpdateNotification } from './handlers/notifications';

// The cache: snapshots, their changes, indexes, keys, selectors.
export type { Snapshot, ListQuery } from './store/snapshot';
export type { Change, AddChange, UpdateChange, DeleteChange, HandoverMark, NamespaceSetMark } from './store/change';
export type { Delta, ReplaceDelta, AddedDelta, UpdatedDelta, DeletedDelta, BookmarkDelta, BucketHandover, NamespaceScope } from './reflector/delta';
export type { KubeObject, ObjectMeta, OwnerReference } from './base/object';
export { IndexNotFoundError } from './store/indexedSnapshot';
export { NAMESPACE_INDEX, OWNER_INDEX, namespaceIndex, labelIndex, ownerIndex, fieldIndex } from './store/indexers';
export type { IndexFunc } from './store/indexers';
export { objectKey, splitKey } from './store/keys';
export type { SplitKey } from './store/keys';
export { dropManagedFields } from './store/transforms';
export { parseLabelSelector, parseFieldSelector, SelectorSyntaxError } from './store/selector';
export type { LabelSelector, LabelRequirement, FieldSelector, FieldRequirement } from './store/selector';

// Operators to pipe.
export { backoff } from './operators/backoff';
export type { BackoffOperatorConfig } from './operators/backoff';
export { ofType } from './operators/ofType';
export { inNamespace } from './operators/inNamespace';
export { matchLabels } from './operators/matchLabels';
export { changedGeneration } from './operators/changedGeneration';
export { changedAt } from './operators/changedAt';

// Errors.
export { InformerError, StatusError, NetworkError, ProtocolError, ConfigError, IdleTimeoutError, RejectedObjectError } from './base/errors';
export type { Status, InformerErrorKind, ProtocolProblem, ConfigProblem, RejectionStage, RejectionOutcome } from './base/errors';

// Resources: every built-in resource (pods, deployments, ...) with its object type (Pod,
// Deployment, ...), and your own.
export { defineResource, resourcePath, apiVersionOf } from './resources/resource';
export type { Resource, ResourcePathOptions, WireObject, WireJson } from './resources/resource';
export * from './resources/builtins';

// Custom resources: TypeScript types and descriptors from their CustomResourceDefinitions (what
// `npx rx-informer crd` writes).
export { crdToTypeScript } from './crd/crdToTypeScript';
export type { CrdToTypeScriptOptions } from './crd/crdToTypeScript';
export { CrdError } from './crd/customResourceDefinition';
export { fetchCustomResourceDefinition } from './crd/fetchCustomResourceDefinition';
export type { FetchCustomResourceDefinitionOptions } from './crd/fetchCustomResourceDefinition';
