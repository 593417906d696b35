import { silentLogger } from '../../lib/base/logger';
import { VirtualAction, VirtualTimeScheduler, type SchedulerAction, type SchedulerLike, type Subscription } from 'rxjs';
import { informerFrom } from '../../lib/informer/informer';
import { leases } from '../../lib/resources/builtins';
import { placeBuckets } from '../../lib/sharding/placement';
import { ringMembership, type OwnershipEvent } from '../../lib/sharding/ringMember';
import { RING_LABEL } from '../../lib/sharding/ringLease';
import { ringViewBackoff } from '../../lib/sharding/ringConfig';
import { createClusterStore, storeLeaseClient, storeListerWatcher, type ClusterStore, type LeaseFault } from '../../apiserver/src';
import { skewedScheduler, type ClockSkew } from '../../lib/testing';
import { runTo } from '../support/virtualClock';

/**
 * A ring of members in virtual time: one shared store (the loopback server's Lease semantics),
 * one clock per member (offset and rate over the shared time), a network per member that can be
 * cut, a process per member that can be paused or crashed, and a referee that checks after every
 * action any member takes that no bucket has two owners.
 */

export const RING = { name: 'shop', namespace: 'default' } as const;
export const TIMINGS = { leaseDuration: 15_000, renewDeadline: 10_000, retryPeriod: 2_000 } as const;

export interface RingMemberHandle {
  readonly id: string;
  readonly events: { readonly at: number; readonly event: OwnershipEvent }[];
  readonly owned: Set<number>;
  /** Its network: undefined serves requests. */
  fault: LeaseFault | undefined;
  latency: number;
  /** How far its Lease watch lags behind the store, beyond the latency (a slow watch cache, another API server). */
  watchLag: number;
  /** Paused until this shared time: nothing of it runs meanwhile. */
  pausedUntil: number;
  crashed: boolean;
  left: boolean;
  /** Its renewal deadline as it last reported it, on its own clock. */
  servingUntil: number;
  /** Its clock. */
  now(): number;
}

export interface MemberOptions {
  readonly clock?: ClockSkew;
  readonly latency?: number;
  readonly watchLag?: number;
}

/** A scheduler whose actions wait while its process is paused, never run once it crashed, and let the referee look after each one. */
function processScheduler(base: SchedulerLike, member: RingMemberHandle, afterAction: (resumed: boolean) => void): SchedulerLike {
  return {
    now: () => base.now(),
    schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay?: number, state?: T): Subscription {
      return base.schedule<T>(
        function (this: SchedulerAction<T>, current?: T) {
          if (member.crashed) return;
          if (base.now() < member.pausedUntil) {
            this.schedule(current, member.pausedUntil - base.now());
            return;
          }
          work.call(this, current);
          afterAction(base.now() === member.pausedUntil);
        },
        delay,
        state,
      );
    },
  };
}

export class Ring {
  readonly time = new VirtualTimeScheduler(VirtualAction, Infinity);
  readonly store: ClusterStore = createClusterStore();
  readonly members: RingMemberHandle[] = [];
  /** Every moment two members owned one bucket: `t: bucket b: a, c`. */
  readonly overlaps: string[] = [];
  /** For each bucket, since when nobody has owned it (undefined while owned). */
  private readonly unownedSince: (number | undefined)[];
  /** Every interval a bucket spent unowned: [bucket, from, to]. */
  readonly gaps: [number, number, number][] = [];
  private readonly subscriptions = new Map<string, Subscription>();
  /** Set by anything that can change who owns what; the referee skips actions that changed nothing. */
  private dirty = true;

  constructor(readonly buckets = 16) {
    this.unownedSince = new Array<number | undefined>(buckets).fill(0);
  }

  add(id: string, options: MemberOptions = {}): RingMemberHandle {
    let scheduler: SchedulerLike | undefined;
    const member: RingMemberHandle = {
      id,
      events: [],
      owned: new Set(),
      fault: undefined,
      latency: options.latency ?? 20,
      watchLag: options.watchLag ?? 0,
      pausedUntil: 0,
      crashed: false,
      left: false,
      servingUntil: -Infinity,
      now: () => scheduler!.now(),
    };
    scheduler = skewedScheduler(
      processScheduler(this.time, member, (resumed) => {
        // A member waking up counts as an owner again.
        if (resumed) this.dirty = true;
        this.check();
      }),
      options.clock,
    );
    const fault = (): LeaseFault | undefined => (member.crashed ? 'hang' : member.fault);
    const client = storeLeaseClient(this.store, { scheduler, latency: () => member.latency, fault });
    const view = informerFrom(storeListerWatcher(this.store, leases, { scheduler, latency: () => ({ there: member.latency / 2, back: member.latency / 2 + member.watchLag }), fault, namespace: RING.namespace, labelSelector: `${RING_LABEL}=${RING.name}` }), {
      name: `ring@${id}`,
      scheduler,
      backoff: ringViewBackoff(TIMINGS),
      // Crashes, cuts and partitions are the point: their warnings would only be noise here.
      logger: silentLogger,
    });
    this.subscriptions.set(
      id,
      ringMembership(client, view.informer$, { ring: RING, identity: id, buckets: this.buckets, scheduler, logger: silentLogger, ...TIMINGS }).subscribe((event) => {
        member.events.push({ at: this.time.now(), event });
        this.dirty = true;
        if (event.type === 'acquired') for (const bucket of event.buckets) member.owned.add(bucket);
        if (event.type === 'released') for (const bucket of event.buckets) member.owned.delete(bucket);
        if (event.type === 'renewed') member.servingUntil = event.servingUntil;
      }),
    );
    this.members.push(member);
    return member;
  }

  /** Graceful leave: unsubscribes, which stops serving at once and releases the Lease. */
  leave(member: RingMemberHandle): void {
    this.dirty = true;
    member.left = true;
    member.owned.clear();
    this.subscriptions.get(member.id)?.unsubscribe();
    this.check();
  }

  crash(member: RingMemberHandle): void {
    this.dirty = true;
    member.crashed = true;
    this.check();
  }

  /** Members that can own buckets now: neither crashed nor gone. A paused member still holds what it held. */
  present(): RingMemberHandle[] {
    return this.members.filter((m) => !m.crashed && !m.left);
  }

  /**
   * The referee: no bucket with two owners, where an owner is a member that holds the bucket, is
   * running (not paused) and has not passed its renewal deadline on its own clock (past it, the
   * data path refuses every event); gaps tracked.
   */
  check(): void {
    // Between events, only clocks move, and a clock passing a deadline removes an owner, never adds one.
    if (!this.dirty) return;
    this.dirty = false;
    const now = this.time.now();
    const running = this.present().filter((m) => now >= m.pausedUntil && m.now() < m.servingUntil);
    for (let bucket = 0; bucket < this.buckets; bucket++) {
      const owners = running.filter((m) => m.owned.has(bucket));
      if (owners.length > 1) this.overlaps.push(`${now}: bucket ${bucket}: ${owners.map((m) => m.id).join(', ')}`);
      const held = this.present().some((m) => m.owned.has(bucket));
      const since = this.unownedSince[bucket];
      if (held && since !== undefined) {
        this.gaps.push([bucket, since, now]);
        this.unownedSince[bucket] = undefined;
      } else if (!held && since === undefined) this.unownedSince[bucket] = now;
    }
  }

  /** The longest time any bucket has been unowned, gaps still open at `now` included. */
  longestGap(after = 0): number {
    const now = this.time.now();
    const closed = this.gaps.filter(([, , to]) => to > after).map(([, from, to]) => to - Math.max(from, after));
    const open = this.unownedSince.filter((since): since is number => since !== undefined).map((since) => now - Math.max(since, after));
    return Math.max(0, ...closed, ...open);
  }

  /** Which running member owns each bucket; '' for none, 'a+b' for two. */
  ownersNow(): string[] {
    return Array.from({ length: this.buckets }, (_, bucket) =>
      this.present()
        .filter((m) => m.owned.has(bucket))
        .map((m) => m.id)
        .join('+'),
    );
  }

  /** The placement of the members present now: what the ring should settle on. */
  expected(): string[] {
    return placeBuckets(this.present().map((m) => m.id), this.buckets).map((owner) => owner ?? '');
  }

  runTo(t: number): void {
    runTo(this.time, t);
  }

  at(t: number, action: () => void): void {
    this.time.schedule(() => {
      action();
      this.dirty = true;
      this.check();
    }, t - this.time.now());
  }

  stopAll(): void {
    for (const member of this.members) if (!member.left && !member.crashed) this.leave(member);
  }
}
