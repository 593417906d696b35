import { Observable, VirtualAction, VirtualTimeScheduler, type Subscription } from 'rxjs';
import type { EventsV1Event } from '../../lib/resources/builtins';
import type { KubeObject } from '../../lib/base/object';
import { silentLogger } from '../../lib/base/logger';
import { eventRecorderFrom, type EventRecorder, type EventRecorderReport } from '../../lib/writes/eventRecorder';
import type { EventRecorderOptions } from '../../lib/writes/recorderConfig';
import type { EventApi, EventSink } from '../../lib/writes/eventSink';
import { at, runTo } from '../support/virtualClock';

/**
 * An event recorder in virtual time (ms) over a scripted sink: each write is answered after
 * `latency` ms (10 by default) with success, or as the test's script says (an error, or never);
 * every write and every report is stamped with the virtual time. Failures are read from the
 * reports, so the recorder logs nowhere unless a test gives it a logger.
 */

export type SinkOperation = 'create' | 'patch';

/** One write the sink received. */
export interface SinkCall {
  readonly at: number;
  readonly operation: SinkOperation;
  readonly event: EventsV1Event;
  /** Unsubscribed before it was answered. */
  aborted: boolean;
}

/** How the sink answers a write: after `after` ms, with success or `error`; or never. */
export type SinkAnswer = { readonly after?: number; readonly error?: unknown } | 'never';

export class RecorderHarness {
  readonly time = new VirtualTimeScheduler(VirtualAction, Infinity);
  readonly calls: SinkCall[] = [];
  readonly reports: { readonly at: number; readonly report: EventRecorderReport }[] = [];
  readonly recorder: EventRecorder;
  completedAt: number | undefined;
  private subscription: Subscription | undefined;

  constructor(
    options: Partial<EventRecorderOptions> = {},
    private readonly answer: (call: SinkCall, index: number) => SinkAnswer = () => ({}),
  ) {
    const sink: EventSink = { create: (event) => this.write('create', event), patchSeries: (event) => this.write('patch', event) };
    this.recorder = eventRecorderFrom(sink, { reportingController: 'example.com/widgets', reportingInstance: 'widgets-1', scheduler: this.time, random: () => 0, logger: silentLogger, ...options });
  }

  /** Subscribes to `writes$`, collecting reports. */
  start(): this {
    this.subscription = this.recorder.writes$.subscribe({
      next: (report) => this.reports.push({ at: this.time.now(), report }),
      complete: () => (this.completedAt = this.time.now()),
    });
    return this;
  }

  stop(): void {
    this.subscription?.unsubscribe();
  }

  /** Runs everything due up to and including virtual time `t`. */
  runTo(t: number): void {
    runTo(this.time, t);
  }

  /** Runs `action` at virtual time `t`. */
  at(t: number, action: () => void): void {
    at(this.time, t, action);
  }

  /** Each write as `<time> <operation> <event name> [count]`. */
  timeline(): string[] {
    return this.calls.map((call) => `${call.at} ${call.operation} ${call.event.metadata.name}${call.event.series === undefined ? '' : ` x${call.event.series.count}`}`);
  }

  reportTypes(): string[] {
    return this.reports.map(({ at, report }) => `${at} ${report.type}${report.type === 'failed' ? (report.willRetry ? ' retry' : ' give-up') : report.type === 'dropped' ? ` ${report.reason}` : ''}`);
  }

  private write(operation: SinkOperation, event: EventsV1Event): Observable<EventApi> {
    return new Observable<EventApi>((subscriber) => {
      const call: SinkCall = { at: this.time.now(), operation, event, aborted: false };
      const index = this.calls.push(call) - 1;
      const answer = this.answer(call, index);
      if (answer === 'never') return () => (call.aborted = true);
      let settled = false;
      const timer = this.time.schedule(() => {
        settled = true;
        if (answer.error !== undefined) subscriber.error(answer.error);
        else {
          subscriber.next('events.k8s.io/v1');
          subscriber.complete();
        }
      }, answer.after ?? 10);
      return () => {
        timer.unsubscribe();
        if (!settled) call.aborted = true;
      };
    });
  }
}

/** A widget as an informer caches it: apiVersion, kind, name, namespace, uid, resourceVersion. */
export function widget(name: string, resourceVersion = '1', uid = `uid-${name}`): KubeObject {
  return { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name, namespace: 'shop', uid, resourceVersion } };
}
