import { Gauge } from 'prom-client';
import type { WorkqueueMetricEvent, WorkqueueMetricsSink } from '../workqueue/workqueueMetrics';
import { counterIn, gaugeIn, histogramIn, registeredMetric, type MetricShape, type MetricsRegistry } from './registeredMetric';

/**
 * Seconds waited and worked: a microsecond to 1000 s, one bucket per power of ten, as Kubernetes'
 * component-base registers client-go's work queue histograms (`ExponentialBuckets(10e-7, 10, 10)`).
 */
export const WORKQUEUE_DURATION_BUCKETS: readonly number[] = [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100, 1000];

/** Options of {@link registerWorkqueueMetrics}. */
export interface WorkqueueMetricsOptions {
  /** The `name` label of this queue's series (client-go's queue name); one per queue and registry. */
  readonly name: string;
  /**
   * The clock (ms) the running reconciles' ages are read with at each scrape: the queue's
   * scheduler's. Default `Date.now` (that of `asyncScheduler`, the default scheduler).
   */
  readonly now?: () => number;
}

/** The `metrics` sink for `reconcile`, recording into a registry; `unregister()` removes its series. */
export interface WorkqueueMetricsRecorder extends WorkqueueMetricsSink {
  /** Stops recording and removes this queue's series. */
  unregister(): void;
}

/** A queue's running reconciles, by key, with the time (ms) each started. */
interface RunningQueue {
  readonly running: Map<string, number>;
  readonly now: () => number;
}

/**
 * A gauge computed at each scrape from the running reconciles of every queue registered with it
 * (client-go recomputes its own every 500 ms): O(running reconciles) per scrape, nothing per key.
 */
class RunningWorkGauge extends Gauge<'name'> {
  readonly queues = new Map<string, RunningQueue>();

  constructor(registry: MetricsRegistry, shape: MetricShape<'name'>, summarize: (ages: { total: number; oldest: number }) => number) {
    super({
      ...shape,
      registers: [registry],
      collect(this: Gauge<'name'>) {
        for (const [name, queue] of (this as RunningWorkGauge).queues) this.set({ name }, summarize(agesOf(queue)));
      },
    });
  }
}

function agesOf(queue: RunningQueue): { total: number; oldest: number } {
  const now = queue.now();
  let total = 0;
  let oldest = 0;
  for (const startedAt of queue.running.values()) {
    const age = Math.max(0, now - startedAt) / 1000;
    total += age;
    oldest = Math.max(oldest, age);
  }
  return { total, oldest };
}

function runningWorkGaugeIn(registry: MetricsRegistry, shape: MetricShape<'name'>, summarize: (ages: { total: number; oldest: number }) => number): RunningWorkGauge {
  return registeredMetric(registry, shape, RunningWorkGauge, () => new RunningWorkGauge(registry, shape, summarize));
}

/** The registry's work queue metrics, made on first use. */
function workqueueMetricsIn(registry: MetricsRegistry) {
  const labelNames = ['name'] as const;
  return {
    depth: gaugeIn(registry, { name: 'workqueue_depth', help: 'Current depth of workqueue', labelNames }),
    adds: counterIn(registry, { name: 'workqueue_adds_total', help: 'Total number of adds handled by workqueue', labelNames }),
    queueDuration: histogramIn(
      registry,
      { name: 'workqueue_queue_duration_seconds', help: 'How long in seconds an item stays in workqueue before being requested.', labelNames },
      WORKQUEUE_DURATION_BUCKETS,
    ),
    workDuration: histogramIn(
      registry,
      { name: 'workqueue_work_duration_seconds', help: 'How long in seconds processing an item from workqueue takes.', labelNames },
      WORKQUEUE_DURATION_BUCKETS,
    ),
    unfinishedWork: runningWorkGaugeIn(
      registry,
      {
        name: 'workqueue_unfinished_work_seconds',
        help:
          "How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. " +
          'One can deduce the number of stuck threads by observing the rate at which this increases.',
        labelNames,
      },
      (ages) => ages.total,
    ),
    longestRunning: runningWorkGaugeIn(
      registry,
      { name: 'workqueue_longest_running_processor_seconds', help: 'How many seconds has the longest running processor for workqueue been running.', labelNames },
      (ages) => ages.oldest,
    ),
    retries: counterIn(registry, { name: 'workqueue_retries_total', help: 'Total number of retries handled by workqueue', labelNames }),
    // controller-runtime's name, help and label for the reconciles its ReconciliationTimeout cut short.
    timeouts: counterIn(registry, { name: 'controller_runtime_reconcile_timeouts_total', help: 'Total number of reconciliation timeouts per controller', labelNames: ['controller'] as const }),
  };
}

/**
 * A `metrics` sink for `reconcile` that records the queue into a prom-client registry under
 * client-go's work queue metric names, labelled `name`, as Kubernetes' component-base registers
 * them (same names, help texts and buckets).
 *
 * | metric | type | what |
 * |---|---|---|
 * | `workqueue_depth` | gauge | keys waiting for a worker |
 * | `workqueue_adds_total` | counter | keys added that were not already waiting |
 * | `workqueue_queue_duration_seconds` | histogram | how long each key waited for a worker |
 * | `workqueue_work_duration_seconds` | histogram | how long each reconcile took |
 * | `workqueue_unfinished_work_seconds` | gauge | the summed age of the running reconciles, at scrape time |
 * | `workqueue_longest_running_processor_seconds` | gauge | the oldest running reconcile's age, at scrape time |
 * | `workqueue_retries_total` | counter | failed reconciles, timed-out ones included (each is retried) |
 * | `controller_runtime_reconcile_timeouts_total` | counter | reconciles abandoned at `reconcile`'s `timeout` (controller-runtime's name; label `controller`, set to `name`) |
 *
 * Cost: a few increments per key; at each scrape, a pass over the running reconciles.
 *
 * ## Example
 * ```ts
 * import { Registry } from 'prom-client';
 * import { reconcile } from 'rx-informer/workqueue';
 * import type { Informer } from 'rx-informer';
 * import { changedKeys } from 'rx-informer/workqueue';
 * import { registerWorkqueueMetrics } from 'rx-informer/prometheus';
 *
 * declare const deploymentInformer: Informer;
 * const registry = new Registry();
 * const metrics = registerWorkqueueMetrics(registry, { name: 'deployments' });
 * deploymentInformer.informer$
 *   .pipe(changedKeys(), reconcile(async (key) => console.log('reconcile', key), { name: 'deployments', metrics }))
 *   .subscribe();
 * ```
 *
 * @param registry where the metrics go.
 * @param options the queue's `name` label and clock.
 * @returns the sink to pass as `reconcile(fn, { metrics })`, with `unregister()`.
 * @throws MetricConflictError when the registry holds one of these names with another type or labels.
 */
export function registerWorkqueueMetrics(registry: MetricsRegistry, options: WorkqueueMetricsOptions): WorkqueueMetricsRecorder {
  const { name } = options;
  const metrics = workqueueMetricsIn(registry);
  const labels = { name };
  const controllerLabels = { controller: name };
  const queue: RunningQueue = { running: new Map(), now: options.now ?? Date.now };
  metrics.depth.set(labels, 0);
  metrics.adds.inc(labels, 0);
  metrics.retries.inc(labels, 0);
  metrics.timeouts.inc(controllerLabels, 0);
  metrics.queueDuration.zero(labels);
  metrics.workDuration.zero(labels);
  metrics.unfinishedWork.queues.set(name, queue);
  metrics.longestRunning.queues.set(name, queue);
  let registered = true;

  const record = (event: WorkqueueMetricEvent): void => {
    if (!registered) return;
    switch (event.type) {
      case 'added':
        metrics.adds.inc(labels);
        metrics.depth.set(labels, event.depth);
        return;
      case 'started':
        metrics.depth.set(labels, event.depth);
        metrics.queueDuration.observe(labels, event.waitedSeconds);
        queue.running.set(event.key, event.at);
        return;
      case 'finished':
        queue.running.delete(event.key);
        metrics.workDuration.observe(labels, event.seconds);
        if (event.outcome !== 'reconciled') metrics.retries.inc(labels);
        if (event.outcome === 'timedOut') metrics.timeouts.inc(controllerLabels);
        return;
      case 'stopped':
        queue.running.clear();
        metrics.depth.set(labels, 0);
        return;
    }
  };
  const unregister = (): void => {
    if (!registered) return;
    registered = false;
    metrics.unfinishedWork.queues.delete(name);
    metrics.longestRunning.queues.delete(name);
    for (const metric of [metrics.depth, metrics.adds, metrics.queueDuration, metrics.workDuration, metrics.unfinishedWork, metrics.longestRunning, metrics.retries]) {
      metric.remove(labels);
    }
    metrics.timeouts.remove(controllerLabels);
  };
  return Object.assign(record, { unregister });
}
