import type { SchedulerAction, SchedulerLike, Subscription } from 'rxjs';

/**
 * Node's timers in virtual time. `setTimeout` and `setInterval` (which RxJS's `asyncScheduler`
 * uses) hold at most 2^31 − 1 ms; a longer delay is set to 1 ms, with a `TimeoutOverflowWarning`.
 * A virtual-time scheduler has no such limit, so a spec that runs code on one would never see a
 * long delay fire early; this one has Node's limit.
 */

/** The longest delay Node's timers hold, ms. */
export const NODE_TIMER_LIMIT_MS = 2 ** 31 - 1;

/** A scheduler with Node's timer limit, and the delays it cut short. */
export interface NodeTimers extends SchedulerLike {
  /** Every delay asked for that Node would have fired after 1 ms instead. */
  readonly overflowed: number[];
}

/**
 * `base` (a virtual-time scheduler) with Node's timer limit: a delay above 2^31 − 1 ms waits
 * 1 ms instead and is recorded in `overflowed`, rescheduled actions (`this.schedule`, how
 * `interval()` repeats) included.
 */
export function nodeTimers(base: SchedulerLike): NodeTimers {
  const overflowed: number[] = [];
  const held = (delay: number | undefined): number => {
    const asked = delay ?? 0;
    if (asked <= NODE_TIMER_LIMIT_MS) return asked;
    overflowed.push(asked);
    return 1;
  };
  return {
    overflowed,
    now: () => base.now(),
    schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay?: number, state?: T): Subscription {
      return base.schedule<T>(
        function (this: SchedulerAction<T>, current?: T) {
          const action = this;
          const view = Object.create(action) as SchedulerAction<T>;
          view.schedule = (next?: T, nextDelay?: number) => action.schedule(next, held(nextDelay));
          work.call(view, current);
        },
        held(delay),
        state,
      );
    },
  };
}
