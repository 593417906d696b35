import type { SchedulerAction, SchedulerLike, Subscription } from 'rxjs';

/**
 * A scheduler whose clock is another's, offset and running at another rate: each process in a
 * distributed test gets its own clock, as machines do. Timers are scaled with the clock: a timer
 * of `d` ms on a clock with rate 2 fires after `d / 2` ms of the base clock.
 */

/** How a {@link skewedScheduler}'s clock differs from its base. */
export interface ClockSkew {
  /** Added to the base clock, ms. Default 0. */
  readonly offset?: number;
  /** How fast this clock runs against the base: 1.1 gains 10 %. Default 1. */
  readonly rate?: number;
}

/**
 * `base` seen through a skewed clock: `now()` is `offset + rate × base.now()`, and a delay of `d`
 * waits `d / rate` on `base`, rescheduled actions included.
 *
 * ## Example
 * ```ts
 * import { TestScheduler } from 'rxjs/testing';
 * import { skewedScheduler } from 'rx-informer/testing';
 *
 * const base = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
 * const fast = skewedScheduler(base, { offset: 5_000, rate: 1.5 }); // 5 s ahead, 50 % fast
 * ```
 *
 * @throws RangeError when `rate` is not a finite number > 0.
 */
export function skewedScheduler(base: SchedulerLike, skew: ClockSkew = {}): SchedulerLike {
  const offset = skew.offset ?? 0;
  const rate = skew.rate ?? 1;
  if (!Number.isFinite(rate) || rate <= 0) throw new RangeError(`a clock rate must be a finite number > 0, got ${rate}`);
  const scaled = (delay: number | undefined): number => (delay ?? 0) / rate;
  const skewed: SchedulerLike = {
    now: () => offset + rate * base.now(),
    schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay?: number, state?: T): Subscription {
      return base.schedule<T>(
        function (this: SchedulerAction<T>, current?: T) {
          // `this.schedule(state, delay)` (how interval() repeats) must wait skewed time too.
          const action = this;
          const view = Object.create(action) as SchedulerAction<T>;
          view.schedule = (next?: T, nextDelay?: number) => action.schedule(next, scaled(nextDelay));
          work.call(view, current);
        },
        scaled(delay),
        state,
      );
    },
  };
  return skewed;
}
