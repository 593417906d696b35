import type { OperatorFunction, SchedulerLike, Subscription } from 'rxjs';
import type { KubeObject } from '../base/object';
import { operate, operatorObserver } from '../base/operate';
import type { Delta } from '../reflector/delta';
import type { DeltaBatch, WatchDelta } from './reduceDeltas';

/**
 * Groups the delta stream into what one step of the store's reducer receives: each Replace page
 * alone, and the watch deltas that arrive together as one batch.
 *
 * ```
 * deltas:        -R--(ab)---c---(def)-|     (ab): a and b arrive in one task
 * deltaBatches:  -R--x------y---(zw)--|     x = [a, b], y = [c]; with maxDeltas 2, z = [d, e] and w = [f]
 * ```
 *
 * 1. A watch delta opens a batch (or joins the open one) and schedules its close with an action of
 *    0 ms on `scheduler`: the deltas of one task (one network chunk) make one batch.
 * 2. A batch also closes at `maxDeltas` deltas, before a Replace page, and when the deltas complete
 *    or fail (so nothing received is held back).
 * 3. A Replace page is emitted alone, at once.
 *
 * @param scheduler closes each batch with an action of 0 ms.
 * @param maxDeltas the most deltas in one batch (at least 1).
 * @returns an operator from deltas to batches; unsubscribing cancels the pending close.
 */
export function deltaBatches<T extends KubeObject>(scheduler: SchedulerLike, maxDeltas: number): OperatorFunction<Delta<T>, DeltaBatch<T>> {
  return operate((source, subscriber) => {
    let batch: WatchDelta<T>[] = [];
    let closing: Subscription | undefined;
    const close = (): void => {
      closing?.unsubscribe();
      closing = undefined;
      if (batch.length === 0) return;
      const closed = batch;
      batch = [];
      subscriber.next(closed);
    };
    const upstream = source.subscribe(
      operatorObserver<Delta<T>>(subscriber, {
        next: (delta) => {
          if (delta.type === 'Replace') {
            close();
            subscriber.next(delta);
            return;
          }
          batch.push(delta);
          if (batch.length >= maxDeltas) close();
          else closing ??= scheduler.schedule(close);
        },
        error: (error) => {
          close();
          subscriber.error(error);
        },
        complete: () => {
          close();
          subscriber.complete();
        },
      }),
    );
    return () => {
      upstream.unsubscribe();
      closing?.unsubscribe();
    };
  });
}
