/**
 * rx-informer/sharding: replicas that split a resource between them on a ring of Leases (modes
 * `server`, `client` and `label`), each caching and handling its own share, with bucket handovers
 * marked on the changes.
 *
 * This module only re-exports.
 */

export { shardedInformer, shardedInformerFrom } from './shardedInformer';
export type { ShardedInformer, ShardedInformerOptions, LabelModeOptions, ShardSources, ShardFilterMode } from './shardedInformer';
export { labelShardedInformer, labelShardedInformerFrom } from './labelShardedInformer';
export type { LabelShardedInformer, LabelShardedInformerOptions, LabelShardSources } from './labelShardedInformer';
export { ringMembership } from './ringMember';
export type { OwnershipEvent, ReleaseReason } from './ringMember';
export type { RingMemberOptions, RingRef } from './ringConfig';
export { RING_LABEL } from './ringLease';
export type { ShardField } from './buckets';
export type { ShardKey } from './shardListerWatcher';
export { kubeDrainAcknowledger, shardLabelOf, drainLabelOf } from './labelShard';
export type { DrainAcknowledger } from './labelShard';
