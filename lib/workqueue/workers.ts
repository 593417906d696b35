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

/**
 * A key's failures in a row are logged at debug until this many, then at warn: one failure, or
 * a few (a conflict with another writer), is a retry doing its job; a key still failing at its
 * fifth attempt (about 75 ms of backoff at the default 5 ms doubling, more with slow reconciles)
 * is a problem someone should see. The retry delay doubles, so a key that keeps failing is
 * logged ever more rarely (at the 1000 s cap, once a quarter of an hour). A timeout is always a
 * warning: the reconcile hung for the whole of it.
 */
export const FAILURES_BEFORE_WARNING = 5;

/** What a reconcile function receives besides the key. */
export interface ReconcileContext {
  /** The key being reconciled (`namespace/name`, or whatever the source emitted). */
  readonly key: string;
  /** Failures of this key since it last succeeded: 0 on a first attempt (client-go's `NumRequeues`). */
  readonly failures: number;
  /**
   * Aborts when this reconcile is abandoned: it ran past `timeout` (the reason is a
   * `TimeoutError`, as `AbortSignal.timeout()` gives), the subscription ended and `grace` ran out
   * before it finished, or the queue's own `signal` aborted (then it is awaited). Pass it to your
   * requests; whatever the reconcile returns afterwards is ignored.
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
  /**
   * A reconcile threw, rejected or errored, or ran past `timeout` (`error` is then a
   * `TimeoutError` DOMException); it runs again after `retryIn` ms (`failures` so far).
   */
  | { readonly type: 'failed'; readonly key: string; readonly error: unknown; readonly failures: number; readonly retryIn: number }
  /** The queue's counts after a change, at most once per scheduler turn. */
  | ({ readonly type: 'queue' } & QueueStats);

/** Settings of one {@link Workers} instance, resolved. */
export interface WorkersConfig {
  readonly concurrency: number;
  readonly grace: number;
  /** ms a reconcile may run before it is abandoned and retried; Infinity for no limit. */
  readonly timeout: number;
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
  /** The `timeout` timer, while it runs. */
  deadline: Subscription | undefined;
  /** It ran past `timeout`: abandoned, but (a Promise deaf to its signal) still holding its key. */
  overdue = false;

  constructor(
    readonly key: string,
    readonly failures: number,
    readonly started: number,
  ) {}

  get signal(): AbortSignal {
    this.abort ??= new AbortController();
    return this.abort.signal;
  }

  /** Aborts the signal, made now if the reconcile has not read it yet (it may read it later). */
  abandon(reason: unknown): void {
    this.abort ??= new AbortController();
    this.abort.abort(reason);
  }
}

/** The queue, the retry limiter and the running reconciles of one `reconcile` subscription. */
export class Workers {
  private readonly queue: KeyQueue;
  private readonly limiter: RetryLimiter;
  private readonly running = new Map<string, Running>();
  /** Running entries that are overdue: they hold their keys but no longer a worker. */
  private overdue = 0;
  /** The `timeout` and `grace` timers: any length, even past what one Node timer holds. */
  private readonly timers: SchedulerLike;
  private retries = 0;
  private statsPending: Subscription | undefined;
  private graceTimer: Subscription | undefined;
  private stopped = false;
  /** Set by {@link stopAndSettle}: complete once the last running reconcile has settled. */
  private completeWhenSettled = false;
  private sourceDone = false;
  private pumping = false;
  private pumpAgain = false;

  constructor(
    private readonly reconciler: Reconciler,
    private readonly config: WorkersConfig,
    private readonly subscriber: Subscriber<ReconcileEvent>,
  ) {
    this.limiter = new RetryLimiter(config.rateLimit);
    this.timers = longDelays(config.scheduler);
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
    // After the stop, `grace` alone bounds the running reconciles: no timeout timer outlives it.
    for (const entry of this.running.values()) entry.deadline?.unsubscribe();
    if (this.running.size === 0) return;
    if (this.config.grace <= 0) this.abandonRunning();
    else this.graceTimer = this.timers.schedule(() => this.abandonRunning(), this.config.grace);
  }

  /**
   * Stops as {@link stop} does, without `grace`: running reconciles' signals abort now, Observable
   * ones are unsubscribed (that settles them), and the output completes once the last Promise has
   * settled. Nothing, if already stopped.
   */
  stopAndSettle(): void {
    if (this.stopped) return;
    this.stop();
    this.completeWhenSettled = true;
    this.graceTimer?.unsubscribe();
    for (const entry of [...this.running.values()]) {
      entry.abort ??= new AbortController();
      entry.abort.abort(new Error('the reconcile was stopped: the signal of its queue aborted'));
      if (entry.subscription === undefined) continue;
      this.running.delete(entry.key);
      entry.subscription.unsubscribe();
    }
    if (this.running.size === 0) this.subscriber.complete();
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
        // An overdue reconcile keeps its key but gives its worker back.
        while (!this.stopped && this.running.size - this.overdue < this.config.concurrency) {
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
    if (this.config.timeout !== Infinity && this.running.get(key) === entry) {
      entry.deadline = this.timers.schedule(() => this.timeOut(key, entry), this.config.timeout);
    }
  }

  /**
   * A reconcile ran past `timeout`: it fails (a retry with backoff, as any failure) and gives its
   * worker back at once; its signal aborts and an Observable one is unsubscribed. A Promise cannot
   * be stopped: until it settles its key stays taken, so the retry, or a change that arrives
   * meanwhile, runs after it and never beside it.
   */
  private timeOut(key: string, entry: Running): void {
    entry.deadline = undefined;
    if (this.stopped || this.running.get(key) !== entry) return;
    entry.overdue = true;
    this.overdue += 1;
    const reason = new DOMException(`the reconcile of ${key} ran past its timeout of ${this.config.timeout} ms`, 'TimeoutError');
    this.fail(key, entry, reason, 'timedOut', this.config.scheduler.now());
    entry.abandon(reason);
    const subscription = entry.subscription;
    entry.subscription = undefined;
    if (subscription !== undefined) {
      subscription.unsubscribe();
      this.releaseOverdue(key, entry);
    }
    if (!this.stopped) this.pump();
  }

  /** An overdue reconcile ended (settled, or was unsubscribed): its key is free again. */
  private releaseOverdue(key: string, entry: Running): void {
    if (this.running.get(key) !== entry) return;
    this.running.delete(key);
    this.overdue -= 1;
    if (this.stopped) {
      if (this.running.size === 0) this.graceTimer?.unsubscribe();
      return;
    }
    this.queue.done(key);
    this.pump();
  }

  private settle(key: string, entry: Running, outcome: { readonly value: unknown } | { readonly error: unknown }): void {
    // An abandoned reconcile (or one that settles twice) changes nothing.
    if (this.running.get(key) !== entry) return;
    entry.deadline?.unsubscribe();
    // An overdue one failed at its timeout: what it returns now is ignored, its key is freed.
    if (entry.overdue) return this.releaseOverdue(key, entry);
    this.running.delete(key);
    if (this.stopped) {
      if (this.running.size > 0) return;
      this.graceTimer?.unsubscribe();
      if (this.completeWhenSettled) this.subscriber.complete();
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
      this.fail(key, entry, failure.error, 'failed', now);
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

  /** controller-runtime's reconcileHandler: an error (or a timeout) is a rate-limited requeue. */
  private fail(key: string, entry: Running, error: unknown, outcome: 'failed' | 'timedOut', now: number): void {
    this.measure({ type: 'finished', key, seconds: (now - entry.started) / 1000, outcome, at: now });
    const retryIn = this.limiter.whenFailed(key, now);
    const failures = this.limiter.failures(key);
    this.retries += 1;
    this.queue.addAfter(key, retryIn);
    const message = outcome === 'timedOut' ? 'reconcile timed out; retrying' : 'reconcile failed; retrying';
    const level = outcome === 'timedOut' || failures >= FAILURES_BEFORE_WARNING ? 'warn' : 'debug';
    this.config.logger[level]({ reconciler: this.config.name, key, failures, retryIn, error: messageOf(error) }, message);
    this.subscriber.next({ type: 'failed', key, error, failures, retryIn });
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
