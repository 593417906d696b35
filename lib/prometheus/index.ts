/**
 * rx-informer/prometheus: informer and work queue metrics exported to a prom-client registry,
 * under client-go's names. prom-client is an optional peer dependency of rx-informer: install it
 * to use this entry point; nothing else of rx-informer loads it.
 *
 * This module only re-exports.
 */

export { registerInformerMetrics, LIST_DURATION_BUCKETS, WATCH_DURATION_BUCKETS, ITEMS_BUCKETS } from './informerMetrics';
export type { MeasuredInformer, InformerMetricsOptions } from './informerMetrics';
export { registerWorkqueueMetrics, WORKQUEUE_DURATION_BUCKETS } from './workqueueMetrics';
export type { WorkqueueMetricsOptions, WorkqueueMetricsRecorder } from './workqueueMetrics';
export { MetricConflictError } from './registeredMetric';
export type { MetricsRegistry } from './registeredMetric';
