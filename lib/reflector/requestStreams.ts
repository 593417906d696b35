import { defer } from 'rxjs';
import type { Subscription } from 'rxjs';
import type { KubeObject } from '../base/object';
import { IdleTimeoutError, InformerError, NetworkError } from '../base/errors';
import { idleWatchdog } from '../sources/idleWatchdog';
import { defaultPageSize } from '../sources/list';
import type { ListerWatcher } from '../sources/listerWatcher';
import { initialEventPages } from './initialEventPages';
import type { ReflectSettings } from './reflectConfig';
import type { ReplaceDelta } from './delta';
import type { ReflectorEvent } from './reflectorEvent';
import type { ReflectorLog } from './reflectorLog';
import type { ListRequest, ReflectorInput, ReflectorRequest } from './reflectorState';
import { drawTimeoutSeconds, listOptions, watchIdleMs, watchOptions } from './requestOptions';
import { isRequestItem, watchEventStep, watchPhaseOf } from './watchEvents';

/**
 * The requests of a reflector on the wire: each subscribes to its response and feeds the reflector
 * what arrives, as deltas, reports and state machine inputs, through the pure functions that say
 * what each page and event means. Each runs until `sub`, its part of the reflector's subscription,
 * is closed; a callback that comes after that is ignored.
 *
 * Neither a list nor a watch can hang: a list page, and a watch's next byte, are awaited for a
 * bounded time (the idle watchdog), and so is a streaming list's initial-events-end bookmark.
 */

/** The reflector a request reports to. */
export interface RequestHost<T extends KubeObject> {
  readonly lw: ListerWatcher<T>;
  readonly settings: ReflectSettings;
  readonly log: ReflectorLog;
  /** The last resourceVersion observed: a request advances it as its pages and events say. */
  resourceVersion: string;
  /** Items the request in flight has delivered. */
  items: number;
  /** Emits a delta (or a report) on the reflector's stream. */
  emit(event: ReflectorEvent<T>): void;
  /** Reports a list's progress (health). */
  progress(listedItems: number, remainingItemCount: number | undefined): void;
  /** Feeds the state machine. */
  dispatch(input: ReflectorInput): void;
  /** Failures since the last success: a watch event now means recovery. */
  failing(): boolean;
}

/** A list: each page leaves as a Replace page; the last one ends the list. */
export function openList<T extends KubeObject>(host: RequestHost<T>, request: ListRequest, sub: Subscription): void {
  const { scheduler, listPageTimeoutMs } = host.settings;
  const fail = failer(host, sub);
  const options = listOptions(request, host.settings.pageSize);
  host.log('debug', 'listing', { ...options });
  // A list has no server-side timeout: a connection that died silently would leave it listing forever.
  const watchdog = idleWatchdog(scheduler, listPageTimeoutMs, () => fail(new IdleTimeoutError(listPageTimeoutMs, 'list')));
  sub.add(() => watchdog.stop());
  let first = true;
  const pages = defer(() => host.lw.list(options)).subscribe({
    next: (page) => {
      if (sub.closed) return;
      watchdog.touch();
      host.items += page.items.length;
      host.emit({ type: 'Replace', items: page.items, first, last: page.last, resourceVersion: page.resourceVersion });
      first = false;
      if (!page.last) {
        host.dispatch({ type: 'listPage' });
        return host.progress(host.items, page.remainingItemCount);
      }
      host.resourceVersion = page.resourceVersion;
      host.log('debug', 'list complete', { resourceVersion: page.resourceVersion, items: host.items });
      host.dispatch({ type: 'listed', resourceVersion: page.resourceVersion });
    },
    error: fail,
    complete: () => {
      if (!sub.closed) host.dispatch({ type: 'closed', resourceVersion: host.resourceVersion, events: host.items, durationMs: 0 });
    },
  });
  sub.add(pages);
}

/** A watch, or a streaming list: each event goes through {@link watchEventStep}. */
export function openWatch<T extends KubeObject>(host: RequestHost<T>, request: ReflectorRequest & { readonly kind: 'watch' | 'streamingList' }, sub: Subscription): void {
  const { scheduler, initialEventsTimeoutMs } = host.settings;
  const fail = failer(host, sub);
  const streaming = request.kind === 'streamingList';
  const timeoutSeconds = drawTimeoutSeconds(host.settings.watchTimeoutSeconds, host.settings.random);
  host.log('debug', streaming ? 'streaming list' : 'watching', { resourceVersion: request.resourceVersion, timeoutSeconds });
  // The bookmark wait starts before subscribing so that a synchronous stream can cancel it.
  const bookmarkWait = streaming ? scheduler.schedule(() => host.dispatch({ type: 'initialEventsTimeout' }), initialEventsTimeoutMs) : undefined;
  sub.add(bookmarkWait);
  // One lazily re-armed timer: rxjs `timeout` would reschedule a timer on every event.
  const idleMs = watchIdleMs(timeoutSeconds);
  const watchdog = idleWatchdog(scheduler, idleMs, () => fail(new IdleTimeoutError(idleMs)));
  sub.add(() => watchdog.stop());
  // Unpaged lists (pageSize 0) still stream in pages: a page bounds what is held.
  const pages = streaming ? initialEventPages<T>(host.settings.pageSize || defaultPageSize, (page, listedItems) => emitPage(host, page, listedItems)) : undefined;
  const startedAt = scheduler.now();
  let phase = watchPhaseOf(request);
  let events = 0;
  const stream = defer(() => host.lw.watch(watchOptions(request, timeoutSeconds))).subscribe({
    next: (event) => {
      if (sub.closed) return;
      watchdog.touch();
      events += 1;
      const next = watchEventStep(phase, host.resourceVersion, event);
      phase = next.phase;
      host.resourceVersion = next.resourceVersion;
      if (isRequestItem(next.outcome)) host.items += 1;
      switch (next.outcome) {
        case 'watched':
          if (next.delta !== undefined) host.emit(next.delta);
          if (host.failing()) host.dispatch({ type: 'recovered' });
          return;
        case 'initialObject':
          return pages?.put(event.object);
        case 'initialDeletion':
          return pages?.remove(event.object);
        case 'initialEventsEnd':
          bookmarkWait?.unsubscribe();
          pages?.end(next.resourceVersion);
          return host.dispatch({ type: 'initialEventsEnd', resourceVersion: next.resourceVersion });
      }
    },
    error: fail,
    complete: () => {
      if (!sub.closed) host.dispatch({ type: 'closed', resourceVersion: host.resourceVersion, events, durationMs: scheduler.now() - startedAt });
    },
  });
  sub.add(stream);
}

/** A streaming list's Replace page, and its progress unless it is the last. */
function emitPage<T extends KubeObject>(host: RequestHost<T>, page: ReplaceDelta<T>, listedItems: number): void {
  host.emit(page);
  if (!page.last) host.progress(listedItems, undefined);
}

/** Feeds a failure of the request, unless it is closed already. */
function failer<T extends KubeObject>(host: RequestHost<T>, sub: Subscription): (error: unknown) => void {
  return (error) => {
    if (!sub.closed) host.dispatch({ type: 'failed', error: toInformerError(error), resourceVersion: host.resourceVersion });
  };
}

/** Anything a lister-watcher throws becomes an InformerError, so that health and logs have one shape. */
function toInformerError(error: unknown): InformerError {
  if (error instanceof InformerError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new NetworkError(`the lister-watcher failed: ${message}`, undefined, { cause: error });
}
