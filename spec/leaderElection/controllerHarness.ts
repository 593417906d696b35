import { interval, map, VirtualAction, VirtualTimeScheduler, type Subscription } from 'rxjs';
import type { Logger } from '../../lib/base/logger';
import { leaderElectionFrom } from '../../lib/leaderElection/leaderElection';
import { whileLeader } from '../../lib/leaderElection/whileLeader';
import { leases } from '../../lib/resources/builtins';
import { createClusterStore, storeLeaseClient, type ClusterStore, type LeaseFault } from '../../apiserver/src';
import { skewedScheduler, type ClockSkew } from '../../lib/testing';
import { seededRandom } from '../../apiserver/src/random';
import { reconcile } from '../../lib/workqueue/reconcile';
import { virtualTask, type VirtualTask } from '../support/virtualTask';
import { at, runTo } from '../support/virtualClock';

/**
 * Leader-elected controllers in virtual time: each replica runs `leaderElection` piped through
 * `whileLeader`, whose work is a `reconcile` queue fed a key every few hundred ms, given the
 * term's signal. Reconciles are virtual tasks (they take `duration`, or stop `abortLatency` after
 * their signal aborts). A referee records every reconcile's run and, at each start, every other
 * replica's reconcile still running: an overlap.
 */

export const LEASE = { namespace: 'default', name: 'controller' } as const;
export const TIMINGS = { leaseDuration: 15_000, renewDeadline: 10_000, retryPeriod: 2_000 } as const;

/** How a replica's reconciles behave: each call draws its duration and abort latency from these. */
export interface ReconcileProfile {
  /** Longest run, ms, when not told to stop. */
  readonly maxDuration: number;
  /** Longest time a reconcile runs on after its signal aborts, ms. */
  readonly maxAbortLatency: number;
}

export interface ReplicaOptions {
  readonly clock?: ClockSkew;
  readonly latency?: number;
  readonly seed?: number;
  readonly profile?: ReconcileProfile;
  /** Time between keys arriving, ms. Default 300. */
  readonly keyEvery?: number;
  readonly settleTimeout?: number;
}

export class Replica {
  fault: LeaseFault | undefined;
  latency: number;
  /** Its reconciles running now. */
  readonly running = new Set<VirtualTask>();
  /** Every reconcile it ran: [start, end) in shared virtual time (end undefined while running). */
  readonly runs: { readonly key: string; readonly start: number; end: number | undefined }[] = [];
  readonly events: { readonly at: number; readonly type: string }[] = [];
  readonly errors: string[] = [];
  private readonly subscription: Subscription;
  private stopped = false;

  constructor(
    readonly id: string,
    private readonly controllers: Controllers,
    options: ReplicaOptions,
  ) {
    const { time, store } = controllers;
    this.latency = options.latency ?? 10;
    const scheduler = skewedScheduler(time, options.clock);
    const random = seededRandom(options.seed ?? 1);
    const profile = options.profile ?? { maxDuration: 1_000, maxAbortLatency: 0 };
    const client = storeLeaseClient(store, { scheduler: time, latency: () => this.latency, fault: () => this.fault });
    const logger: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: (_fields, message) => void this.errors.push(`${time.now()} ${message}`) };
    const keys$ = interval(options.keyEvery ?? 300, scheduler).pipe(map((i) => `key-${i % 7}`));
    const election$ = leaderElectionFrom(client, { ...LEASE, ...TIMINGS, identity: id, scheduler, random: seededRandom((options.seed ?? 1) + 17), logger });
    this.subscription = election$
      .pipe(
        whileLeader(
          ({ signal }) =>
            keys$.pipe(
              reconcile(
                (key, context) => {
                  const run = { key, start: time.now(), end: undefined as number | undefined };
                  controllers.started(this, key);
                  this.runs.push(run);
                  const task = virtualTask(scheduler, {
                    duration: 1 + Math.floor(random() * profile.maxDuration),
                    abortLatency: Math.floor(random() * (profile.maxAbortLatency + 1)),
                    signal: context.signal,
                    onEnd: () => {
                      run.end = time.now();
                      this.running.delete(task);
                    },
                  });
                  this.running.add(task);
                  return task;
                },
                { concurrency: 2, scheduler, signal },
              ),
            ),
          { scheduler, logger, settleTimeout: options.settleTimeout },
        ),
      )
      .subscribe((event) => this.events.push({ at: time.now(), type: event.type }));
  }

  get leading(): boolean {
    return this.events.filter((event) => event.type !== 'work').at(-1)?.type === 'leading';
  }

  /** Stops as a rolling restart does: unsubscribes, and the rest happens as whileLeader does it. */
  stop(): void {
    this.stopped = true;
    this.subscription.unsubscribe();
  }

  /** Dies: its network is gone, its reconciles stop where they are (the process is gone), and so does it. */
  crash(): void {
    this.fault = 'unreachable';
    for (const task of this.running) task.kill();
    this.running.clear();
    for (const run of this.runs) run.end ??= this.controllers.time.now();
    this.stop();
  }

  get isStopped(): boolean {
    return this.stopped;
  }
}

export class Controllers {
  readonly time = new VirtualTimeScheduler(VirtualAction, Infinity);
  readonly store: ClusterStore = createClusterStore();
  readonly replicas: Replica[] = [];
  /** Each start of a reconcile while another replica's reconcile ran: `t: id key (others running)`. */
  readonly overlaps: string[] = [];

  add(id: string, options: ReplicaOptions = {}): Replica {
    const replica = new Replica(id, this, options);
    this.replicas.push(replica);
    return replica;
  }

  started(replica: Replica, key: string): void {
    const others = this.replicas.filter((other) => other !== replica && other.running.size > 0);
    if (others.length > 0) this.overlaps.push(`${this.time.now()}: ${replica.id} started ${key} while ${others.map((o) => o.id).join(', ')} ran`);
  }

  /** The overlap of every pair of runs of different replicas, in ms (0 when none overlap). */
  overlapMs(): number {
    const runs = this.replicas.flatMap((replica) => replica.runs.map((run) => ({ replica, ...run })));
    let total = 0;
    for (let i = 0; i < runs.length; i++) {
      for (let j = i + 1; j < runs.length; j++) {
        const a = runs[i]!;
        const b = runs[j]!;
        if (a.replica === b.replica) continue;
        const end = Math.min(a.end ?? Infinity, b.end ?? Infinity);
        const start = Math.max(a.start, b.start);
        if (end > start) total += end === Infinity ? Infinity : end - start;
      }
    }
    return total;
  }

  holder(): string | undefined {
    return this.store.get(leases, LEASE.namespace, LEASE.name)?.spec?.holderIdentity;
  }

  at(t: number, action: () => void): void {
    at(this.time, t, action);
  }

  runTo(t: number): void {
    runTo(this.time, t);
  }

  stopAll(): void {
    for (const replica of this.replicas) if (!replica.isStopped) replica.crash();
  }
}
