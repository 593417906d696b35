/** What a reconcile function tells {@link reconcile} besides success or failure. */

/** Reconcile the key again after a while, even though this reconcile succeeded. */
export interface ReconcileResult {
  /** Milliseconds until the key is reconciled again (0: at once, after this reconcile ends). */
  readonly requeueAfter: number;
}

/** What a reconcile may end with: nothing (done) or a {@link ReconcileResult}. */
export type ReconcileOutcome = ReconcileResult | undefined | void;

/**
 * A successful result that asks for the key again after `ms`: for state that changes without an
 * event (a certificate's expiry, an external system polled). The key's failure count is reset, as
 * after any success, and the retry rate limit does not apply (controller-runtime's
 * `Result{RequeueAfter}`: `Forget`, then `AddAfter`).
 *
 * ## Example
 * ```ts
 * import { requeueAfter } from 'rx-informer/workqueue';
 *
 * const checkAgainInAMinute = requeueAfter(60_000); // { requeueAfter: 60000 }
 * ```
 *
 * @throws RangeError when `ms` is negative or not finite.
 */
export function requeueAfter(ms: number): ReconcileResult {
  if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`requeueAfter needs a finite number of ms >= 0, got ${ms}`);
  return Object.freeze({ requeueAfter: ms });
}

/**
 * Reads what a reconcile returned: `undefined` for done, the delay for a requeue.
 * @throws RangeError for an object whose `requeueAfter` is not a finite number >= 0
 */
export function requeueDelayOf(outcome: unknown): number | undefined {
  if (typeof outcome !== 'object' || outcome === null || !('requeueAfter' in outcome)) return undefined;
  const delay = (outcome as { requeueAfter: unknown }).requeueAfter;
  if (typeof delay !== 'number' || !Number.isFinite(delay) || delay < 0) {
    throw new RangeError(`a reconcile returned requeueAfter ${String(delay)}: it must be a finite number of ms >= 0`);
  }
  return delay;
}
