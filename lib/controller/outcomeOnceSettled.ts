import { isObservable, type Observable, type Subscription } from 'rxjs';
import type { ReconcileOutcome } from '../workqueue/reconcileResult';

/** What a reconciler, or a handler of `finalizer`, may return. */
export type ReconcilerOutput = ReconcileOutcome | PromiseLike<ReconcileOutcome> | Observable<ReconcileOutcome>;

/**
 * A reconciler's output as a Promise that settles only once nothing of it runs any more, for
 * code that runs more work around it and returns a Promise of the whole (the work queue waits for
 * a Promise at a stop, but only unsubscribes an Observable, whose teardown cannot be waited for):
 *
 * - a value resolves at once;
 * - a Promise (or any thenable) is followed to its end, even after `signal` aborts: it alone
 *   knows when its work is done, as the work queue treats a Promise reconcile;
 * - an Observable resolves with its last value (undefined when it gives none) and rejects with its
 *   error; when `signal` aborts it is unsubscribed and the Promise rejects with the signal's
 *   reason, as the work queue unsubscribes an abandoned Observable reconcile. When `signal` has
 *   aborted already, it is not subscribed.
 */
export function outcomeOnceSettled(output: ReconcilerOutput, signal: AbortSignal): Promise<ReconcileOutcome> {
  if (!isObservable(output)) return Promise.resolve(output);
  return new Promise<ReconcileOutcome>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    let last: ReconcileOutcome;
    let done = false;
    let subscription: Subscription | undefined;
    const finish = (settle: () => void): void => {
      if (done) return;
      done = true;
      signal.removeEventListener('abort', onAbort);
      settle();
    };
    const onAbort = (): void => {
      subscription?.unsubscribe();
      finish(() => reject(signal.reason));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    subscription = output.subscribe({
      next: (value) => (last = value),
      error: (error: unknown) => finish(() => reject(error)),
      complete: () => finish(() => resolve(last)),
    });
    // An Observable that ended while being subscribed leaves nothing to tear down later.
    if (done) subscription.unsubscribe();
  });
}
