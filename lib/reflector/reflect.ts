import { Observable, Subscription, filter } from 'rxjs';
import type { Subscriber } from 'rxjs';
import { longDelays } from '../base/longDelays';
import type { Delta } from './delta';
import type { KubeObject } from '../base/object';
import type { ListerWatcher } from '../sources/listerWatcher';
import { isDelta } from './reflectorEvent';
import type { ReflectorEvent } from './reflectorEvent';
import { resolveReflectConfig } from './reflectConfig';
import type { ReflectConfig, ReflectSettings } from './reflectConfig';
import { reflectorLog, transitionLogFields } from './reflectorLog';
import { healthReport, reportTransition } from './reflectorReports';
import type { ReportRecord } from './reflectorReports';
import { initialContext, isFailing, step } from './reflectorState';
import type { ReflectorInput, ReflectorState } from './reflectorState';
import { openList, openWatch } from './requestStreams';
import type { RequestHost } from './requestStreams';

export type { ReflectConfig } from './reflectConfig';

/**
 * Lists then watches a resource forever, emitting its deltas and the reflector's reports; failures
 * are retried, never thrown.
 *
 * client-go's Reflector as a cold Observable: a (paged or streaming) list becomes one Replace, the
 * watch that follows becomes Added/Updated/Deleted/Bookmark deltas, and every way a watch can end
 * is answered without losing or repeating state. Reports travel among the deltas (which travel
 * unwrapped): `{ type: 'health' }` on each phase change, list progress and recovery, and `opened`
 * and `ended` for each request, with its items and how it ended.
 *
 * ```
 * list$ (at "0")  -p1-p2|                     p2 is the last page, at rv 10
 * watch$ (at 10)        -a--b--|              clean close: re-watch at once from b's rv (12)
 * watch$ (at 12)               -c--#          # = ERROR 410 (c carried rv 13)
 * list$ (at 13)                    ~~~~-p|    ~ = backoff; relist at the last rv, unpaged, not ''
 * watch$ (at 20)                         -d-
 * deltas          -R--R--A--U---D-------R-A-  R = Replace page, A/U/D = Added/Updated/Deleted
 * ```
 *
 * The rules are client-go's (`tools/cache/reflector.go`, `tools/pager/pager.go`) except where
 * said, and docs/concepts.md tells them. Each lives beside its pure function, with its reasons:
 * which request when, at which resourceVersion, after what wait
 * (`step`, reflectorState.ts); what a request asks (requestOptions.ts); what a watch event emits
 * and how the resourceVersion advances (watchEvents.ts); a streaming list's pages
 * (initialEventPages.ts); what is reported (reflectorReports.ts). This function makes the requests
 * and runs the timers: backoff, the idle timeouts of a watch and of a list page, the bounded wait
 * for a streaming list's initial-events-end bookmark.
 *
 * Unsubscribing aborts the request in flight and clears every timer. The stream is closed by
 * then, so the stop itself is not reported: health `idle` and the request `stopped` are for the
 * unsubscriber to draw (an informer's `health$` and `metrics$` do).
 *
 * ## Example
 * ```ts
 * import { reflectorEvents } from 'rx-informer/pipeline';
 * import type { ListerWatcher } from 'rx-informer/pipeline';
 *
 * declare const pods: ListerWatcher;
 * const subscription = reflectorEvents(pods, { name: 'pods' }).subscribe((event) => {
 *   if (event.type === 'health') console.log(event.health.phase, event.health.lastError?.message);
 *   else if (event.type === 'opened' || event.type === 'ended') console.log(event.type, event.request.kind);
 *   else console.log(event.type); // a delta
 * });
 * // later: subscription.unsubscribe();
 * ```
 *
 * @param listerWatcher Where lists and watches come from (HTTP, or a test double).
 * @param config Names, timers and tuning; see {@link ReflectConfig}.
 * @returns A cold Observable that never errors and never completes on its own.
 * @throws RangeError at call time when the config is invalid.
 */
export function reflectorEvents<T extends KubeObject = KubeObject>(listerWatcher: ListerWatcher<T>, config: ReflectConfig = {}): Observable<ReflectorEvent<T>> {
  const settings = resolveReflectConfig(config, listerWatcher.supportsStreamingList === true);
  return new Observable<ReflectorEvent<T>>((subscriber) => runReflector(listerWatcher, settings, subscriber));
}

/**
 * Lists then watches a resource forever, emitting the delta stream; failures are retried, never
 * thrown. The deltas of {@link reflectorEvents}, without its reports.
 *
 * ## Example
 * ```ts
 * import { reflect } from 'rx-informer/pipeline';
 * import type { ListerWatcher } from 'rx-informer/pipeline';
 *
 * declare const pods: ListerWatcher;
 * const subscription = reflect(pods, { name: 'pods' }).subscribe((delta) => console.log(delta.type));
 * // later: subscription.unsubscribe();
 * ```
 *
 * @param listerWatcher Where lists and watches come from (HTTP, or a test double).
 * @param config Names, timers and tuning; see {@link ReflectConfig}.
 * @returns A cold Observable of deltas that never errors and never completes on its own.
 * @throws RangeError at call time when the config is invalid.
 */
export function reflect<T extends KubeObject = KubeObject>(listerWatcher: ListerWatcher<T>, config: ReflectConfig = {}): Observable<Delta<T>> {
  return reflectorEvents(listerWatcher, config).pipe(filter(isDelta));
}

/** One subscription's reflector: holds the state machine, carries out its effects, forwards its reports. */
function runReflector<T extends KubeObject>(lw: ListerWatcher<T>, settings: ReflectSettings, subscriber: Subscriber<ReflectorEvent<T>>): () => void {
  const { scheduler } = settings;
  // A backoff may be capped past what one Node timer holds (`backoff.maxMs`): its wait is chained.
  const retryTimers = longDelays(scheduler);
  let state: ReflectorState = { name: 'idle' };
  let context = initialContext(settings.streamingList);
  let record: ReportRecord = { since: scheduler.now(), request: undefined };
  /** The request or backoff timer in flight: closed, then replaced, on every `open`/`wait`. */
  let inFlight = new Subscription();
  const host: RequestHost<T> = {
    lw,
    settings,
    log: reflectorLog(settings.logger, settings.name),
    resourceVersion: '',
    items: 0,
    emit: (event) => subscriber.next(event),
    progress: (listedItems, remainingItemCount) => subscriber.next(healthReport(state, context, host.resourceVersion, record.since, { listedItems, remainingItemCount })),
    dispatch: (input) => dispatch(input),
    failing: () => isFailing(context),
  };

  const dispatch = (input: ReflectorInput): void => {
    if (state.name === 'idle' && input.type !== 'start') return;
    const before = { state, context };
    const now = scheduler.now();
    const transition = step(state, context, input, { now, random: settings.random, backoff: settings.backoff, resourceGoneBackoff: settings.resourceGoneBackoff });
    ({ state, context } = transition);
    if (transition.log !== undefined) host.log(transition.log.level, transition.log.message, transitionLogFields(input, transition));
    const { effect } = transition;
    if (effect.kind !== 'continue') inFlight.unsubscribe();
    // Only the unsubscription stops the reflector: nobody is left to report to.
    if (effect.kind === 'stop') return;
    const reported = reportTransition(before, input, transition, record, { now, resourceVersion: host.resourceVersion, items: host.items });
    if (reported.record.request !== record.request) host.items = 0;
    record = reported.record;
    for (const report of reported.reports) subscriber.next(report);
    // A consumer that unsubscribed on a report has stopped the reflector.
    if (subscriber.closed) return;
    if (effect.kind === 'wait') inFlight = retryTimers.schedule(() => dispatch({ type: 'retry' }), effect.delayMs);
    if (effect.kind !== 'open') return;
    host.resourceVersion = context.resourceVersion;
    inFlight = new Subscription();
    if (effect.request.kind === 'list') openList(host, effect.request, inFlight);
    else openWatch(host, effect.request, inFlight);
  };

  dispatch({ type: 'start' });
  return () => dispatch({ type: 'stop' });
}
