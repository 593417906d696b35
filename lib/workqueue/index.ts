/**
 * rx-informer/workqueue: `reconcile()`, client-go's rate-limited work queue as an operator from
 * keys to reconciles (one at a time per key, coalesced, retried with backoff, `requeueAfter`), and
 * `changedKeys()`, the keys an informer's snapshots change.
 *
 * This module only re-exports.
 */

export { reconcile } from './reconcile';
export type { ReconcileOptions } from './reconcile';
export type { ReconcileContext, ReconcileEvent, Reconciler, QueueStats } from './workers';
export { requeueAfter } from './reconcileResult';
export type { ReconcileResult, ReconcileOutcome } from './reconcileResult';
export { changedKeys } from './changedKeys';
export type { ChangedKeysOptions } from './changedKeys';
export { defaultRetryRateLimit } from './rateLimiter';
export type { RetryRateLimit } from './rateLimiter';
export type { WorkqueueMetricEvent, WorkqueueMetricsSink } from './workqueueMetrics';
