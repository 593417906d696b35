import { NEVER, Observable } from 'rxjs';
import type { SchedulerLike } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { RunHelpers } from 'rxjs/testing';
import type { Delta } from '../../lib/reflector/delta';
import { reflectorEvents } from '../../lib/reflector/reflect';
import type { ReflectConfig } from '../../lib/reflector/reflectConfig';
import type { Health } from '../../lib/reflector/health';
import type { ReflectorEvent } from '../../lib/reflector/reflectorEvent';
import type { RequestEvent } from '../../lib/reflector/requestEvent';
import type { Logger } from '../../lib/base/logger';
import { NetworkError, StatusError } from '../../lib/base/errors';
import type { ListOptions, ListPage, ListerWatcher, WatchEvent, WatchOptions } from '../../lib/sources/listerWatcher';
import type { KubeObject } from '../../lib/base/object';

/**
 * Test support for `reflect`: a scripted ListerWatcher that records every call (what, when, with
 * which options) and every subscription's teardown, plus object, page, event and error builders.
 */

export type Call = (
  | { readonly kind: 'list'; readonly at: number; readonly options: ListOptions }
  | { readonly kind: 'watch'; readonly at: number; readonly options: WatchOptions }
) & {
  /** When the reflector's subscription to the response ended (teardown), if it did. */
  closedAt?: number;
};

export interface ScriptedListerWatcher extends ListerWatcher {
  readonly calls: Call[];
  /** Subscriptions to a scripted response that have not been torn down. */
  readonly open: () => number;
  readonly teardowns: () => number;
}

/**
 * Each list (watch) call gets the next scripted list (watch) response; when the script runs out,
 * a response that never emits. Responses are made lazily so cold marbles start at call time.
 */
export function scriptedListerWatcher(
  scheduler: SchedulerLike,
  script: { lists?: (() => Observable<ListPage>)[]; watches?: (() => Observable<WatchEvent>)[] },
): ScriptedListerWatcher {
  const lists = [...(script.lists ?? [])];
  const watches = [...(script.watches ?? [])];
  const calls: Call[] = [];
  let open = 0;
  let teardowns = 0;
  const tracked = <X>(call: Call, source: Observable<X>): Observable<X> =>
    new Observable<X>((subscriber) => {
      open += 1;
      const inner = source.subscribe(subscriber);
      return () => {
        open -= 1;
        teardowns += 1;
        call.closedAt = scheduler.now();
        inner.unsubscribe();
      };
    });
  return {
    calls,
    open: () => open,
    teardowns: () => teardowns,
    list: (options) => {
      const call: Call = { kind: 'list', at: scheduler.now(), options };
      calls.push(call);
      return tracked(call, lists.shift()?.() ?? NEVER);
    },
    watch: (options) => {
      const call: Call = { kind: 'watch', at: scheduler.now(), options };
      calls.push(call);
      return tracked(call, watches.shift()?.() ?? NEVER);
    },
  };
}

export function newTestScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

/** A calls summary that reads well in `toEqual`: `list@0 rv=0`, `list@9 rv=10 unpaged`, `watch@5 rv=10`. */
export function describeCalls(calls: readonly Call[]): string[] {
  return calls.map((call) => {
    const o = call.options as ListOptions & WatchOptions;
    const extras = [o.sendInitialEvents ? 'streaming' : '', o.resourceVersionMatch ? `match=${o.resourceVersionMatch}` : '', o.limit === 0 ? 'unpaged' : ''].filter(Boolean);
    return `${call.kind}@${call.at} rv=${o.resourceVersion ?? '(unset)'}${extras.length ? ' ' + extras.join(' ') : ''}`;
  });
}

export function pod(name: string, resourceVersion?: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', ...(resourceVersion === undefined ? {} : { resourceVersion }) } };
}

export function page(items: KubeObject[], resourceVersion: string, last = true, remainingItemCount?: number): ListPage {
  return { items, resourceVersion, last, remainingItemCount };
}

export const added = (object: KubeObject): WatchEvent => ({ type: 'ADDED', object });
export const modified = (object: KubeObject): WatchEvent => ({ type: 'MODIFIED', object });
export const deleted = (object: KubeObject): WatchEvent => ({ type: 'DELETED', object });
export const bookmark = (resourceVersion: string): WatchEvent => ({ type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: { name: '', resourceVersion } } });
export const initialEventsEnd = (resourceVersion: string): WatchEvent => ({
  type: 'BOOKMARK',
  object: { kind: 'Pod', apiVersion: 'v1', metadata: { name: '', resourceVersion, annotations: { 'k8s.io/initial-events-end': 'true' } } },
});

export function statusError(code: number, reason: string, options: { message?: string; retryAfterSeconds?: number; causeReason?: string } = {}): StatusError {
  return new StatusError(
    {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      code,
      reason,
      message: options.message ?? reason,
      ...(options.causeReason ? { details: { causes: [{ reason: options.causeReason }] } } : {}),
    },
    options.retryAfterSeconds,
  );
}

export const expired = (): StatusError => statusError(410, 'Expired', { message: 'too old resource version: 5 (10)' });
export const connectionRefused = (): NetworkError => new NetworkError('connect ECONNREFUSED 127.0.0.1:6443', 'ECONNREFUSED');

/** A logger that keeps every line. */
export function recordingLogger(): Logger & { lines: { level: string; fields: Record<string, unknown>; message: string }[] } {
  const lines: { level: string; fields: Record<string, unknown>; message: string }[] = [];
  const at = (level: string) => (fields: Record<string, unknown>, message: string) => void lines.push({ level, fields, message });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}


/** Always 0: each backoff wait is its base delay (the low end of [d, 2d)), and timeoutSeconds draws 300. */
export const zero = (): number => 0;
/** timeoutSeconds 300 (drawn with random 0) + 5 s grace. */
export const IDLE_MS = 305_000;

/** Everything one simulated run produced. */
export interface Simulation {
  readonly lw: ScriptedListerWatcher;
  readonly deltas: { at: number; delta: Delta }[];
  readonly health: Health[];
  readonly requests: RequestEvent[];
  /** Every event in order, deltas and reports alike. */
  readonly events: ReflectorEvent[];
  readonly log: ReturnType<typeof recordingLogger>['lines'];
  /** Scheduler actions still pending just after the unsubscription (leaked timers). */
  readonly pendingAfterUnsubscribe: number;
  readonly completedOrErrored: boolean;
}

/**
 * Subscribes `reflectorEvents` to a scripted ListerWatcher in virtual time, unsubscribes at `until`
 * ms, and returns the calls, deltas (with times), health and request reports and log lines.
 * Responses are built with the run's `cold` so that their marbles start when the reflector makes
 * the call.
 */
export function simulate(
  script: (helpers: RunHelpers) => { lists?: (() => Observable<ListPage>)[]; watches?: (() => Observable<WatchEvent>)[] },
  options: { until: number; config?: Omit<ReflectConfig, 'scheduler' | 'logger'> },
): Simulation {
  const scheduler = newTestScheduler();
  const deltas: { at: number; delta: Delta }[] = [];
  const health: Health[] = [];
  const requests: RequestEvent[] = [];
  const events: ReflectorEvent[] = [];
  const logger = recordingLogger();
  let lw: ScriptedListerWatcher | undefined;
  let pendingAfterUnsubscribe = -1;
  let completedOrErrored = false;
  scheduler.run((helpers) => {
    lw = scriptedListerWatcher(scheduler, script(helpers));
    const subscription = reflectorEvents(lw, { random: zero, ...options.config, scheduler, logger }).subscribe({
      next: (event) => {
        events.push(event);
        if (event.type === 'health') health.push(event.health);
        else if (event.type === 'opened' || event.type === 'ended') requests.push(event);
        else deltas.push({ at: scheduler.now(), delta: event });
      },
      error: () => (completedOrErrored = true),
      complete: () => (completedOrErrored = true),
    });
    scheduler.schedule(() => subscription.unsubscribe(), options.until);
    scheduler.schedule(() => (pendingAfterUnsubscribe = scheduler.actions.length), options.until + 1);
  });
  if (lw === undefined) throw new Error('unreachable');
  return { lw, deltas, health, requests, events, log: logger.lines, pendingAfterUnsubscribe, completedOrErrored };
}
