import { asyncScheduler, Subscription, type SchedulerLike } from 'rxjs';

/** Notifications delivered in one turn before yielding to the event loop. */
export const BATCH_LIMIT = 500;
/** Milliseconds of handler work in one turn before yielding to the event loop. */
export const BATCH_BUDGET_MS = 10;

/** What a {@link DeliveryLoop} delivers and to whom: one handler subscription. */
export interface DeliveryTarget<N> {
  /** The next notification, or undefined when there is none for now. */
  next(): N | undefined;
  /** Calls the handler; a PromiseLike result holds the next call until it settles. */
  call(notification: N): unknown;
  /** The Promise a call returned rejected. */
  rejected(error: unknown, notification: N): void;
  /** A call returned, or the Promise it returned settled. */
  delivered(): void;
  /** There is nothing to deliver for now; `wake` starts again. */
  idle(): void;
  /**
   * The loop's own work threw (not a handler: `call` reports what a handler throws): the loop has
   * stopped for good, and the error is the subscription's.
   */
  failed(error: unknown): void;
}

/**
 * Calls one handler, one notification at a time, in turns on a scheduler: a turn ends when
 * nothing is left, when a call returns a Promise (the next call waits for it; other handlers never
 * do), or after {@link BATCH_LIMIT} calls or about {@link BATCH_BUDGET_MS} of work, so that a long
 * initial list never stalls the event loop.
 */
export class DeliveryLoop<N> {
  /** A turn is scheduled, running, or waiting for a handler's Promise. */
  private busy = false;
  private scheduled: Subscription | undefined;
  private closed = false;
  /**
   * The turn, as a callback made once: a method that creates an arrow function referring to
   * `this` allocates a context on every call, even when it returns early, and `wake` runs once
   * per handler and snapshot.
   */
  private readonly runTurn = (): void => this.turn();

  constructor(
    private readonly scheduler: SchedulerLike,
    private readonly target: DeliveryTarget<N>,
  ) {}

  /** Schedules a turn unless one is scheduled, running or waiting. */
  wake(): void {
    if (this.busy || this.closed) return;
    this.busy = true;
    this.scheduled = scheduleTurn(this.scheduler, this.runTurn);
  }

  /** Stops for good: no call after this one returns. */
  close(): void {
    this.closed = true;
    this.scheduled?.unsubscribe();
  }

  /**
   * A turn runs on the scheduler (or after a handler's Promise), outside any subscriber's call
   * stack: what it throws would reach nobody, so it fails the target instead.
   */
  private turn(): void {
    try {
      this.deliver();
    } catch (error: unknown) {
      this.fail(error);
    }
  }

  private deliver(): void {
    const start = this.scheduler.now();
    // Reading the clock costs about as much as a fast handler call, so it is read after 1, 2, 4 and
    // then every 8 calls while the turn has taken under a millisecond, and after every call once it has.
    let stride = 1;
    let nextClockRead = 0;
    for (let delivered = 0; !this.closed; delivered++) {
      if (delivered >= BATCH_LIMIT) return this.yieldTurn();
      if (delivered === nextClockRead) {
        const elapsed = this.scheduler.now() - start;
        if (elapsed >= BATCH_BUDGET_MS) return this.yieldTurn();
        stride = elapsed < 1 ? Math.min(stride * 2, 8) : 1;
        nextClockRead = delivered + stride;
      }
      const notification = this.target.next();
      if (notification === undefined) {
        this.busy = false;
        this.target.idle();
        return;
      }
      const result = this.target.call(notification);
      if (isPromiseLike(result)) return this.await(result, notification);
      this.target.delivered();
    }
  }

  /** Holds the next call until the Promise a call returned settles. */
  private await(result: PromiseLike<unknown>, notification: N): void {
    result.then(
      () => this.resume(undefined),
      (error: unknown) => this.resume(() => this.target.rejected(error, notification)),
    );
  }

  private yieldTurn(): void {
    this.scheduled = scheduleTurn(this.scheduler, this.runTurn);
  }

  /** After a handler's Promise settled: reports a rejection, counts the call delivered, goes on. */
  private resume(reportRejection: (() => void) | undefined): void {
    if (this.closed) return;
    try {
      reportRejection?.();
      this.target.delivered();
    } catch (error: unknown) {
      return this.fail(error);
    }
    this.turn();
  }

  private fail(error: unknown): void {
    this.close();
    this.target.failed(error);
  }
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/**
 * Schedules a delivery turn. On the real clock it uses `setImmediate`: a turn still yields to I/O
 * and timers, but without `asyncScheduler`'s timer floor of at least 1 ms per turn, which was most
 * of a handler's latency (docs/performance-notes.md, "Per-event choices in the code").
 * Any other scheduler, and `asyncScheduler` inside `TestScheduler.run` (whose clock then reads
 * virtual frames, not the wall clock), is used as given so virtual-time tests keep their order.
 */
function scheduleTurn(scheduler: SchedulerLike, work: () => void): Subscription {
  if (scheduler !== asyncScheduler || Math.abs(scheduler.now() - Date.now()) > 60_000) return scheduler.schedule(work);
  const immediate = setImmediate(work);
  return new Subscription(() => clearImmediate(immediate));
}
