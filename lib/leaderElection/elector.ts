import { catchError, defer, EMPTY, map, mergeMap, of, retry, throwError, timeout, type Observable, type Subscriber, type Subscription } from 'rxjs';
import type { Lease } from '../resources/builtins';
import { NetworkError } from '../base/errors';
import { JITTER_FACTOR, type ElectionConfig } from './electionConfig';
import { PendingWork } from './pendingWork';
import type { LeaseClient } from './leaseClient';
import { isConflict, isNotFound, microTime, newLease, recordText, withSpec, type LeaseSpec } from './leaseRecord';

/**
 * One candidate's run of client-go's leader election (tools/leaderelection/leaderelection.go),
 * on a scheduler so that it runs in virtual time in tests. One instance per subscription.
 *
 * Acquiring: try at once, then every retryPeriod jittered up to 120 % later, until a try wins.
 * Leading: try to renew every retryPeriod; stop leading when renewals have failed until the
 * deadline, or as soon as another candidate is seen holding the Lease. Then acquire again.
 *
 * Two deliberate differences from client-go, both making two leaders less likely, never more:
 * - The renew deadline counts from when the last successful write was *sent*, not from when its
 *   answer came back. Others count their lease duration from when they saw that write, which is
 *   after it was sent; so a slow answer can no longer eat the margin between the two.
 * - Seeing another holder while renewing ends leadership at once (client-go waits for the deadline).
 * - Releasing checks the freshly read Lease, not the last observed one, before clearing the
 *   holder, so a leader that lost its Lease during a partition never clears the next leader's.
 */

/** What {@link leaderElection} emits: this candidate's view of the election. */
export type LeaderState =
  /** Another candidate holds the Lease (`holder`), or nobody does (`undefined`), and this one waits. */
  | { readonly state: 'following'; readonly holder: string | undefined }
  /** This candidate holds the Lease since `since` (scheduler time); `transitions` counts holder changes. */
  | { readonly state: 'leading'; readonly since: number; readonly transitions: number }
  /**
   * This candidate stopped leading: renewals kept failing until the renew deadline (`error` is
   * the last failure), or another holder was seen (`'taken'`). It campaigns again at once.
   * `stopWithin` (ms) is how long work done as leader may still run: until the earliest instant
   * another candidate can acquire the Lease (its last renewal was sent `leaseDuration` before
   * then), as long as the clocks run at the same rate; 0 when another holder was seen.
   */
  | { readonly state: 'lost'; readonly reason: 'renew-deadline' | 'taken'; readonly error: unknown; readonly stopWithin: number };

/** The result of one try: won (acquired or renewed), someone else holds a valid Lease, or failed. */
type TryOutcome = 'won' | 'held' | 'failed';

const NOT_REPORTED = Symbol('not reported');

/** The elector that emitted each `leading` state: whileLeader reaches it through the state. */
const electorOf = new WeakMap<LeaderState, Elector>();

/**
 * Keeps the election that emitted `leading` from releasing its Lease when its subscription ends
 * (the Lease then expires): `whileLeader` asks for it when work done under that Lease did not
 * stop. States not emitted by an elector (a hand-made leader$) are ignored.
 */
export function withholdRelease(leading: LeaderState): void {
  electorOf.get(leading)?.withholdRelease();
}

export class Elector {
  /** The record as last seen or written (client-go's observedRecord), and when it last changed. */
  private observed: LeaseSpec | undefined;
  private observedText: string | undefined;
  private observedTime = 0;
  /** The Lease object last read or written: its resourceVersion goes with the next update. */
  private lease: Lease | undefined;
  /** When the last successful write was sent: the renew deadline counts from it. */
  private lastWriteSentAt = 0;
  private lastError: unknown;
  private reported: string | undefined | typeof NOT_REPORTED = NOT_REPORTED;
  private leading = false;
  private stopped = false;
  private releaseWithheld = false;
  private readonly work = new PendingWork();
  private deadline: Subscription | undefined;

  constructor(
    private readonly client: LeaseClient,
    private readonly config: ElectionConfig,
    private readonly subscriber: Subscriber<LeaderState>,
  ) {}

  start(): void {
    this.acquire();
  }

  /**
   * Keeps {@link stop} from releasing the Lease: it then expires `leaseDuration` after its last
   * renewal, which gives work that would not stop that long before another candidate can lead.
   */
  withholdRelease(): void {
    this.releaseWithheld = true;
  }

  /** Ends the run: cancels every timer and request, and releases the Lease if configured and held. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.cancelAll();
    if (this.releaseWithheld && this.isLeader()) {
      this.config.logger.warn({ lease: this.describe() }, 'not releasing the lease (work done as leader did not stop): it expires after leaseDuration');
      return;
    }
    if (this.config.releaseOnUnsubscribe && this.isLeader()) {
      // Runs on after the subscription, bounded by the renew deadline, as client-go's release.
      this.release().subscribe({ error: (error: unknown) => this.config.logger.warn({ lease: this.describe(), error: messageOf(error) }, 'releasing the lease failed') });
    }
  }

  private acquire(): void {
    this.track((done) =>
      this.tryAcquireOrRenew().subscribe((outcome) => {
        done();
        if (outcome === 'won') return this.becomeLeader();
        this.reportFollowing();
        const jittered = this.config.retryPeriod * (1 + this.config.random() * JITTER_FACTOR);
        this.after(jittered, () => this.acquire());
      }),
    );
  }

  private becomeLeader(): void {
    this.leading = true;
    this.reported = this.config.identity;
    this.armDeadline();
    const since = this.config.scheduler.now();
    this.config.logger.info({ lease: this.describe(), identity: this.config.identity }, 'acquired the lease');
    const leading: LeaderState = { state: 'leading', since, transitions: this.observed?.leaseTransitions ?? 0 };
    electorOf.set(leading, this);
    this.subscriber.next(leading);
    this.after(this.config.retryPeriod, () => this.renew());
  }

  private renew(): void {
    const attemptStart = this.config.scheduler.now();
    this.track((done) =>
      this.tryAcquireOrRenew().subscribe((outcome) => {
        done();
        if (outcome === 'won') {
          this.armDeadline();
          return this.after(this.config.retryPeriod, () => this.renew());
        }
        if (outcome === 'held') return this.lose('taken');
        // client-go polls every retryPeriod from the start of each try until the deadline.
        this.after(Math.max(0, attemptStart + this.config.retryPeriod - this.config.scheduler.now()), () => this.renew());
      }),
    );
  }

  private armDeadline(): void {
    this.deadline?.unsubscribe();
    const at = this.lastWriteSentAt + this.config.retryPeriod + this.config.renewDeadline;
    this.deadline = this.config.scheduler.schedule(() => this.lose('renew-deadline'), Math.max(0, at - this.config.scheduler.now()));
  }

  private lose(reason: 'renew-deadline' | 'taken'): void {
    this.cancelAll();
    this.leading = false;
    const error = reason === 'taken' ? undefined : this.lastError;
    // Others count leaseDuration from when they saw the last renewal, which was after it was sent.
    const stopWithin = reason === 'taken' ? 0 : Math.max(0, this.lastWriteSentAt + this.config.leaseDuration - this.config.scheduler.now());
    this.config.logger.warn({ lease: this.describe(), reason, error: error === undefined ? undefined : messageOf(error) }, 'lost the lease');
    this.subscriber.next({ state: 'lost', reason, error, stopWithin });
    if (!this.stopped) this.acquire();
  }

  /** client-go's `tryAcquireOrRenew`: a fast renewal with the cached Lease, else read, judge, write. */
  private tryAcquireOrRenew(): Observable<TryOutcome> {
    return defer(() => {
      const now = this.config.scheduler.now();
      const cached = this.lease;
      if (this.isLeader() && this.isLeaseValid(now) && cached !== undefined && this.observed !== undefined) {
        const renewed = this.spec(now, this.observed.acquireTime ?? microTime(now), this.observed.leaseTransitions ?? 0);
        return this.write(withSpec(cached, renewed, this.config.labels), renewed).pipe(
          map((): TryOutcome => 'won'),
          catchError((error: unknown) => {
            this.config.logger.debug({ lease: this.describe(), error: messageOf(error) }, 'fast renewal failed; reading the lease');
            return this.readAndWrite(now);
          }),
        );
      }
      return this.readAndWrite(now);
    }).pipe(
      catchError((error: unknown) => {
        this.lastError = error;
        this.config.logger.debug({ lease: this.describe(), error: messageOf(error) }, 'lease request failed');
        return of<TryOutcome>('failed');
      }),
    );
  }

  private readAndWrite(now: number): Observable<TryOutcome> {
    const { namespace, name, labels } = this.config;
    return this.request(this.client.get(namespace, name)).pipe(
      catchError((error: unknown) => (isNotFound(error) ? of(undefined) : throwError(() => error))),
      mergeMap((lease): Observable<TryOutcome> => {
        if (lease === undefined) {
          const spec = this.spec(now, microTime(now), 0);
          return this.write(newLease(namespace, name, spec, labels), spec, 'create').pipe(map(() => 'won'));
        }
        this.lease = lease;
        const text = recordText(lease.spec);
        if (text !== this.observedText) {
          this.observed = lease.spec ?? {};
          this.observedText = text;
          this.observedTime = this.config.scheduler.now();
        }
        const holder = this.observed?.holderIdentity ?? '';
        if (holder !== '' && this.isLeaseValid(now) && !this.isLeader()) return of('held');
        // Ours already: keep when we acquired it. Free or expired: take it, one more transition.
        const transitions = this.observed?.leaseTransitions ?? 0;
        const spec = this.isLeader() ? this.spec(now, this.observed?.acquireTime ?? microTime(now), transitions) : this.spec(now, microTime(now), transitions + 1);
        return this.write(withSpec(lease, spec, labels), spec).pipe(map(() => 'won'));
      }),
    );
  }

  /** Writes a record; on success it becomes the observed one, seen now (client-go's `setObservedRecord`). */
  private write(lease: Lease, spec: LeaseSpec, verb: 'create' | 'update' = 'update'): Observable<Lease> {
    return defer(() => {
      const sentAt = this.config.scheduler.now();
      return this.request(verb === 'create' ? this.client.create(lease) : this.client.update(lease)).pipe(
        map((written) => {
          this.lease = written;
          this.observed = spec;
          this.observedTime = this.config.scheduler.now();
          this.lastWriteSentAt = sentAt;
          return written;
        }),
      );
    });
  }

  /** client-go's `release`, reading the Lease afresh and clearing it only if it is still ours. */
  private release(): Observable<never> {
    const { namespace, name, identity, renewDeadline } = this.config;
    return defer(() => this.request(this.client.get(namespace, name))).pipe(
      mergeMap((lease) => {
        if (lease.spec?.holderIdentity !== identity) return EMPTY;
        const now = microTime(this.config.scheduler.now());
        const released: LeaseSpec = { holderIdentity: '', leaseDurationSeconds: 1, acquireTime: now, renewTime: now, leaseTransitions: lease.spec.leaseTransitions ?? 0 };
        return this.request(this.client.update(withSpec(lease, released, this.config.labels)));
      }),
      // A renewal still in flight may have moved the resourceVersion: read again and retry.
      retry({ delay: (error: unknown) => (isConflict(error) ? of(0) : throwError(() => error)) }),
      timeout({ first: renewDeadline, scheduler: this.config.scheduler }),
      mergeMap(() => EMPTY),
      catchError((error: unknown) => (isNotFound(error) ? EMPTY : throwError(() => error))),
    );
  }

  private request<T>(request: Observable<T>): Observable<T> {
    const { requestTimeout, scheduler } = this.config;
    return request.pipe(
      timeout({ first: requestTimeout, scheduler, with: () => throwError(() => new NetworkError(`lease request to ${this.describe()} timed out after ${requestTimeout} ms`, 'ETIMEDOUT')) }),
    );
  }

  private spec(now: number, acquireTime: string, leaseTransitions: number): LeaseSpec {
    return {
      holderIdentity: this.config.identity,
      leaseDurationSeconds: Math.floor(this.config.leaseDuration / 1000),
      acquireTime,
      renewTime: microTime(now),
      leaseTransitions,
    };
  }

  private isLeader(): boolean {
    return this.observed?.holderIdentity === this.config.identity;
  }

  private isLeaseValid(now: number): boolean {
    return this.observedTime + (this.observed?.leaseDurationSeconds ?? 0) * 1000 > now;
  }

  private reportFollowing(): void {
    const holder = this.observed?.holderIdentity || undefined;
    if (this.leading || holder === this.reported) return;
    this.reported = holder;
    this.subscriber.next({ state: 'following', holder });
  }

  private after(delay: number, action: () => void): void {
    if (this.stopped) return;
    this.work.after(this.config.scheduler, delay, action);
  }

  private track(open: (done: () => void) => Subscription): void {
    this.work.track(open);
  }

  private cancelAll(): void {
    this.deadline?.unsubscribe();
    this.deadline = undefined;
    this.work.cancelAll();
  }

  private describe(): string {
    return `${this.config.namespace}/${this.config.name}`;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
