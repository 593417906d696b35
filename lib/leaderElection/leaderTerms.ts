import type { Observable, SchedulerLike, Subscriber, Subscription } from 'rxjs';
import type { Logger } from '../base/logger';
import { withholdRelease, type LeaderState } from './elector';

/**
 * The running side of {@link whileLeader}: one term of work per leadership, each told when it ends
 * and awaited, and an election let go only once no work runs. One instance per subscription.
 */

/** What work started for a term of leadership receives. */
export interface LeaderTerm {
  /**
   * Aborts when the term ends: the Lease was lost, or the output is stopping. The work must then
   * stop and complete once nothing of it runs any more (`reconcile`'s `signal` option does that).
   */
  readonly signal: AbortSignal;
}

/** The work {@link whileLeader} runs: made afresh for each term, or one cold Observable subscribed at each. */
export type LeaderWork<T> = ((term: LeaderTerm) => Observable<T>) | Observable<T>;

/** Why {@link whileLeader}'s output ended with `stopped`. */
export type WhileLeaderStopReason =
  /** The `signal` option aborted. */
  | 'signal'
  /** The work completed by itself while leading. */
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
  /** This candidate holds the Lease since `since` (scheduler time), `transitions` holder changes so far: its work runs (once the previous term's has stopped). */
  | { readonly type: 'leading'; readonly since: number; readonly transitions: number }
  /** This candidate stopped leading (see {@link LeaderState}'s `lost`): its work is told to stop, and given `stopWithin` ms. */
  | { readonly type: 'lost'; readonly reason: 'renew-deadline' | 'taken'; readonly error: unknown; readonly stopWithin: number }
  /** A value the work emitted. */
  | { readonly type: 'work'; readonly value: T }
  /**
   * The last event before the output completes: the work has stopped and the election has been
   * let go (which releases the Lease, unless the work did not stop). `settled` is false when the
   * last term's work had to be unsubscribed at its bound instead of completing.
   */
  | { readonly type: 'stopped'; readonly reason: WhileLeaderStopReason; readonly settled: boolean };

/** Settings of one {@link LeaderTerms} instance, resolved. */
export interface LeaderTermsConfig {
  readonly settleTimeout: number;
  readonly scheduler: SchedulerLike;
  readonly logger: Logger;
  readonly signal: AbortSignal | undefined;
}

/** A term's work, told to stop through `abort`. */
interface Term {
  readonly abort: AbortController;
  subscription: Subscription | undefined;
}

/** How a term is being ended: what bounds the wait, and until when (scheduler time). */
interface Ending {
  readonly term: Term;
  bound: 'settleTimeout' | 'stopWithin';
  until: number;
  timer: Subscription | undefined;
}

export class LeaderTerms<T> {
  private election: Subscription | undefined;
  private current: Term | undefined;
  private ending: Ending | undefined;
  private leading = false;
  /** The last `leading` state: the election to keep from releasing when work did not stop. */
  private lastLeading: LeaderState | undefined;
  /** Whether the last term's work stopped by itself (not unsubscribed at its bound). */
  private settled = true;
  private stopping: WhileLeaderStopReason | 'unsubscribed' | undefined;
  private finished = false;
  private readonly onSignal = (): void => this.stop('signal');

  constructor(
    private readonly work: LeaderWork<T>,
    private readonly config: LeaderTermsConfig,
    private readonly subscriber: Subscriber<WhileLeaderEvent<T>>,
  ) {}

  start(leader$: Observable<LeaderState>): void {
    const { signal } = this.config;
    if (signal?.aborted === true) return this.stop('signal');
    signal?.addEventListener('abort', this.onSignal, { once: true });
    const election = leader$.subscribe({
      next: (state) => this.guarded(() => this.onState(state)),
      error: (error: unknown) => this.fail(error),
      complete: () => this.guarded(() => this.stop('election-completed')),
    });
    if (this.finished) election.unsubscribe();
    else this.election = election;
  }

  /**
   * The subscriber left: stop as on a signal, in the background (nothing can be emitted any more).
   * The election stays subscribed, renewing the Lease, until the work has stopped.
   */
  unsubscribed(): void {
    if (!this.finished) this.stop('unsubscribed');
  }

  private onState(state: LeaderState): void {
    this.emit(eventOf(state));
    if (state.state === 'leading') {
      this.leading = true;
      this.lastLeading = state;
      return this.startTerm();
    }
    this.leading = false;
    if (state.state === 'lost') {
      // The Lease may be taken stopWithin from now: no work of ours may outlive that.
      if (this.current !== undefined) this.endTerm('stopWithin', state.stopWithin);
      else if (this.ending !== undefined) this.tighten(state.stopWithin);
    } else if (this.current !== undefined) {
      this.endTerm('settleTimeout', this.config.settleTimeout);
    }
  }

  private startTerm(): void {
    if (!this.leading || this.current !== undefined || this.ending !== undefined || this.stopping !== undefined) return;
    const term: Term = { abort: new AbortController(), subscription: undefined };
    this.current = term;
    this.settled = true;
    let work$: Observable<T>;
    try {
      work$ = typeof this.work === 'function' ? this.work({ signal: term.abort.signal }) : this.work;
    } catch (error: unknown) {
      return this.fail(error);
    }
    term.subscription = work$.subscribe({
      next: (value) => this.emit({ type: 'work', value }),
      error: (error: unknown) => this.onTermEnded(term, { error }),
      complete: () => this.onTermEnded(term, undefined),
    });
  }

  /** Tells the current term to stop, and waits for it at most `wait` ms. */
  private endTerm(bound: Ending['bound'], wait: number): void {
    const term = this.current;
    if (term === undefined) return;
    this.current = undefined;
    // An Observable given as is cannot be told: its teardown is its stop.
    if (typeof this.work !== 'function') {
      term.subscription?.unsubscribe();
      return this.afterTerm();
    }
    const { scheduler } = this.config;
    const ending: Ending = { term, bound, until: scheduler.now() + wait, timer: undefined };
    this.ending = ending;
    term.abort.abort(new Error(bound === 'stopWithin' ? 'the lease was lost' : 'the leader is stopping'));
    // The work may have completed as it was told.
    if (this.ending === ending) ending.timer = scheduler.schedule(() => this.overrun(ending), wait);
  }

  /** A loss while waiting for a stop: the wait ends no later than the Lease may be taken. */
  private tighten(stopWithin: number): void {
    const ending = this.ending;
    if (ending === undefined) return;
    const until = this.config.scheduler.now() + stopWithin;
    if (until >= ending.until) return;
    ending.until = until;
    ending.bound = 'stopWithin';
    ending.timer?.unsubscribe();
    ending.timer = this.config.scheduler.schedule(() => this.overrun(ending), stopWithin);
  }

  private onTermEnded(term: Term, failure: { readonly error: unknown } | undefined): void {
    if (term === this.current) {
      // Ended by itself while leading.
      this.current = undefined;
      if (failure !== undefined) return this.fail(failure.error);
      return this.stop('work-completed');
    }
    if (this.ending?.term !== term) return;
    if (failure !== undefined) this.config.logger.warn({ error: messageOf(failure.error) }, 'the work failed while it was stopping');
    this.ending.timer?.unsubscribe();
    this.ending = undefined;
    this.afterTerm();
  }

  /** The bound passed and the work still runs: stop listening to it, and say what that risks. */
  private overrun(ending: Ending): void {
    if (this.ending !== ending) return;
    this.ending = undefined;
    this.settled = false;
    const { logger, settleTimeout } = this.config;
    if (ending.bound === 'stopWithin') {
      logger.error({}, 'the work did not stop within stopWithin of losing the lease: another candidate may lead while it runs (no fencing)');
    } else {
      logger.error({ settleTimeout }, 'the work did not stop within settleTimeout of being told to: the lease will not be released but left to expire');
    }
    ending.term.subscription?.unsubscribe();
    this.afterTerm();
  }

  private afterTerm(): void {
    if (this.stopping !== undefined) this.finish();
    else this.startTerm();
  }

  /** Stops for good: the current term is told to stop and awaited, then the election is let go. */
  private stop(reason: WhileLeaderStopReason | 'unsubscribed'): void {
    if (this.stopping !== undefined || this.finished) return;
    this.stopping = reason;
    this.leading = false;
    if (this.current !== undefined) this.endTerm('settleTimeout', this.config.settleTimeout);
    else if (this.ending === undefined) this.finish();
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.config.signal?.removeEventListener('abort', this.onSignal);
    // Work that did not stop keeps the Lease unreleased: it expires instead, a lease duration later.
    if (!this.settled && this.lastLeading !== undefined) withholdRelease(this.lastLeading);
    this.election?.unsubscribe();
    if (this.stopping === 'unsubscribed' || this.stopping === undefined) return;
    this.emit({ type: 'stopped', reason: this.stopping, settled: this.settled });
    this.subscriber.complete();
  }

  /** The election or the work failed: the output fails, and nothing is awaited any more. */
  private fail(error: unknown): void {
    if (this.finished) return;
    this.finished = true;
    this.config.signal?.removeEventListener('abort', this.onSignal);
    for (const term of [this.current, this.ending?.term]) {
      term?.abort.abort(error);
      term?.subscription?.unsubscribe();
    }
    this.ending?.timer?.unsubscribe();
    this.election?.unsubscribe();
    this.subscriber.error(error);
  }

  private emit(event: WhileLeaderEvent<T>): void {
    this.subscriber.next(event);
  }

  /** What this machinery throws reaches the subscriber's error, as in every operator here. */
  private guarded(action: () => void): void {
    try {
      action();
    } catch (error: unknown) {
      this.fail(error);
    }
  }
}

/** A leader state as an output event: the same fields, with `type` in place of `state`. */
function eventOf(state: LeaderState): WhileLeaderEvent<never> {
  switch (state.state) {
    case 'following':
      return { type: 'following', holder: state.holder };
    case 'leading':
      return { type: 'leading', since: state.since, transitions: state.transitions };
    case 'lost':
      return { type: 'lost', reason: state.reason, error: state.error, stopWithin: state.stopWithin };
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
