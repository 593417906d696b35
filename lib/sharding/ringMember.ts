import { catchError, defer, EMPTY, map, mergeMap, Observable, of, throwError, timeout, type Subscriber, type Subscription } from 'rxjs';
import type { LeaseClient } from '../leaderElection/leaseClient';
import { PendingWork } from '../leaderElection/pendingWork';
import { isConflict, isNotFound, microTime } from '../leaderElection/leaseRecord';
import type { Lease } from '../resources/builtins';
import { NetworkError } from '../base/errors';
import type { Snapshot } from '../store/snapshot';
import { planHandover, targetOf, type HandoverPlan, type PeerView } from './handover';
import { resolveRingConfig, type RingMemberConfig, type RingMemberOptions } from './ringConfig';
import { ownLease, readMember, releasedLease, WRITE_ANNOTATION, type MemberRecord } from './ringLease';

/**
 * One replica's membership in a ring, run on a scheduler (so that it runs in virtual time in
 * tests): it keeps its own Lease renewed with the buckets it claims, watches the other members'
 * Leases through a view, and starts and stops buckets by the rules of `planHandover`.
 */

/** Why a member stopped serving buckets. */
export type ReleaseReason =
  /** The placement moved them to another member (a member joined, or came back). */
  | 'rebalanced'
  /** This member could not renew its Lease (and see the renewal) within the renew deadline. */
  | 'renew-deadline'
  /** Its Lease was taken over (it was silent for two lease durations) or deleted. */
  | 'taken'
  /**
   * It left the ring: its membership was unsubscribed (for a sharded informer, its cache's last
   * subscriber left). Only a sharded informer's `ownership$` reports it, since a membership that
   * ended has nobody left to tell.
   */
  | 'left';

/** What a ring member reports: the members it sees, and the buckets it starts and stops serving. */
export type OwnershipEvent =
  /** The live members (this one included) or the buckets placed on this member changed. */
  | { readonly type: 'members'; readonly members: readonly string[]; readonly target: readonly number[] }
  /** This member serves `buckets` from now on; `owned` is everything it serves. */
  | { readonly type: 'acquired'; readonly buckets: readonly number[]; readonly owned: readonly number[] }
  /** This member stopped serving `buckets`, before any other may start them. */
  | { readonly type: 'released'; readonly buckets: readonly number[]; readonly owned: readonly number[]; readonly reason: ReleaseReason }
  /**
   * This member's view caught up with one of its renewals: it may serve its buckets until
   * `servingUntil` (its scheduler's clock), when it stops unless it renews again. Work on a
   * bucket past that instant (after a process pause, say) is unsafe: check the clock before it.
   */
  | { readonly type: 'renewed'; readonly servingUntil: number };

/** The member lost its Lease to someone else while it thought it held it. */
class LeaseTakenError extends Error {}

/** A write's outcome: the Lease as written, and whether this write (re)acquired it. */
interface Written {
  readonly lease: Lease;
  readonly acquired: boolean;
  readonly claims: readonly number[];
  readonly write: number;
  readonly sentAt: number;
}

class RingMember {
  /** The own Lease as last read or written: its resourceVersion goes with the next write. */
  private own: Lease | undefined;
  /** The last write made this member the holder, and nobody has taken the Lease since. */
  private held = false;
  private write = 0;
  /** When each recent write was sent, by write number. */
  private readonly sentAt = new Map<number, number>();
  /** Buckets the Lease has claimed without interruption, and the write that first claimed each. */
  private published = new Set<number>();
  private readonly claimedAt = new Map<number, number>();
  /** The newest own write the view has shown, and when it was sent. */
  private echoed = -1;
  private echoSentAt = -Infinity;
  private readonly active = new Set<number>();
  private readonly peers = new Map<string, PeerView>();
  private viewSynced = false;
  private ownSeen = false;
  private desired: readonly number[] = [];
  private writing = false;
  private writeAgain = false;
  /** A write failed since the last tick: the next one waits for the tick (no retry storm). */
  private writeFailed = false;
  private lastMembers = '';
  private stopped = false;
  private readonly reaping = new Set<string>();
  private readonly work = new PendingWork();
  private deadline: Subscription | undefined;
  /** Placement changes only with the member set: the last one, and its target. */
  private placedFor = '';
  private placed: readonly number[] = [];
  /** Records read from Lease objects: the view shares unchanged objects between snapshots. */
  private readonly records = new WeakMap<Lease, MemberRecord>();

  constructor(
    private readonly client: LeaseClient,
    private readonly view$: Observable<Snapshot<Lease>>,
    private readonly config: RingMemberConfig,
    private readonly subscriber: Subscriber<OwnershipEvent>,
  ) {}

  start(): void {
    this.track(() =>
      this.view$.subscribe({
        next: (snapshot) => this.onView(snapshot),
        error: (error: unknown) => this.subscriber.error(error),
      }),
    );
    this.tick();
  }

  /** Stops serving at once, cancels everything, and releases the Lease (after this returns, bounded by the renew deadline). */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.deadline?.unsubscribe();
    this.work.cancelAll();
    this.active.clear();
    if (this.held) this.release().subscribe({ error: (error: unknown) => this.config.logger.warn({ lease: this.leaseRef(), error: messageOf(error) }, 'releasing the ring lease failed') });
  }

  private tick(): void {
    if (this.stopped) return;
    this.writeFailed = false;
    this.sendWrite();
    this.evaluate();
    this.after(this.config.retryPeriod, () => this.tick());
  }

  private isLive(now: number): boolean {
    return this.held && now < this.echoSentAt + this.config.retryPeriod + this.config.renewDeadline;
  }

  /** Plans, then stops, starts, reaps and writes as the plan says. */
  private evaluate(): void {
    if (this.stopped) return;
    const { identity, buckets, leaseDuration, scheduler } = this.config;
    const now = scheduler.now();
    const live = this.viewSynced && this.isLive(now);
    const self = { identity, live, active: this.active, claimedAt: this.claimedAt, echoedWrite: this.echoed };
    const plan = planHandover(self, [...this.peers.values()], now, buckets, { leaseDuration }, (members) => this.place(members));
    if (plan.release.length > 0) this.stopServing(plan.release, live ? 'rebalanced' : 'renew-deadline');
    if (plan.acquire.length > 0) {
      for (const bucket of plan.acquire) this.active.add(bucket);
      this.config.logger.info({ ring: this.config.ring.name, identity, buckets: plan.acquire }, 'acquired buckets');
      this.subscriber.next({ type: 'acquired', buckets: plan.acquire, owned: this.owned() });
    }
    for (const peer of plan.reap) this.reap(peer);
    this.reportMembers(plan);
    this.desired = plan.claims;
    if (!sameBuckets(this.desired, this.published) && !this.writeFailed) this.sendWrite();
  }

  private place(members: readonly string[]): readonly number[] {
    const key = members.join('\u0000');
    if (key !== this.placedFor) {
      this.placedFor = key;
      this.placed = targetOf(this.config.identity, members, this.config.buckets);
    }
    return this.placed;
  }

  private stopServing(buckets: readonly number[], reason: ReleaseReason): void {
    const released = buckets.filter((bucket) => this.active.delete(bucket));
    if (released.length === 0) return;
    this.config.logger.info({ ring: this.config.ring.name, identity: this.config.identity, buckets: released, reason }, 'released buckets');
    this.subscriber.next({ type: 'released', buckets: released, owned: this.owned(), reason });
  }

  private reportMembers(plan: HandoverPlan): void {
    if (!this.viewSynced) return;
    const text = `${plan.members.join(',')}|${plan.target.join(',')}`;
    if (text === this.lastMembers) return;
    this.lastMembers = text;
    this.subscriber.next({ type: 'members', members: plan.members, target: plan.target });
  }

  private onView(snapshot: Snapshot<Lease>): void {
    if (!snapshot.synced || this.stopped) return;
    this.viewSynced = true;
    const now = this.config.scheduler.now();
    const seen = new Set<string>();
    let ownInView = false;
    for (const lease of snapshot.values()) {
      let record = this.records.get(lease);
      if (record === undefined) {
        record = readMember(lease, this.config.buckets);
        this.records.set(lease, record);
      }
      if (record.name === this.config.leaseName) {
        ownInView = true;
        this.onOwnEcho(lease, record.holder, record.write, record.transitions);
        continue;
      }
      seen.add(record.name);
      const previous = this.peers.get(record.name);
      if (record.problem !== undefined && previous?.record.problem !== record.problem) {
        this.config.logger.warn({ ring: this.config.ring.name, lease: record.name, problem: record.problem }, 'a ring member Lease blocks every bucket');
      }
      this.peers.set(record.name, { record, lease, changedAt: previous !== undefined && previous.record.text === record.text ? previous.changedAt : now });
    }
    for (const name of [...this.peers.keys()]) if (!seen.has(name)) this.peers.delete(name);
    // Our Lease deleted from under us: whoever watched that deletion may take our buckets.
    if (!ownInView && this.ownSeen && this.held) this.lose('taken');
    this.evaluate();
  }

  private onOwnEcho(lease: Lease, holder: string, write: number, transitions: number): void {
    this.ownSeen = true;
    const mine = this.own;
    if (this.held && mine !== undefined && (lease.metadata.uid !== mine.metadata.uid || (holder !== this.config.identity && transitions > (mine.spec?.leaseTransitions ?? 0)))) {
      this.lose('taken');
      return;
    }
    const sentAt = this.sentAt.get(write);
    if (holder !== this.config.identity || write <= this.echoed || sentAt === undefined) return;
    this.echoed = write;
    this.echoSentAt = sentAt;
    for (const number of [...this.sentAt.keys()]) if (number < write) this.sentAt.delete(number);
    this.deadline?.unsubscribe();
    const at = sentAt + this.config.retryPeriod + this.config.renewDeadline;
    this.deadline = this.config.scheduler.schedule(() => this.evaluate(), Math.max(0, at - this.config.scheduler.now()));
    this.subscriber.next({ type: 'renewed', servingUntil: at });
  }

  /** Stops serving everything and forgets the Lease: the next write acquires it afresh. */
  private lose(reason: ReleaseReason): void {
    this.held = false;
    this.published = new Set();
    this.claimedAt.clear();
    this.stopServing([...this.active], reason);
  }

  private sendWrite(): void {
    if (this.stopped) return;
    if (this.writing) {
      this.writeAgain = true;
      return;
    }
    this.writing = true;
    this.writeAgain = false;
    const claims = [...this.desired];
    this.track((done) =>
      (this.held && this.own !== undefined ? this.renew(this.own, claims) : this.acquire(claims)).subscribe({
        next: (written) => {
          done();
          this.onWritten(written);
        },
        error: (error: unknown) => {
          done();
          this.onWriteFailed(error, claims);
        },
      }),
    );
  }

  private onWritten({ lease, acquired, claims, write }: Written): void {
    this.writing = false;
    const recreated = !acquired && this.own !== undefined && lease.metadata.uid !== this.own.metadata.uid;
    this.own = lease;
    if (recreated) this.lose('taken');
    if (acquired || recreated) {
      this.published = new Set();
      this.claimedAt.clear();
    }
    this.held = true;
    for (const bucket of claims) if (!this.published.has(bucket)) this.claimedAt.set(bucket, write);
    for (const bucket of this.published) if (!claims.includes(bucket)) this.claimedAt.delete(bucket);
    this.published = new Set(claims);
    if (this.writeAgain) this.sendWrite();
    this.evaluate();
  }

  private onWriteFailed(error: unknown, claims: readonly number[]): void {
    this.writing = false;
    this.writeFailed = true;
    if (error instanceof LeaseTakenError) {
      this.config.logger.warn({ lease: this.leaseRef() }, 'the ring lease was taken over; rejoining');
      this.lose('taken');
      this.writeFailed = false;
      this.sendWrite();
      return;
    }
    // The write may or may not have landed: only what both versions claim is claimed for sure.
    for (const bucket of [...this.published]) {
      if (!claims.includes(bucket)) {
        this.published.delete(bucket);
        this.claimedAt.delete(bucket);
      }
    }
    this.config.logger.debug({ lease: this.leaseRef(), error: messageOf(error) }, 'ring lease write failed');
    this.evaluate();
  }

  /** A renewal with the cached Lease; on 409 a fresh read tells whether the Lease is still ours. */
  private renew(cached: Lease, claims: readonly number[]): Observable<Written> {
    return this.put(cached, claims, cached.spec?.leaseTransitions ?? 0, cached.spec?.acquireTime ?? microTime(this.config.scheduler.now()), false).pipe(
      catchError((error: unknown) => {
        if (!isConflict(error)) return throwError(() => error);
        return this.request(this.client.get(this.config.ring.namespace, this.config.leaseName)).pipe(
          mergeMap((current) => {
            const ours = current.spec?.holderIdentity === this.config.identity && current.metadata.uid === cached.metadata.uid && (current.spec?.leaseTransitions ?? 0) === (cached.spec?.leaseTransitions ?? 0);
            // Still ours (a renewal whose answer was lost moved the resourceVersion): write again.
            return ours ? this.put(current, claims, current.spec?.leaseTransitions ?? 0, current.spec?.acquireTime ?? microTime(this.config.scheduler.now()), false) : throwError(() => new LeaseTakenError());
          }),
          catchError((inner: unknown) => (isNotFound(inner) ? throwError(() => new LeaseTakenError()) : throwError(() => inner))),
        );
      }),
    );
  }

  /** Reads the own Lease and takes it (one more transition), or creates it. */
  private acquire(claims: readonly number[]): Observable<Written> {
    const { namespace } = this.config.ring;
    return this.request(this.client.get(namespace, this.config.leaseName)).pipe(
      catchError((error: unknown) => (isNotFound(error) ? of(undefined) : throwError(() => error))),
      mergeMap((current) => {
        const now = microTime(this.config.scheduler.now());
        return current === undefined ? this.put(undefined, claims, 0, now, true) : this.put(current, claims, (current.spec?.leaseTransitions ?? 0) + 1, now, true);
      }),
    );
  }

  /** Writes the own Lease: create when `base` is undefined, else update with its resourceVersion. */
  private put(base: Lease | undefined, claims: readonly number[], transitions: number, acquireTime: string, acquired: boolean): Observable<Written> {
    return defer(() => {
      const { scheduler, identity, buckets, leaseDuration, ring, leaseName } = this.config;
      const now = scheduler.now();
      const serverWrite = Number(base?.metadata.annotations?.[WRITE_ANNOTATION] ?? 0) || 0;
      const write = (this.write = Math.max(this.write, serverWrite) + 1);
      this.sentAt.set(write, now);
      const lease = ownLease(base, ring.namespace, leaseName, ring.name, {
        identity,
        claims,
        count: buckets,
        write,
        leaseDurationSeconds: Math.floor(leaseDuration / 1000),
        acquireTime,
        transitions,
        now,
      });
      return this.request(base === undefined ? this.client.create(lease) : this.client.update(lease)).pipe(map((written): Written => ({ lease: written, acquired, claims, write, sentAt: now })));
    });
  }

  private reap(peer: PeerView): void {
    const name = peer.record.name;
    if (this.reaping.has(name) || this.stopped) return;
    this.reaping.add(name);
    this.config.logger.info({ ring: this.config.ring.name, lease: name, identity: this.config.identity }, 'taking over a silent member’s lease');
    this.track((done) =>
      this.request(this.client.update(releasedLease(peer.lease, this.config.scheduler.now(), this.config.identity))).subscribe({
        next: () => undefined,
        error: (error: unknown) => {
          done();
          this.reaping.delete(name);
          this.config.logger.debug({ lease: name, error: messageOf(error) }, 'taking over a silent member’s lease failed');
        },
        complete: () => {
          done();
          this.reaping.delete(name);
        },
      }),
    );
  }

  /** Releases the own Lease if it is still ours: holder '', no claims, so the others need not wait. */
  private release(): Observable<never> {
    const { ring, leaseName, renewDeadline, scheduler } = this.config;
    const mine = this.own;
    return defer(() => this.request(this.client.get(ring.namespace, leaseName))).pipe(
      mergeMap((lease) => {
        const ours = lease.spec?.holderIdentity === this.config.identity && lease.metadata.uid === mine?.metadata.uid && (lease.spec?.leaseTransitions ?? 0) === (mine?.spec?.leaseTransitions ?? 0);
        return ours ? this.request(this.client.update(releasedLease(lease, scheduler.now(), undefined))) : EMPTY;
      }),
      timeout({ first: renewDeadline, scheduler }),
      mergeMap(() => EMPTY),
      catchError((error: unknown) => (isNotFound(error) ? EMPTY : throwError(() => error))),
    );
  }

  private request<T>(request: Observable<T>): Observable<T> {
    const { requestTimeout, scheduler } = this.config;
    return request.pipe(
      timeout({ first: requestTimeout, scheduler, with: () => throwError(() => new NetworkError(`ring lease request to ${this.leaseRef()} timed out after ${requestTimeout} ms`, 'ETIMEDOUT')) }),
    );
  }

  private owned(): number[] {
    return [...this.active].sort((a, b) => a - b);
  }

  private after(delay: number, action: () => void): void {
    if (!this.stopped) this.work.after(this.config.scheduler, delay, action);
  }

  /** Keeps a request or timer until it is done or cancelled; nothing starts once stopped. */
  private track(open: (done: () => void) => Subscription): void {
    if (!this.stopped) this.work.track(open);
  }

  private leaseRef(): string {
    return `${this.config.ring.namespace}/${this.config.leaseName}`;
  }
}

function sameBuckets(a: readonly number[], b: ReadonlySet<number>): boolean {
  return a.length === b.size && a.every((bucket) => b.has(bucket));
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * A replica's membership in a ring, as a cold Observable of {@link OwnershipEvent}s: subscribing
 * joins (creates or takes the member's own Lease and renews it every `retryPeriod`), and the
 * buckets placed on this replica are acquired once their previous owners have let them go;
 * unsubscribing stops serving at once and releases the Lease.
 *
 * @param client reads and writes the member's own Lease and takes over silent members' Leases.
 * @param view$ snapshots of the ring's Leases (an informer on `rx-informer.io/ring=<ring>`):
 *   nothing is claimed before its first synced snapshot.
 * @param options the ring, this member's identity, the bucket count and timings.
 * @returns a cold Observable that never completes; it errors only when `view$` does.
 * @throws TypeError, RangeError for invalid options (when called, not on subscription).
 */
export function ringMembership(client: LeaseClient, view$: Observable<Snapshot<Lease>>, options: RingMemberOptions): Observable<OwnershipEvent> {
  const config = resolveRingConfig(options);
  return new Observable<OwnershipEvent>((subscriber) => {
    const member = new RingMember(client, view$, config, subscriber);
    member.start();
    return () => member.stop();
  });
}
