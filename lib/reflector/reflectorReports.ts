import type { Health } from './health';
import type { HealthReport, ReflectorReport } from './reflectorEvent';
import { phaseOf } from './reflectorState';
import type { ReflectorContext, ReflectorInput, ReflectorRequest, ReflectorState, ReflectorTransition } from './reflectorState';
import type { RequestEnded, RequestOpened } from './requestEvent';
import type { InformerError } from '../base/errors';

/**
 * The reflector's reports, as pure functions of its transitions: `reflect` forwards what
 * {@link reportTransition} returns into its event stream, after the deltas that led to it.
 *
 * The rules:
 * 1. Health is reported when a request opens, a backoff starts or the reflector stops (each a new
 *    phase, `since` then), when a failing watch recovers, when a streaming list reaches its
 *    bookmark, and on each list page but the last (its progress).
 * 2. A request is reported when it opens and when it ends, with the items it delivered. At its
 *    bookmark a streaming list ends and the watch it goes on as opens, `continued`.
 * 3. A request ends `failed` when the transition that ends it is a failure (an error, a list cut
 *    short, a watch closed at once, a bookmark that never came), else `completed`, or `stopped`;
 *    `closed` says that the response ended by itself.
 * 4. A list opened once a resourceVersion is known (the cache synced once) is a relist. An opened
 *    request names the error that led to it.
 * 5. A stop's reports cannot travel in the stream, which is closed by then: whoever stopped it
 *    draws them with {@link stoppedHealth} and {@link requestStopped}, as an informer does.
 */

/** What the reports need beside the state machine: kept by the driver, replaced by each transition. */
export interface ReportRecord {
  /** When the current phase began (scheduler ms). */
  readonly since: number;
  /** The request in flight as reported when it opened; undefined between requests. */
  readonly request: RequestOpened | undefined;
}

/** What the driver has observed when a transition happens. */
export interface Observed {
  /** Scheduler time (ms). */
  readonly now: number;
  /** The last resourceVersion observed. */
  readonly resourceVersion: string;
  /** Items the request in flight delivered so far. */
  readonly items: number;
}

/** The result of {@link reportTransition}. */
export interface TransitionReports {
  readonly reports: readonly ReflectorReport[];
  readonly record: ReportRecord;
}

/** A list's progress, for a health report while listing. */
export interface ListProgress {
  readonly listedItems: number;
  readonly remainingItemCount: number | undefined;
}

/** How a request ended. */
type RequestEnding = Pick<RequestEnded, 'outcome' | 'error' | 'closed'>;

/** The reports of `transition`, which `input` caused in `before`. */
export function reportTransition(
  before: Pick<ReflectorTransition, 'state' | 'context'>,
  input: ReflectorInput,
  transition: ReflectorTransition,
  record: ReportRecord,
  observed: Observed,
): TransitionReports {
  const { state, context, effect } = transition;
  const { now, resourceVersion, items } = observed;
  if (effect.kind === 'continue') {
    const since = phaseOf(state) === phaseOf(before.state) ? record.since : now;
    if (input.type === 'recovered') return { reports: [healthReport(state, context, resourceVersion, since)], record: { since, request: record.request } };
    if (input.type === 'initialEventsEnd' && record.request !== undefined) {
      const health = healthReport(state, context, resourceVersion, since);
      const watch = requestOpened({ kind: 'watch', resourceVersion: input.resourceVersion }, false, undefined, true, now);
      return { reports: [health, requestEnded(record.request, items, { outcome: 'completed', error: undefined, closed: false }, now), watch], record: { since, request: watch } };
    }
    return { reports: [], record: since === record.since ? record : { since, request: record.request } };
  }
  const reports: ReflectorReport[] = [];
  if (record.request !== undefined) reports.push(requestEnded(record.request, items, endingOf(input, transition, before.context), now));
  if (effect.kind !== 'open') {
    reports.push(healthReport(state, context, resourceVersion, now));
    return { reports, record: { since: now, request: undefined } };
  }
  // A request opens from the context's resourceVersion.
  reports.push(healthReport(state, context, context.resourceVersion, now));
  const relist = effect.request.kind !== 'watch' && context.resourceVersion !== '';
  const opened = requestOpened(effect.request, relist, input.type === 'failed' ? input.error : context.lastError, false, now);
  reports.push(opened);
  return { reports, record: { since: now, request: opened } };
}

/** The health of the reflector in `state`, with the progress of a list in flight. */
export function healthReport(state: ReflectorState, context: ReflectorContext, resourceVersion: string, since: number, progress?: ListProgress): HealthReport {
  const listing = state.name === 'listing' || state.name === 'streamingList';
  const health: Health = {
    phase: phaseOf(state),
    attempt: context.failures,
    lastError: context.lastError,
    resourceVersion,
    since,
    retryInMs: state.name === 'backingOff' ? state.delayMs : undefined,
    listedItems: progress?.listedItems ?? (listing ? 0 : undefined),
    remainingItemCount: progress?.remainingItemCount,
  };
  return { type: 'health', health };
}

/** The health a stop reports, from the last report before it: idle since `at`, with its attempts and last error. */
export function stoppedHealth<H extends Health>(last: H, at: number): H {
  return { ...last, phase: 'idle', since: at, retryInMs: undefined, listedItems: undefined, remainingItemCount: undefined };
}

/** The report of a request `stopped` at `at` after delivering `items`. */
export function requestStopped(opened: RequestOpened, items: number, at: number): RequestEnded {
  return requestEnded(opened, items, { outcome: 'stopped', error: undefined, closed: false }, at);
}

function requestOpened(request: ReflectorRequest, relist: boolean, after: InformerError | undefined, continued: boolean, at: number): RequestOpened {
  // Only the summary: the reflector's request carries more, which is its own business.
  return { type: 'opened', request: { kind: request.kind, resourceVersion: request.resourceVersion }, relist, after, continued, at };
}

function requestEnded(opened: RequestOpened, items: number, ending: RequestEnding, at: number): RequestEnded {
  return { type: 'ended', request: opened.request, ...ending, items, startedAt: opened.at, at };
}

/** Rule 3: how the request in flight ended with `transition`. */
function endingOf(input: ReflectorInput, transition: ReflectorTransition, before: ReflectorContext): RequestEnding {
  if (input.type === 'stop') return { outcome: 'stopped', error: undefined, closed: false };
  if (input.type === 'failed') return { outcome: 'failed', error: input.error, closed: false };
  // A list cut short, or a watch closed at once, fails in `step` with an error of its own.
  const failed = input.type === 'initialEventsTimeout' || transition.context.failures > before.failures;
  return { outcome: failed ? 'failed' : 'completed', error: failed ? transition.context.lastError : undefined, closed: input.type === 'closed' };
}
