import { asyncScheduler, type OperatorFunction, type SchedulerLike } from 'rxjs';
import { defaultLogger, type Logger } from '../base/logger';
import { longDelays } from '../base/longDelays';
import { operate } from '../base/operate';
import type { LeaderState } from './elector';
import { LeaderTerms, type LeaderWork, type WhileLeaderEvent } from './leaderTerms';

export type { LeaderTerm, LeaderWork, WhileLeaderEvent, WhileLeaderStopReason } from './leaderTerms';

/** Options of {@link whileLeader}. All optional. */
export interface WhileLeaderOptions {
  /**
   * Stops when it aborts: the work is told to stop and awaited, then the election is let go
   * (releasing the Lease), and the output emits `stopped` and completes. Unsubscribing does the
   * same in the background: nothing can be emitted to a subscriber that left. Default none.
   */
  readonly signal?: AbortSignal;
  /**
   * On a stop (the `signal`, an unsubscription), how long (ms) work told to stop may take to
   * complete while the Lease is still renewed. Past it the work is unsubscribed, an error is
   * logged, and the Lease is not released but left to expire (`leaseDuration` after its last
   * renewal), which gives the work that much longer before another candidate can lead.
   * Default 10 000.
   */
  readonly settleTimeout?: number;
  /** Runs the settle timers. Use the election's. Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike;
  /** Where work that did not stop in time is reported (error). Default `defaultLogger`: warnings and errors to stderr; `silentLogger` for none. */
  readonly logger?: Logger;
}

/**
 * Runs work only while this candidate leads, and hands over without overlap: work is told when
 * its term ends and awaited before another term starts or the Lease is released. The output is
 * one union read by `type`: the leader states, the work's values (`work`) and, when it ends by
 * itself, `stopped`.
 *
 * 1. **A term per leadership.** On `leading` the work starts: `work(term)` is called and
 *    subscribed (or, given an Observable, that is subscribed). `leading` is emitted first.
 * 2. **Lost.** `lost` is emitted, then the term's `signal` aborts, and the work must complete
 *    once nothing of it runs (`reconcile(fn, { signal })` does: it aborts its running reconciles
 *    and completes when they have settled). It gets `stopWithin` ms (the margin before another
 *    candidate can acquire the Lease: 3 s at client-go's default timings); past that it is
 *    unsubscribed and an error is logged, since another leader may now overlap it (no fencing).
 *    The election campaigns again; a new `leading` starts a new term once the old one is over.
 * 3. **Stop.** Unsubscribing, or the `signal` option aborting, ends the term the same way but
 *    keeps the election subscribed (the Lease renewed) until the work has completed, and only
 *    then lets it go, which releases the Lease: by the time another candidate can lead, nothing
 *    of this one's work runs. The wait is bounded by `settleTimeout` (and by `stopWithin` if the
 *    Lease is lost meanwhile); past it the work is unsubscribed, an error logged, and the Lease
 *    is not released but left to expire, a lease duration later.
 * 4. **Given an Observable** instead of a function, there is nothing to tell: its teardown is its
 *    stop, at once. Work that runs on after its teardown (a `reconcile` within its `grace`) is
 *    then not awaited: give a function for it.
 * 5. **The end.** The output ends with `stopped` (then completes) when the `signal` option
 *    aborts, when the work completes while leading, or when the leader states complete; after a
 *    plain unsubscription the same steps run with nobody to tell. When the election or the work
 *    fails, the output fails at once.
 *
 * ```
 * leader$:   -F--L-----x-F-L-------     F following, L leading, x lost
 * work(term):    -a--b--c              started at each L; at x its signal aborts, and it completes
 * whileLeader(work):                   (here at once); the next term starts only after that
 * output:    -F--La--b-x-F-La--b--c     a, b, c as { type: 'work', value }
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
 * declare function reconcileDeployment(key: string, signal: AbortSignal): Promise<void>;
 *
 * // Every replica keeps its cache warm; only the leader reconciles.
 * deploymentInformer.informer$.subscribe();
 * const shutdown = new AbortController();
 * process.once('SIGTERM', () => shutdown.abort());
 * let isLeader = false;
 * leaderElection(kubeConfig, { namespace: 'shop', name: 'deployment-controller', identity: process.env.POD_NAME ?? 'local' })
 *   .pipe(
 *     whileLeader(
 *       ({ signal }) => deploymentInformer.informer$.pipe(changedKeys(), reconcile((key, context) => reconcileDeployment(key, context.signal), { signal })),
 *       { signal: shutdown.signal },
 *     ),
 *   )
 *   .subscribe((event) => {
 *     if (event.type === 'work') return;
 *     isLeader = event.type === 'leading';
 *     if (event.type === 'stopped') console.log('reconciles settled, lease released: exiting');
 *   });
 * ```
 *
 * @param work what to run while leading: a function of the {@link LeaderTerm}, called for each
 *   term, whose Observable completes once the term's signal has aborted and its work has stopped;
 *   or a cold Observable, subscribed at each term and unsubscribed at its end.
 * @param options `signal` to stop and see the end; `settleTimeout`; the scheduler and logger.
 * @returns an operator from {@link LeaderState}s (a `leaderElection`) to {@link WhileLeaderEvent}s.
 * @throws RangeError for a negative or infinite `settleTimeout` (when called).
 */
export function whileLeader<T>(work: LeaderWork<T>, options: WhileLeaderOptions = {}): OperatorFunction<LeaderState, WhileLeaderEvent<T>> {
  const settleTimeout = options.settleTimeout ?? 10_000;
  if (!(settleTimeout >= 0 && Number.isFinite(settleTimeout))) throw new RangeError(`settleTimeout must be a finite number of ms >= 0, got ${settleTimeout}`);
  const config = { settleTimeout, scheduler: longDelays(options.scheduler ?? asyncScheduler), logger: options.logger ?? defaultLogger, signal: options.signal };
  return operate((leader$, subscriber) => {
    const terms = new LeaderTerms(work, config, subscriber);
    terms.start(leader$);
    return () => terms.unsubscribed();
  });
}
