import type { SchedulerLike, Subscription } from 'rxjs';

/**
 * A running idle timer: `touch()` on activity, `stop()` to release it.
 *
 * ## Example
 * ```ts
 * const watchdog: IdleWatchdog = idleWatchdog(asyncScheduler, 1000, onIdle);
 * watchdog.touch();
 * watchdog.stop();
 * ```
 */
export interface IdleWatchdog {
  touch(): void;
  stop(): void;
}

/**
 * Calls `onIdle` once when `touch()` has not been called for `idleMs` on `scheduler`'s clock.
 *
 * Activity comes with every network chunk, so `touch()` only records the time; the single
 * scheduled check, when due, re-arms itself for the time still left instead of being rescheduled
 * on every touch.
 *
 * ## Example
 * ```ts
 * const watchdog = idleWatchdog(asyncScheduler, 30_000, () => subscriber.error(new IdleTimeoutError(30_000)));
 * response.on('data', () => watchdog.touch());
 * // teardown: watchdog.stop();
 * ```
 */
export function idleWatchdog(scheduler: SchedulerLike, idleMs: number, onIdle: () => void): IdleWatchdog {
  let lastActivity = scheduler.now();
  let stopped = false;
  let timer: Subscription | undefined;
  const arm = (delay: number): void => {
    timer = scheduler.schedule(() => {
      if (stopped) return;
      const idleFor = scheduler.now() - lastActivity;
      if (idleFor >= idleMs) {
        stopped = true;
        onIdle();
      } else {
        arm(idleMs - idleFor);
      }
    }, delay);
  };
  arm(idleMs);
  return {
    touch: () => {
      lastActivity = scheduler.now();
    },
    stop: () => {
      stopped = true;
      timer?.unsubscribe();
    },
  };
}
