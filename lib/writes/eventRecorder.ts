import type { KubeConfig } from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { Observable, share, Subscription, timeout, type SchedulerAction, type Subscriber } from 'rxjs';
import { StatusError } from '../base/errors';
import type { KubeObject } from '../base/object';
import type { EventsV1Event } from '../resources/builtins';
import { EVENT_LIMITS, makeEvent, referenceOf, seriesKey, spamKey, withSeries, type EventDetails, type EventReference } from './eventObjects';
import { EventSeriesCache, type SeriesEntry } from './eventSeries';
import { kubeEventSink, type EventApi, type EventSink } from './eventSink';
import { recorderConfig, type EventRecorderOptions, type RecorderConfig } from './recorderConfig';
import { SpamFilter } from './spamFilter';

/** What the recorder did with an event, as `writes$` reports it. */
export type EventRecorderReport =
  /** An Event was created, or its series written. */
  | { readonly type: 'written'; readonly event: EventsV1Event; readonly operation: 'create' | 'patch'; readonly api: EventApi }
  /** A write failed; it is tried again after `retryDelay` when `willRetry`, else given up. */
  | { readonly type: 'failed'; readonly event: EventsV1Event; readonly error: unknown; readonly willRetry: boolean }
  /** A write was dropped: the queue was full, or the recorder had stopped. */
  | { readonly type: 'dropped'; readonly event: EventsV1Event; readonly reason: 'queue-full' | 'stopped' }
  /** An occurrence was dropped by the spam filter: its object's bucket was empty. */
  | { readonly type: 'filtered'; readonly event: EventsV1Event };

/** The recorder's counters since it was made. */
export interface EventRecorderStats {
  /** Occurrences taken (neither filtered nor dropped at `record`). */
  readonly recorded: number;
  /** Occurrences counted into a running series, with no write of their own. */
  readonly aggregated: number;
  /** Occurrences the spam filter dropped. */
  readonly filtered: number;
  /** Writes dropped: the queue was full, or the recorder had stopped (or its flush ran out of time). */
  readonly dropped: number;
  /** Writes the server took. */
  readonly written: number;
  /** Writes given up: refused by the server, or out of attempts. */
  readonly failed: number;
  /** Writes waiting now: queued, being retried, or in flight. */
  readonly queued: number;
  /** Events remembered for series now. */
  readonly cached: number;
}

/** Records Kubernetes Events for a controller. */
export interface EventRecorder {
  /**
   * Records one occurrence of an event about `regarding` (an object with `apiVersion`, `kind`
   * and `metadata.name`, as the cache holds it, or a reference). Never blocks and never fails
   * on I/O: it counts the occurrence into a series, or queues a write, or drops it (counted),
   * in O(1).
   *
   * @throws TypeError for an event the API server would refuse whatever happens: a type other
   *   than `Normal` or `Warning`, an empty or too long (over 128 characters) `reason` or `action`,
   *   an object without `apiVersion`, `kind` or `metadata.name`.
   */
  record(regarding: KubeObject | EventReference, details: EventDetails): void;
  /**
   * The writer: while subscribed, queued writes go to the server one at a time, series are
   * refreshed and finished on their timers, and each outcome is emitted. Shared: every
   * subscriber sees the same writer, which runs from the first subscription to the last
   * unsubscription (unsubscribing aborts the write in flight; what waits stays queued for the
   * next subscription). Completes after a stop (the `signal` option) once the flush is done.
   */
  readonly writes$: Observable<EventRecorderReport>;
  /** The counters, read now. */
  stats(): EventRecorderStats;
}

/**
 * An Event recorder writing `events.k8s.io/v1` Events through a KubeConfig (core/v1 on servers
 * without that group), with client-go's aggregation and spam filter. {@link eventRecorderFrom}
 * with {@link kubeEventSink}.
 *
 * 1. **Series** (`tools/events`): an occurrence with the same type, action, reason, reporter and
 *    objects as a remembered one (the note may differ; the first is kept) is a repeat. The first
 *    occurrence creates an Event; the second writes it as a series (`series.count: 2`); later ones
 *    only count, and the count is written every `seriesRefreshInterval` (30 min) and when the
 *    series ends, `seriesFinishAfter` (6 min) after its last occurrence. An Event the server lost
 *    meanwhile is created again.
 * 2. **Spam filter** (`tools/record`): writes that create an Event or start a series take a token
 *    from a bucket per reporter and object (25, refilled one per 5 minutes); an occurrence finding
 *    it empty is dropped (`'filtered'`). Counting into a running series is free.
 * 3. **Never blocks**: `record` is O(1); writes wait in a queue of at most `maxQueued` (1 000),
 *    beyond which they are dropped and counted; one write is in flight at a time; a failed write
 *    (network, 429, 5xx, a timeout) is retried after about 10 s, up to 12 attempts; the server's
 *    refusals (other 4xx) are given up.
 * 4. **Stopping**: when the `signal` option aborts, `record` drops (counted) and `writes$` writes
 *    what waits and the last counts of running series, once each, within `flushTimeout`, then
 *    completes. Abort it once the controller's run has completed, not with the run's own signal:
 *    a stop waits for the reconciles still running, and what they record must still be taken.
 *
 * Bounds: memory for `maxCached` events (4 096; a note is at most `NoteLengthLimit`) and as many spam
 * buckets, `maxQueued` waiting writes; one request in flight.
 *
 * ## Example
 * ```ts
 * import type { KubeConfig } from '@kubernetes/client-node';
 * import type { Deployment } from 'rx-informer';
 * import { eventRecorder } from 'rx-informer/writes';
 *
 * declare const kubeConfig: KubeConfig;
 * declare const deployment: Deployment;
 * const stop = new AbortController();
 * const recorder = eventRecorder(kubeConfig, { reportingController: 'example.com/scaler', signal: stop.signal });
 * recorder.writes$.subscribe((report) => {
 *   if (report.type === 'failed' && !report.willRetry) console.error('event lost', report.error);
 * });
 * recorder.record(deployment, { type: 'Normal', reason: 'Scaled', action: 'Scale', note: 'scaled to 3 replicas' });
 * // on shutdown: stop.abort(); writes$ completes once what was recorded is written
 * ```
 *
 * @param kubeConfig the cluster and credentials to write with.
 * @param options the reporter (required), bounds, timings, the stop signal.
 * @returns the recorder.
 * @throws TypeError, RangeError as {@link eventRecorderFrom}.
 */
export function eventRecorder(kubeConfig: KubeConfig, options: EventRecorderOptions): EventRecorder {
  return eventRecorderFrom(kubeEventSink(kubeConfig), options);
}

/**
 * {@link eventRecorder} over any {@link EventSink}: the same recorder, for Events written another
 * way, or for tests in virtual time.
 *
 * ## Example
 * ```ts
 * import { of } from 'rxjs';
 * import { eventRecorderFrom, type EventSink } from 'rx-informer/writes';
 *
 * const written: unknown[] = [];
 * const sink: EventSink = {
 *   create: (event) => (written.push(event), of('events.k8s.io/v1' as const)),
 *   patchSeries: (event) => (written.push(event), of('events.k8s.io/v1' as const)),
 * };
 * const recorder = eventRecorderFrom(sink, { reportingController: 'example.com/test' });
 * ```
 *
 * @param sink where the Events are written.
 * @param options as for {@link eventRecorder}.
 * @returns the recorder.
 * @throws TypeError for a `reportingController` that is not a qualified name or a bad
 *   `reportingInstance`; RangeError for a bound or duration out of range (checked when called).
 */
export function eventRecorderFrom(sink: EventSink, options: EventRecorderOptions): EventRecorder {
  return new Recorder(sink, recorderConfig(options));
}

interface Flight {
  readonly entry: SeriesEntry;
  subscription: Subscription;
  /** Another write of the entry was asked for while this one flew. */
  again: boolean;
}

class Recorder implements EventRecorder {
  readonly writes$: Observable<EventRecorderReport>;
  private readonly cache: EventSeriesCache;
  private readonly spam: SpamFilter;
  /** Writes to send, oldest first; a Set so that an entry waits once however often it is asked for. */
  private queue = new Set<SeriesEntry>();
  private readonly retrying = new Map<SeriesEntry, Subscription>();
  private readonly attempts = new Map<SeriesEntry, number>();
  private inFlight: Flight | undefined;
  private subscriber: Subscriber<EventRecorderReport> | undefined;
  private timers = new Subscription();
  private kick: Subscription | undefined;
  private stopping = false;
  private sequence = 0;
  private readonly counts = { recorded: 0, aggregated: 0, filtered: 0, dropped: 0, written: 0, failed: 0 };

  constructor(
    private readonly sink: EventSink,
    private readonly config: RecorderConfig,
  ) {
    this.cache = new EventSeriesCache(config.maxCached);
    this.spam = new SpamFilter(config.spamBurst, config.spamRefillPerSecond, config.maxCached);
    this.writes$ = new Observable<EventRecorderReport>((subscriber) => this.run(subscriber)).pipe(share());
    if (config.signal?.aborted === true) this.stopping = true;
    else config.signal?.addEventListener('abort', () => this.stop(), { once: true });
  }

  record(regarding: KubeObject | EventReference, details: EventDetails): void {
    checkDetails(details);
    const now = this.config.scheduler.now();
    const event = makeEvent(referenceOf(regarding), details, this.config, now, this.uniqueHex(now));
    if (this.stopping) {
      this.drop(event, 'stopped');
      return;
    }
    const key = seriesKey(event);
    const entry = this.cache.touch(key);
    if (entry !== undefined && entry.count >= 2) {
      entry.count += 1;
      entry.lastObservedMs = now;
      this.counts.recorded += 1;
      this.counts.aggregated += 1;
      return;
    }
    if (!this.spam.tryTake(spamKey(event), now)) {
      this.counts.filtered += 1;
      this.report({ type: 'filtered', event });
      return;
    }
    this.counts.recorded += 1;
    if (entry === undefined) {
      const { entry: added, evicted } = this.cache.add(key, event, now);
      if (evicted !== undefined && evicted.count >= 2 && evicted.count > evicted.written) this.enqueue(evicted);
      // A first occurrence that cannot be queued is forgotten, so that the next one starts afresh.
      if (!this.enqueue(added)) this.cache.forget(added);
    } else {
      entry.count = 2;
      entry.lastObservedMs = now;
      this.enqueue(entry);
    }
  }

  stats(): EventRecorderStats {
    return { ...this.counts, queued: this.queue.size + this.retrying.size + (this.inFlight === undefined ? 0 : 1), cached: this.cache.size };
  }

  /** Queues a write of `entry`; false when the queue is full and it was dropped. */
  private enqueue(entry: SeriesEntry, bounded = true): boolean {
    if (this.inFlight?.entry === entry) {
      this.inFlight.again = true;
      return true;
    }
    if (this.queue.has(entry) || this.retrying.has(entry)) return true;
    if (bounded && this.queue.size + this.retrying.size >= this.config.maxQueued) {
      this.drop(withSeries(entry.event, entry.count, entry.lastObservedMs), 'queue-full');
      return false;
    }
    this.queue.add(entry);
    this.scheduleKick();
    return true;
  }

  private drop(event: EventsV1Event, reason: 'queue-full' | 'stopped'): void {
    this.counts.dropped += 1;
    this.report({ type: 'dropped', event, reason });
  }

  private report(report: EventRecorderReport): void {
    this.subscriber?.next(report);
  }

  /** Sends the next write on the scheduler, not inside `record`, which must stay O(1). */
  private scheduleKick(): void {
    if (this.subscriber === undefined || this.kick !== undefined || this.inFlight !== undefined) return;
    this.kick = this.config.scheduler.schedule(() => {
      this.kick = undefined;
      this.sendNext();
    });
  }

  private sendNext(): void {
    if (this.subscriber === undefined || this.inFlight !== undefined) return;
    const entry = this.queue.values().next().value;
    if (entry === undefined) {
      if (this.stopping) this.subscriber.complete();
      return;
    }
    this.queue.delete(entry);
    this.send(entry);
  }

  private send(entry: SeriesEntry): void {
    const count = entry.count;
    const event = withSeries(entry.event, count, entry.lastObservedMs);
    const operation = entry.written === 0 ? 'create' : 'patch';
    const attempt = (this.attempts.get(entry) ?? 0) + 1;
    this.attempts.set(entry, attempt);
    const flight: Flight = { entry, subscription: Subscription.EMPTY, again: false };
    this.inFlight = flight;
    let api: EventApi = 'events.k8s.io/v1';
    const write = operation === 'create' ? this.sink.create(event) : this.sink.patchSeries(event);
    flight.subscription = write.pipe(timeout({ first: this.config.requestTimeout, scheduler: this.config.scheduler })).subscribe({
      next: (took) => {
        api = took;
      },
      error: (error: unknown) => {
        this.inFlight = undefined;
        this.failed(entry, event, operation, error, attempt);
        this.scheduleKick();
      },
      complete: () => {
        this.inFlight = undefined;
        entry.written = count;
        this.attempts.delete(entry);
        this.counts.written += 1;
        this.report({ type: 'written', event, operation, api });
        if (flight.again && entry.count > entry.written) this.enqueue(entry, false);
        this.scheduleKick();
      },
    });
  }

  private failed(entry: SeriesEntry, event: EventsV1Event, operation: 'create' | 'patch', error: unknown, attempt: number): void {
    const { logger, maxTries } = this.config;
    if (operation === 'patch' && error instanceof StatusError && error.code === 404) {
      // The Event is gone (Events live an hour on the server): create it again, series and all.
      entry.written = 0;
      this.enqueue(entry, false);
      return;
    }
    if (operation === 'create' && error instanceof StatusError && error.code === 409 && error.reason === 'AlreadyExists') {
      // An earlier attempt was taken after all: the Event exists; write the series onto it if any.
      entry.written = 1;
      this.attempts.delete(entry);
      if (entry.count > 1) this.enqueue(entry, false);
      return;
    }
    const willRetry = !this.stopping && attempt < maxTries && isTransient(error);
    this.report({ type: 'failed', event, error, willRetry });
    const fields = { event: event.metadata.name, namespace: event.metadata.namespace, reason: event.reason, attempt, error: String(error) };
    if (willRetry) {
      logger.warn(fields, 'writing an Event failed; retrying');
      const delay = this.config.retryDelay * (1 + 0.25 * this.config.random());
      this.retrying.set(
        entry,
        this.config.scheduler.schedule(() => {
          this.retrying.delete(entry);
          this.queue.add(entry);
          this.scheduleKick();
        }, delay),
      );
      return;
    }
    logger.error(fields, 'writing an Event failed; giving it up');
    this.counts.failed += 1;
    this.attempts.delete(entry);
    this.cache.forget(entry);
  }

  private run(subscriber: Subscriber<EventRecorderReport>): () => void {
    this.subscriber = subscriber;
    this.timers = new Subscription();
    if (this.stopping) this.flush();
    else {
      this.every(this.config.seriesFinishAfter, () => {
        for (const ended of this.cache.finish(this.config.scheduler.now(), this.config.seriesFinishAfter)) this.enqueue(ended);
      });
      this.every(this.config.seriesRefreshInterval, () => {
        for (const running of this.cache.unwritten()) this.enqueue(running);
      });
    }
    this.scheduleKick();
    return () => this.detach();
  }

  private every(period: number, work: () => void): void {
    this.timers.add(
      this.config.scheduler.schedule(function tick(this: SchedulerAction<undefined>) {
        work();
        this.schedule(undefined, period);
      }, period),
    );
  }

  private stop(): void {
    if (this.stopping) return;
    this.stopping = true;
    if (this.subscriber !== undefined) this.flush();
  }

  /** Queues the last counts of running series and any retry, without bound, and sets the flush deadline. */
  private flush(): void {
    this.timers.unsubscribe();
    this.timers = new Subscription();
    for (const [entry, timer] of this.retrying) {
      timer.unsubscribe();
      this.queue.add(entry);
    }
    this.retrying.clear();
    for (const running of this.cache.unwritten()) this.enqueue(running, false);
    this.timers.add(this.config.scheduler.schedule(() => this.abandonFlush(), this.config.flushTimeout));
    this.scheduleKick();
  }

  private abandonFlush(): void {
    const flight = this.inFlight;
    if (flight !== undefined) {
      this.inFlight = undefined;
      flight.subscription.unsubscribe();
      this.queue = new Set([flight.entry, ...this.queue]);
    }
    for (const entry of this.queue) this.drop(withSeries(entry.event, entry.count, entry.lastObservedMs), 'stopped');
    this.queue.clear();
    this.subscriber?.complete();
  }

  private detach(): void {
    this.subscriber = undefined;
    this.timers.unsubscribe();
    this.kick?.unsubscribe();
    this.kick = undefined;
    const flight = this.inFlight;
    if (flight !== undefined) {
      this.inFlight = undefined;
      flight.subscription.unsubscribe();
      this.queue = new Set([flight.entry, ...this.queue]);
    }
    for (const [entry, timer] of this.retrying) {
      timer.unsubscribe();
      this.queue.add(entry);
    }
    this.retrying.clear();
  }

  /** A hex suffix unique per recorder: the time in nanoseconds, as client-go's, plus a sequence within the millisecond. */
  private uniqueHex(nowMs: number): string {
    this.sequence = (this.sequence + 1) % 1_000_000;
    return (BigInt(Math.trunc(nowMs)) * 1_000_000n + BigInt(this.sequence)).toString(16);
  }
}

/** Worth another attempt: no answer (network, timeout), or the server's 429 and 5xx. Other answers refuse the Event as it is. */
function isTransient(error: unknown): boolean {
  return !(error instanceof StatusError) || error.code === 429 || error.code >= 500;
}

function checkDetails(details: EventDetails): void {
  if (details.type !== 'Normal' && details.type !== 'Warning') throw new TypeError(`an Event's type is Normal or Warning, not ${JSON.stringify(details.type)}`);
  for (const field of ['reason', 'action'] as const) {
    const value = details[field];
    if (typeof value !== 'string' || value === '' || value.length > EVENT_LIMITS[field]) {
      throw new TypeError(`an Event's ${field} must have 1 to ${EVENT_LIMITS[field]} characters, got ${JSON.stringify(value)}`);
    }
  }
}
