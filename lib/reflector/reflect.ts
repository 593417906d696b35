import { Observable, Subscription, asyncScheduler, defer } from 'rxjs';
import type { Observer, SchedulerLike, Subscriber } from 'rxjs';
import type { Delta } from './delta';
import type { Health } from './health';
import { silentLogger } from '../base/logger';
import type { Logger } from '../base/logger';
import { IdleTimeoutError, InformerError, NetworkError } from '../base/errors';
import { idleWatchdog } from '../sources/idleWatchdog';
import { initialEventPages } from './initialEventPages';
import type { InitialEventPages } from './initialEventPages';
import type { ListOptions, ListPage, ListerWatcher, WatchEvent } from '../sources/listerWatcher';
import { defaultPageSize } from '../sources/list';
import type { KubeObject } from '../base/object';
import { MAX_TIMER_MS, resolveBackoffConfig } from './backoff';
import type { BackoffConfig } from './backoff';
import { initialContext, phaseOf, step } from './reflectorState';
import type { ReflectorInput, ReflectorRequest, ReflectorState, ReflectorTransition } from './reflectorState';
import type { RequestEvent } from './requestEvent';
import { RequestReporter } from './requestReporter';

/** Options of {@link reflect}. Every field is optional. */
export interface ReflectConfig {
  /** The informer's name, in every log line as `informer`. Default `'informer'`. */
  name?: string;
  /** Runs every timer (backoff, idle timeout, bookmark wait). Default `asyncScheduler`. */
  scheduler?: SchedulerLike;
  /** Values in [0, 1): backoff jitter and the watch `timeoutSeconds` draw. Default `Math.random`. */
  random?: () => number;
  /** Retry delays. Default: 800 ms doubling to a 30 s cap, each wait in [d, 2d), reset after 2 min without a failure. */
  backoff?: BackoffConfig;
  /**
   * Items per list page (`limit`), and per Replace page of a streaming list. Default 500. 0 lists
   * unpaged (a streaming list then still emits pages of 500).
   */
  pageSize?: number;
  /**
   * A list that delivers no page for this long (ms) is presumed dead (a connection that stopped
   * without closing), abandoned and retried after backoff. Counted per page, so with `pageSize: 0`
   * it bounds the whole list. Default 60_000.
   */
  listPageTimeoutMs?: number;
  /**
   * List with a streaming list (`sendInitialEvents`), falling back to paged lists when the server
   * cannot serve one. Default: true when the lister-watcher says it passes streaming lists on to
   * an API server (`supportsStreamingList`, as `kubeListerWatcher` does), else false.
   */
  streamingList?: boolean;
  /** Bounded wait (ms) for a streaming list's initial-events-end bookmark. Default 60_000. */
  initialEventsTimeoutMs?: number;
  /** Range of the server-side watch `timeoutSeconds`, drawn per watch from [min, max). Default [300, 600). */
  watchTimeoutSeconds?: { min: number; max: number };
  /** Where log lines go (pino-compatible). Default: silent. */
  logger?: Logger;
  /** Called on every phase change and list progress page. A throwing callback is logged, not fatal. */
  onHealth?: (health: Health) => void;
  /**
   * Called when a request opens and when it ends (with its duration and item count): what metrics
   * are built on. Costs one object per request and a counter per item; nothing when absent. A
   * throwing callback is logged, not fatal.
   */
  onRequest?: (event: RequestEvent) => void;
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
 * list$ (at 13)                    ~~~~-p|    ~ = backoff; relist at the last rv, unpaged, not ''
 * watch$ (at 20)                         -d-
 * reflect         -R--R--A--U---D-------R-A-  R = Replace page, A/U/D = Added/Updated/Deleted
 * ```
 *
 * The rules are client-go's (`tools/cache/reflector.go`, `tools/pager/pager.go`), except where said.
 *
 * 1. The first list is at resourceVersion `'0'` (the watch cache), `limit` = `pageSize`; each page
 *    is emitted as a Replace page at once (first page `first`, last page `last` with the list's
 *    resourceVersion), so a large list is never held twice.
 * 2. The watch starts from the list's version with bookmarks and a `timeoutSeconds` drawn from
 *    `watchTimeoutSeconds`; nothing for `timeoutSeconds + 5 s` means a dead connection.
 * 3. A clean close or an idle timeout re-watches from the last version at once; no relist. (A watch
 *    that closes within 1 s with no event counts as a failure, so a closing server cannot spin us.)
 * 4. A 410 on the watch relists, after a backoff, at the last version and without `limit`, so
 *    that the watch cache answers "not older than" (with `limit` the API server would read that
 *    exact, old state from etcd, and the watch from it would meet the 410 again). If the first
 *    list came back in pages, relists keep `limit` and add `resourceVersionMatch=NotOlderThan`
 *    (client-go adds nothing there).
 * 5. A 410 or "too large resource version" on a list lists at `''` (a consistent read) at once,
 *    once; if that fails too, it backs off. An expired continue token lists once more at once,
 *    whole, at the same version, as a fresh Replace (its first page abandons the unfinished one).
 * 6. Any other failure (429, 5xx, network, 401, 403, 404, malformed data) backs off (800 ms doubling
 *    to a 30 s cap, each wait drawn from [d, 2d), reset after 2 min without a failure; a longer
 *    Retry-After wins) and retries the same kind of request. (client-go relists after a failed
 *    watch unless it was refused or a 429; a re-watch is cheaper, and a server that cannot resume
 *    says so with a 410.) A 400 waits as at the cap from the first failure: the request itself is
 *    wrong. 400, 401, 403 and 404 are logged as errors every time; health shows every failure.
 * 7. With `streamingList`, lists are watches with `sendInitialEvents`: the initial events leave
 *    as Replace pages of `pageSize` as they arrive (a DELETED among them travels in a page's
 *    `deleted`), the initial-events-end bookmark ends the Replace, and the same stream continues
 *    as the watch. A refused connection or a 429 streams again after a backoff; a 410 streams
 *    again at `''` at once. A refusal (400/422) or no bookmark within `initialEventsTimeoutMs`
 *    falls back to paged lists for good; any other failure lists in pages at once and streams
 *    again at the next relist. Reconnects are plain watches and never re-send `sendInitialEvents`.
 * 8. The resourceVersion advances on events that carry one and on bookmarks, never on the
 *    synthetic ADDEDs of a watch started at `''`/`'0'` or on a streaming list's initial events.
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
  const settings = resolveReflectConfig(config, listerWatcher.supportsStreamingList === true);
  return new Observable<Delta<T>>((subscriber) => runReflector(listerWatcher, settings, subscriber));
}

type ReflectSettings = ReturnType<typeof resolveReflectConfig>;

function resolveReflectConfig(config: ReflectConfig, supportsStreamingList: boolean) {
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
    streamingList: config.streamingList ?? supportsStreamingList,
    initialEventsTimeoutMs,
    listPageTimeoutMs,
    watchTimeoutSeconds: { min, max },
    logger: config.logger ?? silentLogger,
    onHealth: config.onHealth,
    onRequest: config.onRequest,
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

  const requests = settings.onRequest === undefined ? undefined : new RequestReporter(settings.onRequest, (err) => log('error', 'onRequest threw', { err }));

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
    const previousFailures = context.failures;
    const transition: ReflectorTransition = step(state, context, input, { now: scheduler.now(), random: settings.random, backoff: settings.backoff });
    state = transition.state;
    context = transition.context;
    if (transition.log !== undefined) log(transition.log.level, transition.log.message, logFields(input, transition));
    const effect = transition.effect;
    if (effect.kind === 'continue') {
      if (phaseOf(state) !== previousPhase) since = scheduler.now();
      if (input.type === 'recovered' || input.type === 'initialEventsEnd') report();
      if (requests !== undefined && input.type === 'initialEventsEnd') {
        // The streaming list is done; the same stream goes on as a watch.
        const now = scheduler.now();
        requests.ended('completed', undefined, false, now);
        requests.opened({ kind: 'watch', resourceVersion: input.resourceVersion }, false, undefined, true, now);
      }
      return;
    }
    if (requests !== undefined) reportEnded(requests, input, transition, previousFailures);
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
    if (requests !== undefined) {
      const relist = effect.request.kind !== 'watch' && context.resourceVersion !== '';
      requests.opened(effect.request, relist, input.type === 'failed' ? input.error : context.lastError, false, since);
    }
    open(effect.request, generation, inFlight);
  };

  /** The request in flight ends with this transition: how, for `onRequest`. */
  const reportEnded = (reporter: RequestReporter, input: ReflectorInput, transition: ReflectorTransition, previousFailures: number): void => {
    const now = scheduler.now();
    if (input.type === 'stop') return reporter.ended('stopped', undefined, false, now);
    if (input.type === 'failed') return reporter.ended('failed', input.error, false, now);
    // A list cut short, or a watch that closed at once, fails in `step` with an error of its own.
    const failed = input.type === 'initialEventsTimeout' || transition.context.failures > previousFailures;
    reporter.ended(failed ? 'failed' : 'completed', failed ? transition.context.lastError : undefined, input.type === 'closed', now);
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
      const options: ListOptions = {
        resourceVersion: request.resourceVersion,
        limit: request.paged ? settings.pageSize : 0,
        ...(request.resourceVersionMatch === undefined ? {} : { resourceVersionMatch: request.resourceVersionMatch }),
      };
      log('debug', 'listing', { ...options });
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
    // One lazily re-armed timer, not rxjs `timeout`, which reschedules a timer on every event.
    const idleMs = (timeoutSeconds + IDLE_GRACE_SECONDS) * 1000;
    const watchdog = idleWatchdog(scheduler, idleMs, () => fail(new IdleTimeoutError(idleMs)));
    sub.add(() => watchdog.stop());
    const pages = initialEventsWait === undefined ? undefined : initialEvents(initialEventsWait);
    sub.add(defer(() => lw.watch(options)).subscribe(watchObserver(request, live, fail, pages, watchdog.touch)));
  };

  const listObserver = (live: () => boolean, fail: (error: unknown) => void, touch: () => void): Observer<ListPage<T>> => {
    let first = true;
    let listedItems = 0;
    return {
      next: (page) => {
        if (!live()) return;
        touch();
        listedItems += page.items.length;
        requests?.count(page.items.length);
        subscriber.next({ type: 'Replace', items: page.items, first, last: page.last, resourceVersion: page.resourceVersion });
        first = false;
        if (page.last) {
          resourceVersion = page.resourceVersion;
          log('debug', 'list complete', { resourceVersion, items: listedItems });
          dispatch({ type: 'listed', resourceVersion: page.resourceVersion });
        } else {
          dispatch({ type: 'listPage' });
          report({ listedItems, remainingItemCount: page.remainingItemCount });
        }
      },
      error: fail,
      complete: () => {
        if (live()) dispatch({ type: 'closed', resourceVersion, events: listedItems, durationMs: 0 });
      },
    };
  };

  /** Where a streaming list's initial events go: Replace pages as they arrive, then the bookmark. */
  const initialEvents = (initialEventsWait: Subscription): InitialEventPages<T> & { readonly bookmark: (version: string) => void } => {
    const pageSize = settings.pageSize > 0 ? settings.pageSize : defaultPageSize;
    const pages = initialEventPages<T>(pageSize, (page, listedItems) => {
      subscriber.next(page);
      if (!page.last) report({ listedItems, remainingItemCount: undefined });
    });
    return {
      ...pages,
      bookmark: (bookmarkVersion) => {
        initialEventsWait.unsubscribe();
        resourceVersion = bookmarkVersion;
        pages.end(bookmarkVersion);
        dispatch({ type: 'initialEventsEnd', resourceVersion: bookmarkVersion });
      },
    };
  };

  const watchObserver = (
    request: ReflectorRequest,
    live: () => boolean,
    fail: (error: unknown) => void,
    initialEventsSink: ReturnType<typeof initialEvents> | undefined,
    touch: () => void,
  ): Observer<WatchEvent<T>> => {
    const startedAt = scheduler.now();
    let events = 0;
    let streaming = initialEventsSink;
    // A watch from '' or '0' opens with synthetic ADDEDs of the current state, in no RV order.
    let synthetic = request.kind === 'watch' && (request.resourceVersion === '' || request.resourceVersion === '0');
    return {
      next: (event) => {
        if (!live()) return;
        touch();
        events += 1;
        // A streaming list's items are its initial objects; a watch's, all its events.
        if (streaming === undefined || event.type !== 'BOOKMARK') requests?.count(1);
        const object = event.object;
        const meta = object.metadata as Partial<KubeObject['metadata']> | undefined;
        if (streaming !== undefined) {
          // The initial events carry no order of versions: only the closing bookmark sets one.
          if (event.type === 'BOOKMARK') {
            if (meta?.annotations?.[INITIAL_EVENTS_END_ANNOTATION] === 'true') {
              const sink = streaming;
              streaming = undefined;
              sink.bookmark(meta.resourceVersion ?? '');
            }
          } else if (event.type === 'DELETED') {
            streaming.remove(object);
          } else {
            streaming.put(object);
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
