import type { Observable, OperatorFunction, Subscription } from 'rxjs';
import { operate, operatorObserver } from '../base/operate';
import type { LeaderState } from './elector';

/**
 * Runs `work$` only while this candidate leads: subscribes to it on `leading`, and on `lost`
 * first passes `lost` on, then unsubscribes from it. The output is the leader states and the
 * work's values, interleaved.
 *
 * 1. `leading`: emitted, then `work$` is subscribed.
 * 2. `lost`: emitted **before** the work is torn down, so a consumer can log or flag it while
 *    the work's teardown runs; the election campaigns again, and a new `leading` subscribes to
 *    `work$` afresh.
 * 3. Unsubscribing tears the work down **first** and only then the election, which releases the
 *    Lease: by the time another candidate can take over, the work has finalized (its teardown
 *    has run). Work that goes on after its teardown (a `reconcile` within its `grace`, a Promise
 *    nobody awaits) is not covered: keep it shorter than the lease margin (3 s at the defaults).
 * 4. When `work$` completes, the output completes (releasing the Lease); when it errors, the
 *    output errors.
 *
 * ```
 * leader$:       -F--L-----x-F-L-------     F following, L leading, x lost
 * work$ (cold):      -a--b--c              subscribed at each L, unsubscribed at each x
 * whileLeader(work$):
 * output:        -F--La--b-x-F-La--b--c
 * ```
 *
 * ## Example
 * ```ts
 * import type { KubeConfig } from '@kubernetes/client-node';
 * import { changedKeys, reconcile } from 'rx-informer/workqueue';
 * import { leaderElection, whileLeader } from 'rx-informer/leader-election';
 * import type { Deployment, Informer } from 'rx-informer';
 *
 * declare const kubeConfig: KubeConfig;
 * declare const deploymentInformer: Informer<Deployment>;
 * declare function reconcileDeployment(key: string): Promise<void>;
 *
 * // Every replica keeps its cache warm; only the leader reconciles.
 * deploymentInformer.informer$.subscribe();
 * const work$ = deploymentInformer.informer$.pipe(changedKeys(), reconcile(reconcileDeployment));
 * leaderElection(kubeConfig, { namespace: 'shop', name: 'deployment-controller', identity: process.env.POD_NAME ?? 'local' })
 *   .pipe(whileLeader(work$))
 *   .subscribe((event) => {
 *     if ('state' in event) console.log('leader election:', event.state);
 *   });
 * ```
 *
 * @param work$ the work to run while leading; subscribed anew each time leadership is won.
 * @returns an operator from {@link LeaderState}s (a `leaderElection`) to those states and the
 *   work's values.
 */
export function whileLeader<T>(work$: Observable<T>): OperatorFunction<LeaderState, LeaderState | T> {
  return operate((leader$, subscriber) => {
    let work: Subscription | undefined;
    const stopWork = (): void => {
      work?.unsubscribe();
      work = undefined;
    };
    const election = leader$.subscribe(
      operatorObserver<LeaderState>(subscriber, {
        next: (state) => {
          subscriber.next(state);
          if (state.state !== 'leading') return stopWork();
          // An observer of its own: subscribing `subscriber` itself would tie the work to the output.
          work ??= work$.subscribe(operatorObserver<T>(subscriber, { next: (value) => subscriber.next(value) }));
        },
      }),
    );
    return () => {
      // The order is the point: the work finalizes before the election releases the Lease.
      stopWork();
      election.unsubscribe();
    };
  });
}
