import type { Observable, OperatorFunction, Subscription } from 'rxjs';
import { operate, operatorObserver } from '../base/operate';
import type { LeaderState } from './elector';

/** Why {@link whileLeader}'s output ended with `stopped`. */
export type WhileLeaderStopReason =
  /** The `signal` option aborted. */
  | 'signal'
  /** The work completed by itself. */
  | 'work-completed'
  /** The leader states completed (a `leaderElection` never does; a hand-made one may). */
  | 'election-completed';

/**
 * What {@link whileLeader} emits: one union, read by `type` alone. The leader states come as they
 * are (with `type` in place of a {@link LeaderState}'s `state`), the work's values as `work`, and
 * `stopped` last when the output ends by itself.
 */
export type WhileLeaderEvent<T> =
  /** Another candidate holds the Lease (`holder`), or nobody does (`undefined`): this one waits, and its work does not run. */
  | { readonly type: 'following'; readonly holder: string | undefined }
  /** This candidate holds the Lease since `since` (scheduler time), `transitions` holder changes so far: its work runs. */
  | { readonly type: 'leading'; readonly since: number; readonly transitions: number }
  /** This candidate stopped leading (see {@link LeaderState}'s `lost`): its work is stopped. */
  | { readonly type: 'lost'; readonly reason: 'renew-deadline' | 'taken'; readonly error: unknown }
  /** A value the work emitted. */
  | { readonly type: 'work'; readonly value: T }
  /**
   * The last event before the output completes: the work has stopped and the election has been
   * let go (which releases the Lease). `settled` is true when the work stopped within its bound.
   */
  | { readonly type: 'stopped'; readonly reason: WhileLeaderStopReason; readonly settled: boolean };

/** Options of {@link whileLeader}. */
export interface WhileLeaderOptions {
  /**
   * Stops when it aborts: the work is torn down, then the election (releasing the Lease), and the
   * output emits `stopped` and completes. Unsubscribing does the same, but nothing can be emitted
   * to a subscriber that left: use this for a shutdown whose end you want to see.
   */
  readonly signal?: AbortSignal;
}

/**
 * Runs `work$` only while this candidate leads: subscribes to it on `leading`, and on `lost`
 * first passes `lost` on, then unsubscribes from it. The output is one union read by `type`:
 * the leader states, the work's values (`work`) and, when it ends by itself, `stopped`.
 *
 * 1. `leading`: emitted, then `work$` is subscribed.
 * 2. `lost`: emitted **before** the work is torn down, so a consumer can log or flag it while
 *    the work's teardown runs; the election campaigns again, and a new `leading` subscribes to
 *    `work$` afresh.
 * 3. Unsubscribing tears the work down **first** and only then the election, which releases the
 *    Lease: by the time another candidate can take over, the work has finalized (its teardown
 *    has run). Work that goes on after its teardown (a `reconcile` within its `grace`, a Promise
 *    nobody awaits) is not covered: keep it shorter than the lease margin (3 s at the defaults).
 * 4. The output ends with `stopped` (then completes) when the `signal` option aborts, when
 *    `work$` completes, or when the leader states complete; the work is torn down and the
 *    election let go (releasing the Lease) first. When either errors, the output errors.
 *
 * ```
 * leader$:       -F--L-----x-F-L-------     F following, L leading, x lost
 * work$ (cold):      -a--b--c              subscribed at each L, unsubscribed at each x
 * whileLeader(work$):
 * output:        -F--La--b-x-F-La--b--c     a, b, c as { type: 'work', value }
 * ```
 *
 * ## Example
 * ```ts
 * import type { KubeConfig } from '@kubernetes/client-node';
 * import type { Deployment, Informer } from 'rx-informer';
 * import { changedKeys, reconcile } from 'rx-informer/workqueue';
 * import { leaderElection, whileLeader } from 'rx-informer/leader-election';
 *
 * declare const kubeConfig: KubeConfig;
 * declare const deploymentInformer: Informer<Deployment>;
 * declare function reconcileDeployment(key: string): Promise<void>;
 *
 * // Every replica keeps its cache warm; only the leader reconciles.
 * deploymentInformer.informer$.subscribe();
 * const work$ = deploymentInformer.informer$.pipe(changedKeys(), reconcile(reconcileDeployment));
 * let isLeader = false;
 * leaderElection(kubeConfig, { namespace: 'shop', name: 'deployment-controller', identity: process.env.POD_NAME ?? 'local' })
 *   .pipe(whileLeader(work$))
 *   .subscribe((event) => {
 *     if (event.type === 'work') return;
 *     isLeader = event.type === 'leading';
 *     console.log('leader election:', event.type, isLeader);
 *   });
 * ```
 *
 * @param work$ the work to run while leading; subscribed anew each time leadership is won.
 * @param options `signal`, to stop and see the end.
 * @returns an operator from {@link LeaderState}s (a `leaderElection`) to {@link WhileLeaderEvent}s.
 */
export function whileLeader<T>(work$: Observable<T>, options: WhileLeaderOptions = {}): OperatorFunction<LeaderState, WhileLeaderEvent<T>> {
  return operate((leader$, subscriber) => {
    let work: Subscription | undefined;
    let election: Subscription | undefined;
    let ended = false;
    const stopWork = (): void => {
      work?.unsubscribe();
      work = undefined;
    };
    // The order is the point: the work finalizes before the election releases the Lease.
    const end = (reason: WhileLeaderStopReason): void => {
      if (ended) return;
      ended = true;
      stopWork();
      election?.unsubscribe();
      subscriber.next({ type: 'stopped', reason, settled: true });
      subscriber.complete();
    };
    const onAbort = (): void => end('signal');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted === true) end('signal');
    if (!ended) {
      election = leader$.subscribe(
        operatorObserver<LeaderState>(subscriber, {
          next: (state) => {
            subscriber.next(eventOf(state));
            if (state.state !== 'leading') return stopWork();
            // An observer of its own: subscribing `subscriber` itself would tie the work to the output.
            work ??= work$.subscribe(operatorObserver<T>(subscriber, { next: (value) => subscriber.next({ type: 'work', value }), complete: () => end('work-completed') }));
          },
          complete: () => end('election-completed'),
        }),
      );
      if (ended) election.unsubscribe();
    }
    return () => {
      options.signal?.removeEventListener('abort', onAbort);
      ended = true;
      stopWork();
      election?.unsubscribe();
    };
  });
}

/** A leader state as an output event: the same fields, with `type` in place of `state`. */
function eventOf(state: LeaderState): WhileLeaderEvent<never> {
  switch (state.state) {
    case 'following':
      return { type: 'following', holder: state.holder };
    case 'leading':
      return { type: 'leading', since: state.since, transitions: state.transitions };
    case 'lost':
      return { type: 'lost', reason: state.reason, error: state.error };
  }
}
