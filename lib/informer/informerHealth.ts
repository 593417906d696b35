import { BehaviorSubject, type Observable } from 'rxjs';
import type { Health, InformerHealth } from '../reflector/health';
import { attributeTo, type InformerError, type RejectedObjectError } from '../base/errors';
import { stoppedHealth } from '../reflector/reflectorReports';

/** The health of an informer that has not run yet, or of one nobody has reported on: idle since `now`. */
export function idleHealth(now: number): InformerHealth {
  return {
    phase: 'idle',
    attempt: 0,
    lastError: undefined,
    resourceVersion: '',
    since: now,
    retryInMs: undefined,
    listedItems: undefined,
    remainingItemCount: undefined,
    rejectedObjects: 0,
    lastRejection: undefined,
  };
}

/**
 * The state behind an informer's `health$`: the reflector's latest report with its error
 * attributed to the informer (so that its message names it), and the objects its cache rejected.
 * Each report replaces the last; a late subscriber gets the latest.
 */
export class InformerHealthTracker {
  private readonly subject: BehaviorSubject<InformerHealth>;
  /** The reflector's last error and its attributed copy: reports repeat an error until it clears. */
  private reported: { readonly raw: InformerError; readonly attributed: InformerError } | undefined;
  readonly health$: Observable<InformerHealth>;

  constructor(
    private readonly name: string,
    now: number,
  ) {
    this.subject = new BehaviorSubject(idleHealth(now));
    this.health$ = this.subject.asObservable();
  }

  /** A report from the reflector (phase, attempts, last error). */
  reflector(report: Health): void {
    const { rejectedObjects, lastRejection } = this.subject.value;
    this.subject.next({ ...report, lastError: this.attributed(report.lastError), rejectedObjects, lastRejection });
  }

  /**
   * The reflector's run was stopped, which its stream cannot report (it is closed by then): idle
   * since `now`, with the attempts and last error it stopped with. Nothing while already idle.
   */
  stopped(now: number): void {
    const latest = this.subject.value;
    if (latest.phase !== 'idle') this.subject.next(stoppedHealth(latest, now));
  }

  /** An object the cache could not take; returns the rejection as reported (attributed). */
  rejected(rejection: RejectedObjectError): RejectedObjectError {
    const latest = this.subject.value;
    const lastRejection = attributeTo(rejection, this.name);
    this.subject.next({ ...latest, rejectedObjects: latest.rejectedObjects + 1, lastRejection });
    return lastRejection;
  }

  private attributed(error: InformerError | undefined): InformerError | undefined {
    if (error === undefined) return undefined;
    if (this.reported?.raw !== error) this.reported = { raw: error, attributed: attributeTo(error, this.name) };
    return this.reported.attributed;
  }
}
