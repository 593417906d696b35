import { Observable, Subscription, asyncScheduler, defer } from 'rxjs';
import type { Observer, SchedulerLike, Subscriber } from 'rxjs';
import type { Delta } from './delta';
import type { Health } from './health';
import { silentLogger } from '../logger';
import type { Logger } from '../logger';
import { IdleTimeoutError, InformerError, NetworkError } from '../sources/errors';
import { idleWatchdog } from './idleWatchdog';
import type { ListPage, ListerWatcher, WatchEvent } from '../sources/listerWatcher';
import type { KubeObject } from '../store/object';
import { MAX_TIMER_MS, resolveBackoffConfig } from './backoff';
import type { BackoffConfig } from './backoff';
import { initialContext, phaseOf, step } from './reflectorState';
import type { ReflectorInput, ReflectorRequest, ReflectorState, ReflectorTransition } from './reflectorState';

/** Options of {@link reflect}. Every field is optional. */
export interface ReflectConfig {
  /** The informer's name, in every log line as `informer`. Default `'informer'`. */
  name?: string;
  /** Runs every timer (backoff, idle timeout, bookmark wait). Default `asyncScheduler`. */
  scheduler?: SchedulerLike;
  /** Values in [0, 1): backoff jitter and the watch `timeoutSeconds` draw. Default `Math.random`. */
  random?: () => number;
  /** Retry delays. Default: 800 ms doubling to 30 s, full jitter, reset after 2 min. */
  backoff?: BackoffConfig;
  /** Items per list page (`limit`). Default 500. */
  pageSize?: number;
  /**
   * A list that delivers no page for this long (ms) is presumed dead (a connection that stopped
   * without closing), abandoned and retried after backoff. Counted per page, so with `pageSize: 0`
   * it bounds the whole list. Default 60_000.
   */
  listPageTimeoutMs?: number;
  /** List with a streaming list (`sendInitialEvents`), falling back to paged lists. Default false. */
  streamingList?: boolean;
  /** Bounded wait (ms) for a streaming list's initial-events-end bookmark. Default 60_000. */
  initialEventsTimeoutMs?: number;
  /** Range of the server-side watch `timeoutSeconds`, drawn per watch from [min, max). Default [300, 600). */
  watchTimeoutSeconds?: { min: number; max: number };
  /** Where log lines go (pino-compatible). Default: silent. */
  logger?: Logger;
  /** Called on every phase change and list progress page. A throwing callback is logged, not fatal. */
  onHealth?: (health: Health) => void;
}

/** The annotation that marks the bookmark ending a streaming list's initial events. */
export const INITIAL_EVENTS_END_ANNOTATION = 'k8s.io/initial-events-end';

/** Seconds the client waits beyond the server's `timeoutSeconds` before calling a watch dead (kube-rs). */
const IDLE_GRACE_SECONDS = 5;

/**
 * Lists then watches a resource forever, emitting the delta stream; failures are retried, never thrown.
 *
 * client-go's Reflector as a cold Observable: a (paged or streaming) list becomes one Replace, the
 * watch that follows becomes Added/Updated/Deleted/Bookmark deltas, and every way a watch can end
 * is answered without losing or repeating state.
 *
 * ```
 * list$ (at "0")  -p1-p2|                     p2 is the last page, at rv 10
 * watch$ (at 10)        -a--b--|              clean close: re-watch at once from b's rv (12)
 * watch$ (at 12)               -c--#          # = ERROR 410 (c carried rv 13)
 * list$ (at 13)                    ~~~~-p|    ~ = backoff; relist at the last rv, not ''
 * watch$ (at 20)                         -d-
 * reflect         -R--R--A--U---D-------R-A-  R = Replace page, A/U/D = Added/Updated/Deleted
 * ```
 *
 * 1. The first list is at resourceVersion `'0'` (the watch cache), `limit` = `pageSize`; each page
 *    is emitted as a Replace page at once (first page `first`, last page `last` with the list's
 *    resourceVersion), so a large list is never held twice.
 * 2. The watch starts from the list's version with bookmarks and a `timeoutSeconds` drawn from
 *    `watchTimeoutSeconds`; nothing for `timeoutSeconds + 5 s` means a dead connection.
 * 3. A clean close or an idle timeout re-watches from the last version at once; no relist. (A watch
 *    that closes within 1 s with no event counts as a failure, so a closing server cannot spin us.)
 * 4. A 410 on the watch relists at the last version; a 410 or "too large resource version" on a list
 *    relists at `''` (a consistent read). An expired continue token restarts the list at `''` as a
 *    fresh Replace (its first page abandons the unfinished one).
 * 5. Any other failure (429, 5xx, network, 401, 403, 404, malformed data) backs off (800 ms doubling
 *    to 30 s, full jitter, reset after 2 min; a longer Retry-After wins) and retries the same kind of
 *    request. Access problems are logged as errors every time and shown in health.
 * 6. With `streamingList`, lists are watches with `sendInitialEvents`: objects are buffered until the
 *    initial-events-end bookmark and emitted as one Replace, and the same stream continues as the
 *    watch. A refusal (400/422) or no bookmark within `initialEventsTimeoutMs` falls back to paged
 *    lists for good. Reconnects are plain watches and never re-send `sendInitialEvents`.
 * 7. The resourceVersion advances on events that carry one and on bookmarks, never on the
 *    synthetic ADDEDs of a watch started at `''`/`'0'` or of a streaming list's initial events.
 *
 * Unsubscribing aborts the request in flight, clears every timer and reports health `idle`.
 *
 * ## Example
 * ```ts
 * import { reflect } from 'rx-informer';
 * import type { ListerWatcher } from 'rx-informer';
 *
 * declare const pods: ListerWatcher;
 * const subscription = reflect(pods, {
 *   name: 'pods',
 *   onHealth: (health) => console.log(health.phase, health.lastError?.message),
 * }).subscribe((delta) => console.log(delta.type));
 * // later: subscription.unsubscribe();
 * ```
 *
 * @param listerWatcher Where lists and watches come from (HTTP, or a test double).
 * @param config Names, timers and tuning; see {@link ReflectConfig}.
 * @returns A cold Observable of deltas that never errors and never completes on its own.
 * @throws RangeError at call time when the config is invalid.
 */
export function reflect<T extends KubeObject = KubeObject>(listerWatcher: ListerWatcher<T>, config: ReflectConfig = {}): Observable<Delta<T>> {
  const settings = resolveReflectConfig(config);
  return new Observable<Delta<T>>((subscriber) => runReflector(listerWatcher, settings, subscriber));
}

type ReflectSettings = ReturnType<typeof resolveReflectConfig>;

function resolveReflectConfig(config: ReflectConfig) {
  const pageSize = config.pageSize ?? 500;
  const initialEventsTimeoutMs = config.initialEventsTimeoutMs ?? 60_000;
  const listPageTimeoutMs = config.listPageTimeoutMs ?? 60_000;
  const watchTimeoutSeconds = config.watchTimeoutSeconds ?? { min: 300, max: 600 };
  if (!Number.isInteger(pageSize) || pageSize < 0) throw new RangeError(`reflect pageSize must be an integer >= 0, got ${pageSize}`);
  if (!(initialEventsTimeoutMs > 0 && initialEventsTimeoutMs <= MAX_TIMER_MS)) {
    throw new RangeError(`reflect initialEventsTimeoutMs must be in (0, ${MAX_TIMER_MS}], got ${initialEventsTimeoutMs}`);
  }
  if (!(listPageTimeoutMs > 0 && listPageTimeoutMs <= MAX_TIMER_MS)) {
    throw new RangeError(`reflect listPageTimeoutMs must be in (0, ${MAX_TIMER_MS}], got ${listPageTimeoutMs}`);
  }
  const { min, max } = watchTimeoutSeconds;
  if (!Number.isInteger(min) || !Number.isInteger(max) || min < 1 || max < min || (max + IDLE_GRACE_SECONDS) * 1000 > MAX_TIMER_MS) {
    throw new RangeError(`reflect watchTimeoutSeconds must be integers with 1 <= min <= max <= 2147478, got [${min}, ${max})`);
  }
  return {
    name: config.name ?? 'informer',
    scheduler: config.scheduler ?? asyncScheduler,
    random: config.random ?? Math.random,
    backoff: resolveBackoffConfig(config.backoff),
    pageSize,
    streamingList: config.streamingList ?? false,
    initialEventsTimeoutMs,
    listPageTimeoutMs,
    watchTimeoutSeconds: { min, max },
    logger: config.logger ?? silentLogger,
    onHealth: config.onHealth,
  };
}

/** One subscription's reflector: holds the state, opens requests, carries out transitions. */
function runReflector<T extends KubeObject>(lw: ListerWatcher<T>, settings: ReflectSettings, subscriber: Subscriber<Delta<T>>): () => void {
  const { scheduler, logger, name } = settings;
  let state: ReflectorState = { name: 'idle' };
  let context = initialContext(settings.streamingList);
  /** The last observed resourceVersion, kept here on the hot path and handed to `step` when a request ends. */
  let resourceVersion = '';
  let since = scheduler.now();
  /** The request or backoff timer in flight; replaced on every `open`/`wait`. */
  let inFlight = new Subscription();
  /** Bumped whenever `inFlight` is replaced, so late callbacks of a closed request are ignored. */
  let generation = 0;

  const log = (level: 'debug' | 'info' | 'warn' | 'error', message: string, fields: Record<string, unknown> = {}): void => {
    try {
      logger[level]({ informer: name, ...fields }, message);
    } catch {
      // A broken logger must not stop the cache; there is nowhere left to report it.
    }
  };

  const report = (progress?: { listedItems: number; remainingItemCount: number | undefined }): void => {
    if (settings.onHealth === undefined) return;
    const health: Health = {
      phase: phaseOf(state),
      attempt: context.failures,
      lastError: context.lastError,
      resourceVersion,
      since,
      retryInMs: state.name === 'backingOff' ? state.delayMs : undefined,
      listedItems: progress?.listedItems ?? (state.name === 'listing' || state.name === 'streamingList' ? 0 : undefined),
      remainingItemCount: progress?.remainingItemCount,
    };
    try {
      settings.onHealth(health);
    } catch (err) {
      log('error', 'onHealth threw', { err });
    }
  };

  const dispatch = (input: ReflectorInput): void => {
    if (state.name === 'idle' && input.type !== 'start') return;
    const previousPhase = phaseOf(state);
    const transition: ReflectorTransition = step(state, context, input, { now: scheduler.now(), random: settings.random, backoff: settings.backoff });
    state = transition.state;
    context = transition.context;
    if (transition.log !== undefined) log(transition.log.level, transition.log.message, logFields(input, transition));
    const effect = transition.effect;
    if (effect.kind === 'continue') {
      if (phaseOf(state) !== previousPhase) since = scheduler.now();
      if (input.type === 'recovered' || input.type === 'initialEventsEnd') report();
      return;
    }
    inFlight.unsubscribe();
    generation += 1;
    since = scheduler.now();
    if (effect.kind === 'stop') return report();
    if (effect.kind === 'wait') {
      inFlight = scheduler.schedule(() => dispatch({ type: 'retry' }), effect.delayMs);
      return report();
    }
    resourceVersion = context.resourceVersion;
    inFlight = new Subscription();
    report();
    open(effect.request, generation, inFlight);
  };

  const logFields = (input: ReflectorInput, transition: ReflectorTransition): Record<string, unknown> => {
    const fields: Record<string, unknown> = { resourceVersion: transition.context.resourceVersion, attempt: transition.context.failures };
    if (input.type === 'failed') fields['err'] = input.error;
    if (transition.state.name === 'backingOff') fields['retryInMs'] = transition.state.delayMs;
    return fields;
  };

  const open = (request: ReflectorRequest, current: number, sub: Subscription): void => {
    const live = (): boolean => current === generation;
    const fail = (error: unknown): void => {
      if (live()) dispatch({ type: 'failed', error: toInformerError(error), resourceVersion });
    };
    if (request.kind === 'list') {
      log('debug', 'listing', { resourceVersion: request.resourceVersion, limit: settings.pageSize });
      const options = { resourceVersion: request.resourceVersion, limit: settings.pageSize };
      // A list has no server-side timeout: without this, a connection that dies silently mid-list
      // would leave the informer listing forever.
      const pageMs = settings.listPageTimeoutMs;
      const pageWatchdog = idleWatchdog(scheduler, pageMs, () => fail(new IdleTimeoutError(pageMs, 'list')));
      sub.add(() => pageWatchdog.stop());
      sub.add(defer(() => lw.list(options)).subscribe(listObserver(live, fail, pageWatchdog.touch)));
      return;
    }
    const timeoutSeconds = drawTimeoutSeconds(settings.watchTimeoutSeconds, settings.random);
    const streaming = request.kind === 'streamingList';
    log('debug', streaming ? 'streaming list' : 'watching', { resourceVersion: request.resourceVersion, timeoutSeconds });
    const options = streaming
      ? { resourceVersion: request.resourceVersion, resourceVersionMatch: 'NotOlderThan' as const, sendInitialEvents: true, allowWatchBookmarks: true, timeoutSeconds }
      : { resourceVersion: request.resourceVersion, allowWatchBookmarks: true, timeoutSeconds };
    // The bookmark wait starts before subscribing so that a synchronous stream can cancel it.
    const initialEventsWait = streaming
      ? scheduler.schedule(() => {
          if (live()) dispatch({ type: 'initialEventsTimeout' });
        }, settings.initialEventsTimeoutMs)
      : undefined;
    if (initialEventsWait !== undefined) sub.add(initialEventsWait);
    // One lazily re-armed timer, not rxjs `timeout`, which reschedules per event (~0.65 µs each, measured).
    const idleMs = (timeoutSeconds + IDLE_GRACE_SECONDS) * 1000;
    const watchdog = idleWatchdog(scheduler, idleMs, () => fail(new IdleTimeoutError(idleMs)));
    sub.add(() => watchdog.stop());
    sub.add(defer(() => lw.watch(options)).subscribe(watchObserver(request, live, fail, initialEventsWait, watchdog.touch)));
  };

  const listObserver = (live: () => boolean, fail: (error: unknown) => void, touch: () => void): Observer<ListPage<T>> => {
    let first = true;
    let listedItems = 0;
    return {
      next: (page) => {
        if (!live()) return;
        touch();
        listedItems += page.items.length;
        subscriber.next({ type: 'Replace', items: page.items, first, last: page.last, resourceVersion: page.resourceVersion });
        first = false;
        if (page.last) {
          resourceVersion = page.resourceVersion;
          log('debug', 'list complete', { resourceVersion, items: listedItems });
          dispatch({ type: 'listed', resourceVersion: page.resourceVersion });
        } else {
          report({ listedItems, remainingItemCount: page.remainingItemCount });
        }
      },
      error: fail,
      complete: () => {
        if (live()) dispatch({ type: 'closed', resourceVersion, events: listedItems, durationMs: 0 });
      },
    };
  };

  const watchObserver = (
    request: ReflectorRequest,
    live: () => boolean,
    fail: (error: unknown) => void,
    initialEventsWait: Subscription | undefined,
    touch: () => void,
  ): Observer<WatchEvent<T>> => {
    const startedAt = scheduler.now();
    let events = 0;
    let buffer = request.kind === 'streamingList' ? new Map<string, T>() : undefined;
    // A watch from '' or '0' opens with synthetic ADDEDs of the current state, in no RV order.
    let synthetic = request.kind === 'watch' && (request.resourceVersion === '' || request.resourceVersion === '0');
    const endInitialEvents = (bookmarkVersion: string, items: T[]): void => {
      initialEventsWait?.unsubscribe();
      resourceVersion = bookmarkVersion;
      subscriber.next({ type: 'Replace', items, first: true, last: true, resourceVersion: bookmarkVersion });
      dispatch({ type: 'initialEventsEnd', resourceVersion: bookmarkVersion });
    };
    return {
      next: (event) => {
        if (!live()) return;
        touch();
        events += 1;
        const object = event.object;
        const meta = object.metadata as Partial<KubeObject['metadata']> | undefined;
        if (buffer !== undefined) {
          if (event.type !== 'BOOKMARK') {
            const key = `${meta?.namespace ?? ''}/${meta?.name ?? ''}`;
            if (event.type === 'DELETED') buffer.delete(key);
            else buffer.set(key, object);
            if (buffer.size % settings.pageSize === 0) report({ listedItems: buffer.size, remainingItemCount: undefined });
          } else if (meta?.annotations?.[INITIAL_EVENTS_END_ANNOTATION] === 'true') {
            const items = Array.from(buffer.values());
            buffer = undefined;
            endInitialEvents(meta.resourceVersion ?? '', items);
          }
          return;
        }
        const eventVersion = meta?.resourceVersion;
        if (event.type === 'ADDED') {
          if (!synthetic && eventVersion) resourceVersion = eventVersion;
          subscriber.next({ type: 'Added', object });
        } else {
          synthetic = false;
          if (eventVersion) resourceVersion = eventVersion;
          if (event.type === 'MODIFIED') subscriber.next({ type: 'Updated', object });
          else if (event.type === 'DELETED') subscriber.next({ type: 'Deleted', object });
          else if (eventVersion) subscriber.next({ type: 'Bookmark', resourceVersion: eventVersion });
        }
        if (context.failures !== 0 || context.lastError !== undefined) dispatch({ type: 'recovered' });
      },
      error: fail,
      complete: () => {
        if (live()) dispatch({ type: 'closed', resourceVersion, events, durationMs: scheduler.now() - startedAt });
      },
    };
  };

  dispatch({ type: 'start' });
  return () => dispatch({ type: 'stop' });
}

/** A whole number of seconds in [min, max) (exactly min when min === max). */
function drawTimeoutSeconds(range: { min: number; max: number }, random: () => number): number {
  if (range.max <= range.min) return range.min;
  return Math.min(range.max - 1, range.min + Math.floor(random() * (range.max - range.min)));
}

/** Anything a lister-watcher throws becomes an InformerError, so health and logs have one shape. */
function toInformerError(error: unknown): InformerError {
  if (error instanceof InformerError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new NetworkError(`the lister-watcher failed: ${message}`, undefined, { cause: error });
}
