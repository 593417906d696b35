import { asyncScheduler, type OperatorFunction, type SchedulerLike } from 'rxjs';
import { defaultLogger, type Logger } from '../base/logger';
import { operate, operatorObserver } from '../base/operate';
import { RetryLimiter, type RetryRateLimit } from './rateLimiter';
import { Workers, type ReconcileEvent, type Reconciler } from './workers';
import type { WorkqueueMetricsSink } from './workqueueMetrics';

export type { QueueStats, ReconcileContext, ReconcileEvent, Reconciler } from './workers';

/** Options of {@link reconcile}. All optional. */
export interface ReconcileOptions {
  /** Reconciles running at once, each on a different key. Default 1 (controller-runtime's `MaxConcurrentReconciles`). */
  readonly concurrency?: number;
  /**
   * Retry pacing after failures: per key 5 ms doubling to 1000 s, and overall at most 10 retries
   * per second after a burst of 100 (client-go's `DefaultControllerRateLimiter`).
   */
  readonly rateLimit?: RetryRateLimit;
  /**
   * After unsubscription, how long (ms) running reconciles may go on before their `signal`
   * aborts and Observable ones are unsubscribed. Default 2 000. Nobody can wait for them after an
   * unsubscription: where that matters (under `whileLeader`, before another replica may start),
   * stop with the `signal` option instead, which aborts them at once and completes when they have
   * settled. Raise it for a controller without leader election whose reconciles are slow.
   */
  readonly grace?: number;
  /**
   * Stops the queue gracefully when it aborts, for whoever must know when no reconcile runs any
   * more (`whileLeader` from rx-informer/leader-election passes its term's signal here): keys are
   * no longer taken, queued keys and pending retries and requeues are dropped, every running
   * reconcile's own `signal` aborts at once (no `grace`) and Observable ones are unsubscribed, and
   * the output completes once the last Promise has settled (what it returns is not reported). How
   * long that takes is up to the reconciles: bound it where you wait for it. Default none.
   */
  readonly signal?: AbortSignal;
  /**
   * How long (ms) one reconcile may run (controller-runtime's `ReconciliationTimeout`). Past it
   * its `signal` aborts with a `TimeoutError`, an Observable reconcile is unsubscribed, and the
   * key fails: it is retried with backoff, and its worker takes the next key at once. A Promise
   * that ignores its signal cannot be stopped: its key stays taken until it settles, so its retry
   * runs after it, never beside it. Default none (`Infinity`). Any length, even past 24.8 days.
   */
  readonly timeout?: number;
  /** Runs retry timers, requeues, the grace timer and the `'queue'` events. Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike;
  /**
   * Where failures are logged: at debug for a key's first four failures in a row, at warn from
   * the fifth on, and at warn for every timeout (a `'failed'` event carries each one). Default
   * `defaultLogger`: warnings and errors to stderr; `silentLogger` for none.
   */
  readonly logger?: Logger;
  /** Names this reconciler in log lines. Default `'reconcile'`. */
  readonly name?: string;
  /**
   * Receives the queue's measurements (keys added, taken after how long, reconciled in how long,
   * failed), from which client-go's work queue metrics are made: `registerWorkqueueMetrics` from
   * `rx-informer/prometheus` returns one. Default none: nothing is measured. O(1) per key.
   */
  readonly metrics?: WorkqueueMetricsSink;
}

/**
 * A rate-limited work queue as an operator: client-go's `util/workqueue` with a reconcile loop.
 * Keys go in (`namespace/name`, typically from {@link changedKeys}); each is reconciled by `fn`
 * until it succeeds.
 *
 * 1. **Keys, not objects.** A key waiting in the queue is there once however many times it
 *    arrives. A key is never reconciled by two workers at once: one that arrives while it is
 *    being reconciled runs again right after (client-go's dirty and processing sets).
 * 2. **`concurrency` workers** take keys in arrival order.
 * 3. **Outcomes.** `fn` returns (or resolves, or its Observable ends with) nothing for done, or
 *    `requeueAfter(ms)` to run the key again later. A throw, rejection or error retries the key
 *    after the larger of its own backoff (5 ms doubling to 1000 s) and an overall token bucket
 *    (10 per second, burst 100). Success forgets the key's failures.
 * 4. **Stopping.** Unsubscribing drops queued keys and pending retries at once; running
 *    reconciles may finish within `grace` ms (their results are then ignored), after which their
 *    `signal` aborts and Observable reconciles are unsubscribed. When the `signal` option aborts,
 *    the same keys are dropped, running reconciles' signals abort at once, and the output
 *    completes once they have all settled: a stop whose end can be awaited.
 * 5. **Completing.** When the keys complete, the queue drains: queued keys, running reconciles
 *    and pending retries and requeues all run; the output completes once nothing is left. A key
 *    that always fails, or always asks to requeue, keeps it open.
 * 6. **Observing.** The output emits each outcome (`'reconciled'`, `'failed'`) and, at most once
 *    per scheduler turn in which they changed, the queue's counts (`'queue'`: depth, in flight,
 *    waiting, failing, retries, longest wait).
 *
 * ```
 * keys:    -a-a-b-------|     (one dash = 1 ms) fn(a) fails after 3 ms the first time, then
 * reconcile(fn, { rateLimit: { baseDelay: 4 } })     takes 2 ms; fn(b) takes 1 ms
 * calls:   -A--A-B-A          the a at 3 came while a ran: it runs again as soon as that ends;
 * output:  ----f-rr--r--|     the failure's own retry comes 4 ms after it (f failed, r
 *                             reconciled; 'queue' events left out); completes once drained
 * ```
 *
 * Costs: O(1) per key arriving, taken or done; one scheduler timer per key waiting to retry or
 * requeue; memory for the keys waiting and the failure counts of failing keys.
 *
 * ## Example
 * ```ts
 * import { filter } from 'rxjs';
 * import { changedKeys, reconcile, requeueAfter } from 'rx-informer/workqueue';
 * import type { Deployment, Informer, Snapshot } from 'rx-informer';
 *
 * declare const deploymentInformer: Informer<Deployment>;
 * declare const latest: () => Snapshot<Deployment>;
 * declare function ensureConfigMap(deployment: Deployment, signal: AbortSignal): Promise<boolean>;
 *
 * deploymentInformer.informer$
 *   .pipe(
 *     changedKeys(),
 *     reconcile(
 *       async (key, { signal }) => {
 *         const deployment = latest().get(key);
 *         if (deployment === undefined) return; // gone: nothing to do
 *         const settled = await ensureConfigMap(deployment, signal); // a throw is retried with backoff
 *         return settled ? undefined : requeueAfter(10_000);
 *       },
 *       { concurrency: 4 },
 *     ),
 *     filter((event) => event.type === 'failed'),
 *   )
 *   .subscribe((event) => console.error('reconcile failed', event));
 * ```
 *
 * @param fn reconciles one key; receives the key and a {@link ReconcileContext}.
 * @param options concurrency, retry pacing, grace, scheduler, logger.
 * @returns an operator from keys to {@link ReconcileEvent}s.
 * @throws RangeError when `concurrency` is not a positive integer, `grace` is negative or not
 *   finite, or a rate limit is out of range (checked when the operator is created).
 */
export function reconcile(fn: Reconciler, options: ReconcileOptions = {}): OperatorFunction<string, ReconcileEvent> {
  const concurrency = options.concurrency ?? 1;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError(`concurrency must be a positive integer, got ${concurrency}`);
  const grace = options.grace ?? 2_000;
  if (!Number.isFinite(grace) || grace < 0) throw new RangeError(`grace must be a finite number of ms >= 0, got ${grace}`);
  const timeout = options.timeout ?? Infinity;
  if (!(timeout > 0)) throw new RangeError(`timeout must be a number of ms > 0 (Infinity for none), got ${timeout}`);
  const config = {
    concurrency,
    grace,
    timeout,
    rateLimit: options.rateLimit ?? {},
    scheduler: options.scheduler ?? asyncScheduler,
    logger: options.logger ?? defaultLogger,
    name: options.name ?? 'reconcile',
    metrics: options.metrics,
  };
  // Validate the rate limit now, not at the first subscription.
  new RetryLimiter(config.rateLimit);
  return operate((keys, subscriber) => {
    const workers = new Workers(fn, config, subscriber);
    const { signal } = options;
    if (signal?.aborted === true) return workers.stopAndSettle();
    const upstream = keys.subscribe(
      operatorObserver<string>(subscriber, {
        next: (key) => workers.add(key),
        error: (error) => {
          workers.stop();
          subscriber.error(error);
        },
        complete: () => workers.sourceCompleted(),
      }),
    );
    const settle = (): void => workers.stopAndSettle();
    signal?.addEventListener('abort', settle, { once: true });
    return () => {
      signal?.removeEventListener('abort', settle);
      upstream.unsubscribe();
      workers.stop();
    };
  });
}
