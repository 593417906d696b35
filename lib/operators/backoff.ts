import { asyncScheduler, defer, retry, throwError, timer } from 'rxjs';
import type { MonoTypeOperatorFunction, SchedulerLike } from 'rxjs';
import { longDelays } from '../base/longDelays';
import { initialBackoffState, nextBackoff, resolveBackoffConfig } from '../reflector/backoff';
import type { BackoffConfig } from '../reflector/backoff';
import { InformerError } from '../base/errors';

/** The Retry-After an error carries, when it is one of ours and the server sent one. */
function retryAfterSecondsOf(error: unknown): number | undefined {
  return error instanceof InformerError ? error.retryAfterSeconds : undefined;
}

/** Options of the {@link backoff} operator. */
export interface BackoffOperatorConfig extends BackoffConfig {
  /** Timers run here. Default `asyncScheduler`. */
  scheduler?: SchedulerLike;
  /** The jitter source, values in [0, 1). Default `Math.random`. */
  random?: () => number;
  /** Errors for which this returns false are passed on instead of retried. Default: retry everything. */
  shouldRetry?: (error: unknown) => boolean;
}

/**
 * Resubscribes to the source after each error, waiting client-go's backoff in between.
 *
 * For a stream that should outlive transient failures: each error waits the next delay of the
 * 800 ms, 1.6 s, 3.2 s … 30 s sequence, each drawn from [d, 2d) as client-go draws them (so from
 * 800–1600 ms first and 30–60 s at the cap), or the error's `retryAfterSeconds` when that is
 * longer, then subscribes again. The sequence starts over once a retry has run for `resetAfterMs`
 * without failing. Each subscription keeps its own sequence. `reflect` has its own retry logic
 * (what to retry depends on the error); this operator is for simpler streams around it.
 *
 * ```
 * source (1st):   --a--#
 * source (2nd):            --b--#               (after 800 ms; random 0)
 * source (3rd):                       --c--     (after 1600 ms)
 * backoff():      --a-- 800ms --b-- 1600ms --c--
 * ```
 *
 * 1. Values and completion pass through untouched.
 * 2. An error for which `shouldRetry` says false is passed on; any other is swallowed and retried.
 * 3. Unsubscribing cancels the pending wait.
 *
 * ## Example
 * ```ts
 * import { defer } from 'rxjs';
 * import { backoff } from 'rx-informer';
 *
 * declare function fetchVersion(): Promise<string>;
 * const version$ = defer(() => fetchVersion()).pipe(backoff({ maxMs: 10_000 }));
 * version$.subscribe((version) => console.log(version));
 * ```
 *
 * @param config Delays (default: 800 ms doubling to a 30 s cap, each wait in [d, 2d), reset after 2 min without a failure), scheduler, jitter source and retry filter.
 * @returns An operator that retries forever (or until `shouldRetry` says no).
 * @throws RangeError at call time when the config is invalid.
 */
export function backoff<T>(config: BackoffOperatorConfig = {}): MonoTypeOperatorFunction<T> {
  const resolved = resolveBackoffConfig(pickBackoffConfig(config));
  const scheduler = config.scheduler ?? asyncScheduler;
  // maxMs may be past what one Node timer holds: waits are chained.
  const timers = longDelays(scheduler);
  const random = config.random ?? Math.random;
  const shouldRetry = config.shouldRetry ?? (() => true);
  return (source) =>
    defer(() => {
      let state = initialBackoffState;
      return source.pipe(
        retry({
          delay: (error: unknown) => {
            if (!shouldRetry(error)) return throwError(() => error);
            const failure = { now: timers.now(), random: random(), retryAfterSeconds: retryAfterSecondsOf(error) };
            const next = nextBackoff(state, failure, resolved);
            state = next.state;
            return timer(next.delayMs, timers);
          },
        }),
      );
    });
}

function pickBackoffConfig(config: BackoffOperatorConfig): BackoffConfig {
  const { initialMs, maxMs, factor, resetAfterMs, jitter } = config;
  return { initialMs, maxMs, factor, resetAfterMs, jitter };
}

