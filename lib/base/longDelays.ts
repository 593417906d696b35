import { Subscription, type SchedulerAction, type SchedulerLike } from 'rxjs';

/**
 * Timers that honour any delay. Node's `setTimeout` and `setInterval` (under RxJS's
 * `asyncScheduler`) hold at most 2^31 − 1 ms, about 24.8 days; a longer delay fires after 1 ms
 * with a `TimeoutOverflowWarning`, so a 30-day requeue, or a retry capped at 1000 h, would run at
 * once and then again and again. Every timer in lib/ whose delay a user or a rate limiter chooses
 * runs on {@link longDelays}, which waits such a delay as a chain of shorter timers.
 */

/** The longest delay a Node timer holds, ms; a longer one fires after 1 ms instead. */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * `scheduler` with no limit on delays: a delay above `chunkMs` (default {@link MAX_TIMER_MS})
 * waits in steps of at most `chunkMs`, each step measuring what is left on the scheduler's own
 * clock, so it ends when `now() + delay` is reached, in virtual time as in real time. Delays up to
 * `chunkMs` are one timer, as before; an action that reschedules itself (`this.schedule(state,
 * delay)`, how `interval()` repeats) is chained the same way. Unsubscribing cancels whichever
 * step is pending. `Infinity` never fires.
 *
 * Costs one more object per timer; use it for timers whose delay can be long, not per event.
 *
 * @param chunkMs the longest single timer; smaller only in tests. Must be > 0.
 * @internal
 */
export function longDelays(scheduler: SchedulerLike, chunkMs: number = MAX_TIMER_MS): SchedulerLike {
  if (scheduler instanceof LongDelayScheduler && scheduler.chunkMs <= chunkMs) return scheduler;
  if (!(chunkMs > 0)) throw new RangeError(`a timer chunk must be > 0 ms, got ${chunkMs}`);
  return new LongDelayScheduler(scheduler, chunkMs);
}

class LongDelayScheduler implements SchedulerLike {
  constructor(
    readonly inner: SchedulerLike,
    readonly chunkMs: number,
  ) {}

  now(): number {
    return this.inner.now();
  }

  schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay?: number, state?: T): Subscription {
    return new ChainedAction<T>(this.inner, this.chunkMs, work).schedule(state, delay);
  }
}

/** One action on a {@link LongDelayScheduler}: the pending step of its chain, replaced as it goes. */
class ChainedAction<T> extends Subscription implements SchedulerAction<T> {
  private step: Subscription | undefined;

  constructor(
    private readonly inner: SchedulerLike,
    private readonly chunkMs: number,
    private readonly work: (this: SchedulerAction<T>, state?: T) => void,
  ) {
    super();
  }

  override unsubscribe(): void {
    this.step?.unsubscribe();
    this.step = undefined;
    super.unsubscribe();
  }

  schedule(state?: T, delay = 0): Subscription {
    if (this.closed) return this;
    this.step?.unsubscribe();
    // A delay within one timer goes to the scheduler as asked, so short timers behave as before.
    if (!(delay > this.chunkMs)) this.step = this.inner.schedule(() => this.run(state), delay);
    else this.stepTowards(state, this.inner.now() + delay);
    return this;
  }

  private stepTowards(state: T | undefined, dueAt: number): void {
    const left = dueAt - this.inner.now();
    this.step = left > this.chunkMs ? this.inner.schedule(() => this.stepTowards(state, dueAt), this.chunkMs) : this.inner.schedule(() => this.run(state), Math.max(0, left));
  }

  private run(state: T | undefined): void {
    this.step = undefined;
    this.work.call(this, state);
  }
}
