/**
 * rx-informer/leader-election: client-go's leader election on a `coordination.k8s.io/v1` Lease,
 * as a cold Observable of leader states, and `whileLeader()`, which runs work only while leading.
 *
 * This module only re-exports.
 */

export { leaderElection, leaderElectionFrom } from './leaderElection';
export type { LeaderElectionOptions } from './electionConfig';
export type { LeaderState } from './elector';
export { whileLeader } from './whileLeader';
export type { LeaderTerm, LeaderWork, WhileLeaderEvent, WhileLeaderOptions, WhileLeaderStopReason } from './whileLeader';
export { kubeLeaseClient } from './leaseClient';
export type { LeaseClient } from './leaseClient';
