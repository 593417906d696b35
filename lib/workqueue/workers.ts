import { isObservable, type Observable, type SchedulerLike, type Subscriber, type Subscription } from 'rxjs';
import type { Logger } from '../base/logger';
import { longDelays } from '../base/longDelays';
import { KeyQueue, type KeyQueueObserver } from './keyQueue';
import type { WorkqueueMetricEvent, WorkqueueMetricsSink } from './workqueueMetrics';
import { RetryLimiter, type RetryRateLimit } from './rateLimiter';
import { requeueDelayOf, type ReconcileOutcome } from './reconcileResult';

/**
 * The running side of {@link reconcile}: up to `concurrency` reconciles over a {@link KeyQueue},
 * their outcomes turned into retries and requeues, the queue's counts published, and a stop that
 * lets running reconciles finish within a grace. One instance per subscription.
 */

/** What a reconcile function receives besides the key. */
export interface ReconcileContext {
  /** The key being reconciled (`namespace/name`, or whatever the source emitted). */
  readonly key: string;
  /** Failures of this key since it last succeeded: 0 on a first attempt (client-go's `NumRequeues`). */
  readonly failures: number;
  /**
   * Aborts when this reconcile is abandoned: the subscription ended and `grace` ran out before it
   * finished. Pass it to your requests; whatever the reconcile returns afterwards is ignored.
   */
  readonly signal: AbortSignal;
}

/** A reconcile function: makes the world match the desired state of one key. */
export type Reconciler = (key: string, context: ReconcileContext) => ReconcileOutcome | PromiseLike<ReconcileOutcome> | Observable<ReconcileOutcome>;

/** The queue's counts, as {@link reconcile} publishes them in `'queue'` events. */
export interface QueueStats {
  /** Keys waiting for a worker, counting one that changed while it is reconciled (client-go's depth). */
  readonly depth: number;
  /** Reconciles running. */
  readonly inFlight: number;
  /** Keys waiting for a timer: a retry after a failure, or a `requeueAfter`. */
  readonly waiting: number;
  /** Keys whose last reconcile failed. */
  readonly failing: number;
  /** Retries scheduled since the subscription started (one per failure). */
  readonly retries: number;
  /** How long (ms) the key at the head of the queue has waited for a worker; 0 when none waits. */
  readonly longestWait: number;
}

/** What {@link reconcile} emits: each outcome, and the queue's counts whenever they change. */
export type ReconcileEvent =
  /** A reconcile succeeded; `requeueAfter` is set when it asked to run again after that many ms. */
  | { readonly type: 'reconciled'; readonly key: string; readonly duration: number; readonly requeueAfter: number | undefined }
  /** A reconcile threw, rejected or errored; it runs again after `retryIn` ms (`failures` so far). */
  | { readonly type: 'failed'; readonly key: string; readonly error: unknown; readonly failures: number; readonly retryIn: number }
  /** The queue's counts after a change, at most once per scheduler turn. */
  | ({ readonly type: 'queue' } & QueueStats);

/** Settings of one {@link Workers} instance, resolved. */
export interface WorkersConfig {
  readonly concurrency: number;
  readonly grace: number;
  readonly rateLimit: RetryRateLimit;
  readonly scheduler: SchedulerLike;
  readonly logger: Logger;
  readonly name: string;
  readonly metrics: WorkqueueMetricsSink | undefined;
}

/** One running reconcile: its bookkeeping, and the context its function receives. */
class Running implements ReconcileContext {
  /** Made on first use of `signal`: most reconciles never read it. */
  abort: AbortController | undefined;
  subscription: Subscription | undefined;

  constructor(
    readonly key: string,
    readonly failures: number,
    readonly started: number,
  ) {}

  get signal(): AbortSignal {
    this.abort ??= new AbortController();
    return this.abort.signal;
  }
}

/** The queue, the retry limiter and the running reconciles of one `reconcile` subscription. */
export class Workers {
  private readonly queue: KeyQueue;
  private readonly limiter: RetryLimiter;
  private readonly running = new Map<string, Running>();
  private retries = 0;
  private statsPending: Subscription | undefined;
  private graceTimer: Subscription | undefined;
  private stopped = false;
  private sourceDone = false;
  private pumping = false;
  private pumpAgain = false;

  constructor(
    private readonly reconciler: Reconciler,
    private readonly config: WorkersConfig,
    private readonly subscriber: Subscriber<ReconcileEvent>,
  ) {
    this.limiter = new RetryLimiter(config.rateLimit);
    this.queue = new KeyQueue(
      config.scheduler,
      () => this.statsChanged(),
      () => this.pump(),
      config.metrics === undefined ? undefined : this.queueObserver(),
    );
  }

  /** A key arrived from the source. */
  add(key: string): void {
    if (this.stopped) return;
    this.queue.add(key);
    this.pump();
  }

  /** The source completed: finish what is queued, running or due to retry, then complete. */
  sourceCompleted(): void {
    this.sourceDone = true;
    this.completeIfIdle();
  }

  /**
   * Stops taking work: queued keys and pending retries are dropped at once; running reconciles
   * may finish for `grace` ms, after which their signals abort and Observable ones are
   * unsubscribed. Idempotent.
   */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.measure({ type: 'stopped' });
    this.statsPending?.unsubscribe();
    this.queue.clear();
    if (this.running.size === 0) return;
    if (this.config.grace <= 0) this.abandonRunning();
    else this.graceTimer = longDelays(this.config.scheduler).schedule(() => this.abandonRunning(), this.config.grace);
  }

  private pump(): void {
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.pumpAgain = false;
        while (!this.stopped && this.queue.inFlight < this.config.concurrency) {
          const key = this.queue.take();
          if (key === undefined) break;
          this.start(key);
        }
      } while (this.pumpAgain && !this.stopped);
    } finally {
      this.pumping = false;
    }
    this.completeIfIdle();
  }

  private start(key: string): void {
    const entry = new Running(key, this.limiter.failures(key), this.config.scheduler.now());
    this.running.set(key, entry);
    let output: ReturnType<Reconciler>;
    try {
      output = this.reconciler(key, entry);
    } catch (error) {
      return this.settle(key, entry, { error });
    }
    if (isObservable(output)) {
      let last: ReconcileOutcome;
      const subscription = output.subscribe({
        next: (value) => (last = value),
        error: (error: unknown) => this.settle(key, entry, { error }),
        complete: () => this.settle(key, entry, { value: last }),
      });
      // A synchronous Observable has settled already; only a running one needs its subscription kept.
      if (this.running.get(key) === entry) entry.subscription = subscription;
    } else if (isPromiseLike(output)) {
      output.then(
        (value) => this.settle(key, entry, { value }),
        (error: unknown) => this.settle(key, entry, { error }),
      );
    } else {
      this.settle(key, entry, { value: output });
    }
  }

  private settle(key: string, entry: Running, outcome: { readonly value: unknown } | { readonly error: unknown }): void {
    // An abandoned reconcile (or one that settles twice) changes nothing.
    if (this.running.get(key) !== entry) return;
    this.running.delete(key);
    if (this.stopped) {
      if (this.running.size === 0) this.graceTimer?.unsubscribe();
      return;
    }
    const now = this.config.scheduler.now();
    let requeue: number | undefined;
    let failure: { readonly error: unknown } | undefined = 'error' in outcome ? outcome : undefined;
    if (failure === undefined) {
      try {
        requeue = requeueDelayOf((outcome as { readonly value: unknown }).value);
      } catch (error) {
        failure = { error };
      }
    }
    if (failure !== undefined) {
      // controller-runtime's reconcileHandler: an error is a rate-limited requeue.
      this.measure({ type: 'finished', key, seconds: (now - entry.started) / 1000, outcome: 'failed', at: now });
      const retryIn = this.limiter.whenFailed(key, now);
      const failures = this.limiter.failures(key);
      this.retries += 1;
      this.queue.addAfter(key, retryIn);
      this.config.logger.warn({ reconciler: this.config.name, key, failures, retryIn, error: messageOf(failure.error) }, 'reconcile failed; retrying');
      this.subscriber.next({ type: 'failed', key, error: failure.error, failures, retryIn });
    } else {
      // Success forgets the key's failures; a requeue is a plain delayed add.
      this.limiter.forget(key);
      this.measure({ type: 'finished', key, seconds: (now - entry.started) / 1000, outcome: 'reconciled', at: now });
      if (requeue !== undefined) this.queue.addAfter(key, requeue);
      this.subscriber.next({ type: 'reconciled', key, duration: now - entry.started, requeueAfter: requeue });
    }
    if (this.stopped) return;
    this.queue.done(key);
    this.pump();
  }

  private queueObserver(): KeyQueueObserver {
    return {
      added: (key) => this.measure({ type: 'added', key, depth: this.queue.depth }),
      taken: (key, waitedMs) => this.measure({ type: 'started', key, waitedSeconds: waitedMs / 1000, depth: this.queue.depth, at: this.config.scheduler.now() }),
    };
  }

  /** Hands a measurement to the `metrics` sink, if any; a throwing sink is logged, not fatal. */
  private measure(event: WorkqueueMetricEvent): void {
    if (this.config.metrics === undefined) return;
    try {
      this.config.metrics(event);
    } catch (error) {
      this.config.logger.error({ reconciler: this.config.name, error: messageOf(error) }, 'the metrics sink threw');
    }
  }

  private abandonRunning(): void {
    const abandoned = [...this.running.values()];
    this.running.clear();
    for (const entry of abandoned) {
      entry.abort?.abort(new Error('the reconcile was abandoned: its subscription ended and the grace period ran out'));
      entry.subscription?.unsubscribe();
    }
  }

  private completeIfIdle(): void {
    if (this.sourceDone && !this.stopped && this.queue.idle) {
      this.publishStats();
      this.subscriber.complete();
    }
  }

  private statsChanged(): void {
    if (this.stopped || this.statsPending !== undefined) return;
    this.statsPending = this.config.scheduler.schedule(() => this.publishStats());
  }

  private publishStats(): void {
    this.statsPending?.unsubscribe();
    this.statsPending = undefined;
    if (this.stopped) return;
    const now = this.config.scheduler.now();
    this.subscriber.next({
      type: 'queue',
      depth: this.queue.depth,
      inFlight: this.queue.inFlight,
      waiting: this.queue.waiting,
      failing: this.limiter.failingKeys,
      retries: this.retries,
      longestWait: this.queue.longestWait(now),
    });
  }
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
