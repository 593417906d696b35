import { silentLogger } from '../../lib/base/logger';
import { VirtualAction, VirtualTimeScheduler, type Subscription } from 'rxjs';
import { leaderElectionFrom, type LeaderElectionOptions, type LeaderState } from '../../lib/leaderElection/leaderElection';
import { leases, type Lease } from '../../lib/resources/builtins';
import type { ClusterStoreImpl } from '../../apiserver/src/clusterStore';
import { createClusterStore, storeLeaseClient, type ClusterStore, type Latency, type LeaseFault, type LeaseRequest } from '../../apiserver/src';
import { skewedScheduler, type ClockSkew } from '../../lib/testing';
import { seededRandom } from '../../apiserver/src/random';
import { at, runTo } from '../support/virtualClock';

/**
 * Candidates for one Lease in virtual time: one shared in-memory store (the loopback server's
 * Lease semantics), one clock per candidate (offset and rate over the shared virtual time), a
 * network per candidate that can be slowed, cut or made to hang, and a referee that checks at
 * every change of anyone's state that at most one candidate believes it leads.
 */

export const NAMESPACE = 'default';
export const LEASE = 'controller';

/** What one candidate does and sees. */
export interface Candidate {
  readonly id: string;
  /** Its states, stamped with the shared virtual time. */
  readonly states: { readonly at: number; readonly state: LeaderState }[];
  /** Requests it sent, stamped with the shared virtual time. */
  readonly requests: { readonly at: number; readonly verb: LeaseRequest['verb'] }[];
  /** Its network: undefined serves requests. */
  fault: LeaseFault | undefined;
  /** Round trip of its requests, ms, or its two legs. */
  latency: Latency;
  readonly leading: boolean;
  stop(): void;
}

export interface CandidateOptions extends Partial<LeaderElectionOptions> {
  readonly clock?: ClockSkew;
  readonly latency?: Latency;
  /** Seed of its jitter; default from its id. */
  readonly seed?: number;
}

export class Election {
  readonly time = new VirtualTimeScheduler(VirtualAction, Infinity);
  readonly store: ClusterStore = createClusterStore();
  readonly candidates: Candidate[] = [];
  /** Every moment two candidates believed they led at once, as `t: a, b`. */
  readonly overlaps: string[] = [];
  /** Intervals during which each candidate led: [id, from, to]. */
  readonly terms: [string, number, number | undefined][] = [];
  /** Every write the store applied to the Lease: when, and the holder it wrote. */
  readonly commits: { readonly at: number; readonly holder: string }[] = [];

  constructor() {
    (this.store as ClusterStoreImpl).subscribe(leases, (event) => {
      this.commits.push({ at: this.time.now(), holder: (event.object.object as Lease).spec?.holderIdentity ?? '' });
    });
  }

  /** Starts a candidate campaigning now. */
  add(id: string, options: CandidateOptions = {}): Candidate {
    const { clock, latency = 10, seed, ...election } = options;
    const scheduler = skewedScheduler(this.time, clock);
    const states: Candidate['states'] = [];
    const requests: Candidate['requests'] = [];
    const referee = this;
    let leading = false;
    let subscription: Subscription | undefined;
    const candidate: Candidate = {
      id,
      states,
      requests,
      fault: undefined,
      latency,
      get leading() {
        return leading;
      },
      stop: () => {
        if (leading) referee.endTerm(id);
        leading = false;
        subscription?.unsubscribe();
      },
    };
    const client = storeLeaseClient(this.store, {
      scheduler: this.time,
      latency: () => candidate.latency,
      fault: (request) => {
        requests.push({ at: this.time.now(), verb: request.verb });
        return candidate.fault;
      },
    });
    subscription = leaderElectionFrom(client, {
      namespace: NAMESPACE,
      name: LEASE,
      identity: id,
      scheduler,
      random: seededRandom(seed ?? [...id].reduce((sum, c) => sum * 31 + c.charCodeAt(0), 7)),
      // Lost leases and failed releases are the point here: the referee reads states, not log lines.
      logger: silentLogger,
      ...election,
    }).subscribe((state) => {
      states.push({ at: this.time.now(), state });
      if (state.state === 'leading') {
        leading = true;
        this.terms.push([id, this.time.now(), undefined]);
        const others = this.candidates.filter((other) => other !== candidate && other.leading);
        if (others.length > 0) this.overlaps.push(`${this.time.now()}: ${[id, ...others.map((o) => o.id)].join(', ')}`);
      } else if (leading) {
        leading = false;
        this.endTerm(id);
      }
    });
    this.candidates.push(candidate);
    return candidate;
  }

  /** Runs virtual time up to `t` (ms since the start). */
  runTo(t: number): void {
    runTo(this.time, t);
  }

  /** Runs an action at virtual time `t`. */
  at(t: number, action: () => void): void {
    at(this.time, t, action);
  }

  /** Who leads now. */
  leaders(): string[] {
    return this.candidates.filter((c) => c.leading).map((c) => c.id);
  }

  lease(): Lease | undefined {
    return this.store.get(leases, NAMESPACE, LEASE);
  }

  /**
   * The two timing rules that together rule out two leaders, checked term by term (so a broken
   * margin shows even when no other candidate happened to try at the wrong moment):
   * - a term that ends by losing ends within retryPeriod + renewDeadline of the holder's last
   *   write the store applied;
   * - a term that takes the Lease over from another live holder starts more than leaseDuration
   *   after that holder's last applied write.
   */
  violations(timings = { leaseDuration: 15_000, renewDeadline: 10_000, retryPeriod: 2_000 }): string[] {
    const found: string[] = [];
    const lastCommitBefore = (t: number, who?: string) => [...this.commits].reverse().find((c) => c.at <= t && (who === undefined || c.holder === who));
    for (const candidate of this.candidates) {
      for (let i = 0; i < candidate.states.length; i++) {
        const { at, state } = candidate.states[i]!;
        if (state.state === 'lost' && state.reason === 'renew-deadline') {
          const last = lastCommitBefore(at, candidate.id);
          if (last !== undefined && at > last.at + timings.retryPeriod + timings.renewDeadline) found.push(`${candidate.id} led until ${at}, its last write was applied at ${last.at}`);
        }
        if (state.state === 'leading') {
          // The write that won, and the one before it: whose Lease was taken over?
          const won = [...this.commits].reverse().find((c) => c.at <= at && c.holder === candidate.id);
          const previous = won === undefined ? undefined : [...this.commits].reverse().find((c) => c.at < won.at);
          if (won !== undefined && previous !== undefined && previous.holder !== '' && previous.holder !== candidate.id) {
            const previousLast = lastCommitBefore(previous.at, previous.holder)!;
            if (won.at <= previousLast.at + timings.leaseDuration) found.push(`${candidate.id} took over from ${previous.holder} at ${won.at}, ${won.at - previousLast.at} ms after its last write`);
          }
        }
      }
    }
    return [...this.overlaps.map((o) => `two leaders at ${o}`), ...found];
  }

  stopAll(): void {
    for (const candidate of this.candidates) candidate.stop();
  }

  private endTerm(id: string): void {
    const term = [...this.terms].reverse().find(([who, , to]) => who === id && to === undefined);
    if (term !== undefined) term[2] = this.time.now();
  }
}

/** A candidate's states as `t state[/holder|/reason]` lines, for readable expectations. */
export function timeline(candidate: Candidate): string[] {
  return candidate.states.map(({ at, state }) => {
    if (state.state === 'following') return `${at} following ${state.holder ?? '-'}`;
    if (state.state === 'lost') return `${at} lost ${state.reason}`;
    return `${at} leading`;
  });
}
