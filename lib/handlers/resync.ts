import { asyncScheduler, interval, type OperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import { longDelays } from '../base/longDelays';
import type { KubeObject } from '../base/object';
import { operate, operatorObserver } from '../base/operate';
import { settledSnapshot } from '../store/indexedSnapshot';
import type { Snapshot } from '../store/snapshot';

/** The shortest resync period: client-go clamps shorter ones to this as well. */
export const MINIMUM_RESYNC_PERIOD_MS = 1000;

/** Configuration of {@link resync}. */
export interface ResyncConfig {
  /**
   * Milliseconds between resyncs. 0 (the default) never resyncs. Positive values below
   * {@link MINIMUM_RESYNC_PERIOD_MS} are raised to it: resyncing re-delivers every cached object,
   * so a short period costs O(n) work that often. Negative or NaN throws a RangeError.
   */
  readonly period?: number;
  /** Where the timer runs. Default `asyncScheduler`; pass a `TestScheduler` in tests. */
  readonly scheduler?: SchedulerLike;
}

/** What {@link resync} emits: every snapshot as it comes, and periodic resyncs of the latest one. */
export type ResyncTick<T extends KubeObject = KubeObject> =
  /** A snapshot from the source: its `changes` are new. */
  | { readonly type: 'snapshot'; readonly snapshot: Snapshot<T> }
  /** The period elapsed: `snapshot` is the latest one again, and nothing in it changed. */
  | { readonly type: 'resync'; readonly snapshot: Snapshot<T> };

/**
 * The resync period to use for a requested one: 0 when disabled, otherwise at least one second.
 *
 * @throws RangeError when `period` is negative or NaN.
 */
export function effectiveResyncPeriod(period: number | undefined): number {
  if (period === undefined || period === 0 || period === Infinity) return 0;
  if (Number.isNaN(period) || period < 0) throw new RangeError(`resync period must be 0 (off) or a positive number of ms, got ${period}`);
  return Math.max(period, MINIMUM_RESYNC_PERIOD_MS);
}

/**
 * Re-delivers the latest snapshot periodically, so that a consumer can re-examine every cached
 * object even when nothing changed (client-go's resync: a safety net for missed side effects).
 *
 * Every source snapshot passes through as a `'snapshot'` tick. Once a synced snapshot has
 * arrived, a timer emits a `'resync'` tick carrying the latest snapshot every `period` ms, until
 * the source completes or errors, or the subscriber leaves. Ticks do not wait for a slow
 * consumer: `handle()` skips a tick that comes while it is still working through the last one.
 *
 * ```
 * source:           -u----s-----a------------------|     (u unsynced, s and a synced)
 * resync({ period: 1s }), with 1s between dashes at the right:
 * output:           -U----S-----A----R----R----R---|     (R = { type: 'resync', snapshot: a })
 *                         ^ timer starts here
 * ```
 *
 * ## Example
 * ```ts
 * import { resync, type Informer, type Pod } from 'rx-informer';
 *
 * declare const podInformer: Informer<Pod>;
 * podInformer.informer$.pipe(resync({ period: 60_000 })).subscribe((tick) => {
 *   if (tick.type === 'resync') console.log('still', tick.snapshot.size, 'objects');
 * });
 * ```
 *
 * @param config the period (default 0: pass snapshots through, never resync) and the scheduler.
 * @returns an operator from snapshots to {@link ResyncTick}s.
 * @throws RangeError when the period is negative or NaN.
 */
export function resync<T extends KubeObject = KubeObject>(config: ResyncConfig = {}): OperatorFunction<Snapshot<T>, ResyncTick<T>> {
  const period = effectiveResyncPeriod(config.period);
  const scheduler = config.scheduler ?? asyncScheduler;
  return operate((source, subscriber) => {
    let latest: Snapshot<T> | undefined;
    let timer: Subscription | undefined;
    const tick = (): void => {
      if (latest !== undefined) subscriber.next({ type: 'resync', snapshot: latest });
    };
    const upstream = source.subscribe(
      operatorObserver<Snapshot<T>>(subscriber, {
        next: (snapshot) => {
          latest = settledSnapshot(snapshot); // a resync re-reads the state, not the changes
          subscriber.next({ type: 'snapshot', snapshot });
          if (period > 0 && timer === undefined && snapshot.synced) {
            // The timer's own failure (a scheduler that cannot schedule) is the subscriber's too.
            // A period past what one Node timer holds (24.8 days) is chained, not cut to 1 ms.
            timer = interval(period, longDelays(scheduler)).subscribe(operatorObserver<number>(subscriber, { next: tick }));
          }
        },
      }),
    );
    return () => {
      upstream.unsubscribe();
      timer?.unsubscribe();
    };
  });
}
