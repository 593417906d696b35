import type { KubeConfig } from '@kubernetes/client-node';
import { Observable } from 'rxjs';
import { checkLeaderMargin, resolveElectionConfig, type LeaderElectionOptions } from './electionConfig';
import { Elector, type LeaderState } from './elector';
import { kubeLeaseClient, type LeaseClient } from './leaseClient';

export type { LeaderState } from './elector';
export type { LeaderElectionOptions } from './electionConfig';

/**
 * `leader$`: client-go's leader election on a `coordination.k8s.io/v1` Lease, as a cold
 * Observable of this candidate's {@link LeaderState}. Subscribing campaigns; unsubscribing stops
 * campaigning, stops renewing, and releases the Lease if this candidate holds it.
 *
 * 1. **Acquire.** Read the Lease (create it if missing). If another candidate holds it and it
 *    has not expired, emit `following` and try again after `retryPeriod`, jittered up to 120 %
 *    later. Expiry is judged on this candidate's own clock: `leaseDuration` after it last saw
 *    the Lease *change*, whatever times the Lease holds, so clock offsets between machines do
 *    not matter (rate skew does).
 * 2. **Write with the version read.** Every write is a PUT carrying the resourceVersion it read,
 *    so when two candidates race, the API server answers one of them 409 Conflict and it loses.
 * 3. **Lead and renew.** Emit `leading`, then renew every `retryPeriod`. If renewals keep
 *    failing for `renewDeadline` (or another holder is seen), emit `lost` and campaign again.
 *    Each request is abandoned after `requestTimeout`, so a hung renewal cannot outlive the
 *    deadline (kubernetes/kubernetes#124588).
 * 4. **Release.** Unsubscribing while leading writes holder '' and a 1 s duration, so the next
 *    leader need not wait out `leaseDuration` (`releaseOnUnsubscribe`, default true).
 *
 * ```
 * time (s):  0    1    2    3    4    5    6    7
 * a:         L------------------------x              L leading; at x, a unsubscribes and releases
 * b:         F(a)------------------------------L     F(a) following a; b's next try (every 2 s,
 * ```                                                 jittered) finds the Lease free and takes it
 *
 * **Guarantees and costs.** At most one candidate believes it leads at any instant as long as
 * every candidate's clock runs at the same rate and the process is not paused for longer than
 * the margin `leaseDuration − renewDeadline − retryPeriod` (3 s at the defaults): the leader
 * stops by `retryPeriod + renewDeadline` after its last successful renewal was sent, others wait
 * `leaseDuration` after they saw it; so `leaseDuration` must exceed `renewDeadline +
 * retryPeriod`, which is checked (client-go checks only `leaseDuration > renewDeadline`). `lost`
 * carries what is left of the margin (`stopWithin`). There is no fencing (as in client-go): work
 * must be idempotent, and must stop within `stopWithin` of `lost` ({@link whileLeader} tells it
 * to, waits for it, and releases the Lease on a stop only once it has). One request
 * (two when a renewal's cached version is stale) every `retryPeriod` per candidate.
 *
 * ## Example
 * ```ts
 * import type { KubeConfig } from '@kubernetes/client-node';
 * import { hostname } from 'node:os';
 * import { leaderElection } from 'rx-informer/leader-election';
 *
 * declare const kubeConfig: KubeConfig;
 * leaderElection(kubeConfig, { namespace: 'shop', name: 'config-controller', identity: hostname() }).subscribe((state) => {
 *   if (state.state === 'leading') console.log('leading since', new Date(state.since));
 *   if (state.state === 'following') console.log('following', state.holder ?? '(nobody)');
 *   if (state.state === 'lost') console.error('lost the lease:', state.reason);
 * });
 * ```
 *
 * @param kubeConfig where the Lease lives, and the credentials to write it.
 * @param options the Lease, this candidate's identity, the timings (client-go's defaults:
 *   15 s lease, 10 s renew deadline, 2 s retry period).
 * @returns a cold Observable of {@link LeaderState}s that never completes or errors.
 * @throws TypeError for an empty namespace, name or identity, RangeError for timings that break
 *   leaseDuration > renewDeadline > 1.2 × retryPeriod or leaseDuration > renewDeadline +
 *   retryPeriod (checked when called, not on subscription).
 */
export function leaderElection(kubeConfig: KubeConfig, options: LeaderElectionOptions): Observable<LeaderState> {
  return leaderElectionFrom(kubeLeaseClient(kubeConfig), options);
}

/**
 * {@link leaderElection} over any {@link LeaseClient}: the same algorithm, for a Lease reached
 * another way, or for tests over `rx-informer-apiserver`'s in-memory Leases in virtual time.
 *
 * ## Example
 * ```ts
 * import type { KubeConfig } from '@kubernetes/client-node';
 * import { kubeLeaseClient, leaderElectionFrom } from 'rx-informer/leader-election';
 *
 * declare const kubeConfig: KubeConfig;
 * const leases = kubeLeaseClient(kubeConfig);
 * const leader$ = leaderElectionFrom(leases, { namespace: 'shop', name: 'config-controller', identity: 'replica-1' });
 * ```
 *
 * @param client reads and writes the Lease.
 * @param options as for {@link leaderElection}.
 * @returns a cold Observable of {@link LeaderState}s.
 * @throws TypeError, RangeError as {@link leaderElection}.
 */
export function leaderElectionFrom(client: LeaseClient, options: LeaderElectionOptions): Observable<LeaderState> {
  const config = resolveElectionConfig(options);
  checkLeaderMargin(config);
  return new Observable<LeaderState>((subscriber) => {
    const elector = new Elector(client, config, subscriber);
    elector.start();
    return () => elector.stop();
  });
}
