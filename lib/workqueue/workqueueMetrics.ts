/**
 * One measurement of a {@link reconcile} queue, as plain values, handed to its `metrics` option:
 * what client-go's work queue metrics (`util/workqueue/metrics.go`) are made of. Times are the
 * queue's scheduler's: `at` in ms, durations in seconds.
 *
 * | event | client-go metric it feeds |
 * |---|---|
 * | `added` | `workqueue_adds_total`, `workqueue_depth` |
 * | `started` | `workqueue_queue_duration_seconds`, `workqueue_depth`; with `finished`, the unfinished work |
 * | `finished` | `workqueue_work_duration_seconds`; `workqueue_retries_total` when `failed` or `timedOut`; controller-runtime's `controller_runtime_reconcile_timeouts_total` when `timedOut` |
 * | `stopped` | the queue is gone: depth 0, nothing running |
 */
export type WorkqueueMetricEvent =
  /** A key entered the queue (it was not waiting already); `depth` keys now wait for a worker. */
  | { readonly type: 'added'; readonly key: string; readonly depth: number }
  /** A worker took `key` after it waited `waitedSeconds`; `depth` keys still wait. */
  | { readonly type: 'started'; readonly key: string; readonly waitedSeconds: number; readonly depth: number; readonly at: number }
  /**
   * The reconcile of `key` ended after `seconds`: `failed` ones and `timedOut` ones (abandoned at
   * the `timeout`) are retried, a retry each.
   */
  | { readonly type: 'finished'; readonly key: string; readonly seconds: number; readonly outcome: 'reconciled' | 'failed' | 'timedOut'; readonly at: number }
  /** The subscription ended: queued keys are dropped, running reconciles abandoned or left to finish unmeasured. */
  | { readonly type: 'stopped' };

/** Where a queue's measurements go: the `metrics` option of `reconcile`. */
export type WorkqueueMetricsSink = (event: WorkqueueMetricEvent) => void;
