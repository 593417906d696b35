import type { ReflectorPhase } from './health';
import { IdleTimeoutError, NetworkError, ProtocolError, ResourceGoneError, StatusError, isExpired, isTooLargeResourceVersion } from '../base/errors';
import type { InformerError } from '../base/errors';
import { defaultResourceGoneBackoffConfig, initialBackoffState, nextBackoff } from './backoff';
import type { BackoffState, ResolvedBackoffConfig } from './backoff';

/**
 * The reflector's state machine, as plain data and one pure {@link step} function, so that every
 * decision (re-watch or relist, at which resourceVersion, now or after a backoff) can be read in
 * one place and tested without I/O. `reflect` drives it: it opens the requests, turns what they
 * deliver into inputs, and carries out each transition's effect.
 */

/**
 * A list, paged or not. Which resourceVersion and whether to page follow client-go's reflector
 * (`tools/cache/reflector.go`, `list()`), because the API server reads `limit` as part of the
 * question: `limit` with a resourceVersion other than '' and '0' (and no `resourceVersionMatch`)
 * asks for that exact, possibly long gone state, from etcd (the "legacy Exact" row of the API
 * Concepts table), whereas the same list without `limit` is answered "not older than" from the
 * watch cache.
 */
export interface ListRequest {
  readonly kind: 'list';
  /**
   * `'0'`: any cached state (the first list, cheap); `''`: a consistent read (after the last
   * version proved too old or too new); otherwise at least the last synced version.
   */
  readonly resourceVersion: string;
  /** In pages of `pageSize` (`limit` + `continue`); false: one response with everything. */
  readonly paged: boolean;
  /**
   * `NotOlderThan` on a paged list at a specific version, so that `limit` does not turn it into an
   * Exact read (client-go sends none there; see {@link listRequest}).
   */
  readonly resourceVersionMatch?: 'NotOlderThan';
  /**
   * This list is the one immediate retry at '' after its version proved unavailable (client-go's
   * `list()` retries once at once); its own failure backs off.
   */
  readonly immediateRetry: boolean;
}

/** One request to the API server. */
export type ReflectorRequest =
  | ListRequest
  /**
   * A streaming list: a watch with `sendInitialEvents=true&resourceVersionMatch=NotOlderThan`
   * whose initial ADDED events end with the `k8s.io/initial-events-end` bookmark, after which the
   * same stream goes on as a watch.
   */
  | { readonly kind: 'streamingList'; readonly resourceVersion: string }
  /** A plain watch from `resourceVersion` with bookmarks. */
  | { readonly kind: 'watch'; readonly resourceVersion: string };

/** Where the reflector is. Each state maps onto one health phase (see {@link phaseOf}). */
export type ReflectorState =
  /** Not subscribed, or unsubscribed: nothing is in flight and no timer runs. */
  | { readonly name: 'idle' }
  /**
   * A list is in flight; its pages flow out as one Replace. The cache is not replaced yet.
   * `paginated`: a page before the last has arrived, so the server pages this list.
   */
  | { readonly name: 'listing'; readonly request: ListRequest; readonly paginated: boolean }
  /**
   * A streaming list is in flight; its objects flow out as Replace pages until the
   * initial-events-end bookmark, awaited for at most the configured bounded wait.
   */
  | { readonly name: 'streamingList'; readonly request: ReflectorRequest & { readonly kind: 'streamingList' } }
  /** A watch stream is open (a plain watch, or a streaming list past its bookmark). */
  | { readonly name: 'watching'; readonly request: ReflectorRequest }
  /** The last request failed; `next` is opened after `delayMs`. */
  | { readonly name: 'backingOff'; readonly next: ReflectorRequest; readonly delayMs: number };

/** What the reflector remembers across requests. Immutable. */
export interface ReflectorContext {
  /** The last resourceVersion observed (last list, or last watch event carrying one); '' before any. */
  readonly resourceVersion: string;
  /** A list at `resourceVersion` failed as too old (410) or too new: the next list reads at ''. */
  readonly resourceVersionUnavailable: boolean;
  /**
   * Lists are streamed, until the server shows it cannot serve a streaming list (it refuses one
   * with 400 or 422, or never ends its initial events): then paged lists for the reflector's life.
   */
  readonly streamingList: boolean;
  /**
   * The first list (at '0') came back in pages, so this server pages lists (its watch cache is off
   * or was not ready): later relists page too (client-go's `paginatedResult`).
   */
  readonly paginatedResult: boolean;
  /** Consecutive failures; 0 after a successful list or a watch event. */
  readonly failures: number;
  /** The last failure, kept until the next successful list or watch event. */
  readonly lastError: InformerError | undefined;
  /** The retry delay sequence (reset by time, not by success: client-go's rule). */
  readonly backoff: BackoffState;
  /**
   * The retry delay sequence while the resource is not served (404s), apart from `backoff`'s;
   * started over by a successful list.
   */
  readonly goneBackoff: BackoffState;
}

/** Something that happened, fed to {@link step}. */
export type ReflectorInput =
  /** Subscribed: make the first request. */
  | { readonly type: 'start' }
  /** A list delivered a page that is not its last. */
  | { readonly type: 'listPage' }
  /** A list delivered its last page. */
  | { readonly type: 'listed'; readonly resourceVersion: string }
  /** A streaming list reached its initial-events-end bookmark; the same stream goes on. */
  | { readonly type: 'initialEventsEnd'; readonly resourceVersion: string }
  /** The initial-events-end bookmark did not arrive within the bounded wait. */
  | { readonly type: 'initialEventsTimeout' }
  /** A watch delivered an event after failures: the connection works again. */
  | { readonly type: 'recovered' }
  /** The request in flight ended without an error after `durationMs` and `events` events. */
  | { readonly type: 'closed'; readonly resourceVersion: string; readonly events: number; readonly durationMs: number }
  /** The request in flight failed. `resourceVersion` is the last one observed. */
  | { readonly type: 'failed'; readonly error: InformerError; readonly resourceVersion: string }
  /** The backoff wait is over. */
  | { readonly type: 'retry' }
  /** Unsubscribed. */
  | { readonly type: 'stop' };

/** What the driver must do after a transition. */
export type ReflectorEffect =
  /** Close whatever is in flight and open `request`. */
  | { readonly kind: 'open'; readonly request: ReflectorRequest }
  /** Close whatever is in flight and feed `retry` after `delayMs`. */
  | { readonly kind: 'wait'; readonly delayMs: number }
  /** Keep the stream in flight. */
  | { readonly kind: 'continue' }
  /** Close everything. */
  | { readonly kind: 'stop' };

/** A log line the transition deserves; the driver adds the informer's name and details. */
export interface ReflectorLogLine {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly message: string;
}

/** The result of {@link step}. */
export interface ReflectorTransition {
  readonly state: ReflectorState;
  readonly context: ReflectorContext;
  readonly effect: ReflectorEffect;
  readonly log: ReflectorLogLine | undefined;
}

/** What {@link step} needs from outside: the clock, the jitter source and the backoff config. */
export interface StepEnvironment {
  readonly now: number;
  readonly random: () => number;
  readonly backoff: ResolvedBackoffConfig;
  /** The delays while the resource is not served. Default `defaultResourceGoneBackoffConfig`. */
  readonly resourceGoneBackoff?: ResolvedBackoffConfig;
}

/** A watch that closes sooner than this with no event is a failure (else a closing server spins us). */
export const MIN_HEALTHY_WATCH_MS = 1000;

/** The reflector before its first request. */
export function initialContext(streamingList: boolean): ReflectorContext {
  return {
    resourceVersion: '',
    resourceVersionUnavailable: false,
    streamingList,
    paginatedResult: false,
    failures: 0,
    lastError: undefined,
    backoff: initialBackoffState,
    goneBackoff: initialBackoffState,
  };
}

/** Failures since the last success: the next watch event means the connection works again (`recovered`). */
export function isFailing(context: ReflectorContext): boolean {
  return context.failures !== 0 || context.lastError !== undefined;
}

/** The health phase a state shows as. */
export function phaseOf(state: ReflectorState): ReflectorPhase {
  return state.name === 'streamingList' ? 'listing' : state.name;
}

/**
 * The list that brings the cache back. Streamed from the last version (or '' before any, or when
 * that version is unavailable: client-go's `rewatchResourceVersion`), or else a list at '0' first,
 * the last version later, '' when that is unavailable (client-go's `relistResourceVersion`).
 * Relisting at the last version rather than '' lets the watch cache answer (no etcd stampede).
 */
export function relistRequest(context: ReflectorContext): ReflectorRequest {
  if (context.streamingList) return { kind: 'streamingList', resourceVersion: context.resourceVersionUnavailable ? '' : context.resourceVersion };
  const resourceVersion = context.resourceVersionUnavailable ? '' : context.resourceVersion === '' ? '0' : context.resourceVersion;
  return listRequest(resourceVersion, context.paginatedResult, false);
}

/**
 * A list at `resourceVersion`, paged as client-go pages it: at '' and '0' in pages, at a specific
 * version unpaged so that the watch cache serves it, unless the server paged the first list
 * (`paginatedResult`). There client-go keeps `limit` with a bare resourceVersion, which the API
 * server answers with the exact old state (from etcd); we add `resourceVersionMatch=NotOlderThan`,
 * which keeps the pages and asks for a current state, so that the watch that follows does not
 * meet the same 410 again.
 */
export function listRequest(resourceVersion: string, paginatedResult: boolean, immediateRetry: boolean): ListRequest {
  const specific = resourceVersion !== '' && resourceVersion !== '0';
  if (!specific) return { kind: 'list', resourceVersion, paged: true, immediateRetry };
  if (!paginatedResult) return { kind: 'list', resourceVersion, paged: false, immediateRetry };
  return { kind: 'list', resourceVersion, paged: true, resourceVersionMatch: 'NotOlderThan', immediateRetry };
}

/** The states in which a request is in flight. */
type RequestState = ReflectorState & { readonly name: 'listing' | 'streamingList' | 'watching' };

/** The one transition function. Inputs that do not apply to the current state change nothing. */
export function step(state: ReflectorState, context: ReflectorContext, input: ReflectorInput, env: StepEnvironment): ReflectorTransition {
  switch (input.type) {
    case 'start':
      return open(context, relistRequest(context), undefined);
    case 'stop':
      return { state: { name: 'idle' }, context, effect: { kind: 'stop' }, log: { level: 'debug', message: 'stopped' } };
    case 'retry':
      return state.name === 'backingOff' ? open(context, state.next, undefined) : unchanged(state, context);
    case 'listPage':
      if (state.name !== 'listing' || state.paginated) return unchanged(state, context);
      return { state: { ...state, paginated: true }, context, effect: { kind: 'continue' }, log: undefined };
    case 'listed': {
      if (state.name !== 'listing') return unchanged(state, context);
      // Only the first list decides: a later one at '' is paged from etcd even with a watch cache.
      const paginatedResult = context.paginatedResult || (state.request.resourceVersion === '0' && state.paginated);
      const listed = { ...synced(context, input.resourceVersion), paginatedResult };
      return open(listed, { kind: 'watch', resourceVersion: input.resourceVersion }, info('listed; watching'));
    }
    case 'initialEventsEnd':
      if (state.name !== 'streamingList') return unchanged(state, context);
      return { state: { name: 'watching', request: state.request }, context: synced(context, input.resourceVersion), effect: { kind: 'continue' }, log: info('initial events received; watching') };
    case 'initialEventsTimeout':
      if (state.name !== 'streamingList') return unchanged(state, context);
      return listInstead({ ...context, streamingList: false }, { level: 'warn', message: 'no initial-events-end bookmark in time: the server does not stream lists; listing in pages from now on' });
    case 'recovered':
      return { state, context: { ...context, failures: 0, lastError: undefined }, effect: { kind: 'continue' }, log: info('watch healthy again') };
    case 'closed':
      if (state.name === 'idle' || state.name === 'backingOff') return unchanged(state, context);
      return closed(state, { ...context, resourceVersion: input.resourceVersion }, input, env);
    case 'failed':
      if (state.name === 'idle' || state.name === 'backingOff') return unchanged(state, context);
      return failed(state, { ...context, resourceVersion: input.resourceVersion }, input.error, env);
  }
}

function closed(state: RequestState, context: ReflectorContext, input: ReflectorInput & { type: 'closed' }, env: StepEnvironment): ReflectorTransition {
  switch (state.name) {
    case 'listing':
      return failed(state, context, new ProtocolError('truncated-stream', 'the list ended before its last page'), env);
    case 'streamingList':
      return failed(state, context, new ProtocolError('truncated-stream', 'the streaming list ended before its initial-events-end bookmark'), env);
    case 'watching':
      if (input.events === 0 && input.durationMs < MIN_HEALTHY_WATCH_MS) {
        return failed(state, context, new NetworkError(`the watch closed after ${input.durationMs} ms without any event`), env);
      }
      return open(context, { kind: 'watch', resourceVersion: context.resourceVersion }, { level: 'debug', message: 'watch closed; re-watching' });
  }
}

function failed(state: RequestState, context: ReflectorContext, error: InformerError, env: StepEnvironment): ReflectorTransition {
  if (error instanceof StatusError && error.code === 404) return resourceGone(context, ResourceGoneError.fromNotFound(error), env);
  const failing: ReflectorContext = { ...context, failures: context.failures + 1, lastError: error };
  switch (state.name) {
    case 'listing':
      return listFailed(state, failing, error, env);
    case 'streamingList':
      return streamingListFailed(state, context, error, env);
    case 'watching':
      if (isExpired(error)) return backOff(failing, relistRequest(failing), error, env);
      if (error instanceof IdleTimeoutError) {
        // The wait was the timeout itself: reconnect at once.
        return open(failing, { kind: 'watch', resourceVersion: failing.resourceVersion }, { level: 'warn', message: 'watch idle; re-watching' });
      }
      // client-go relists here (after a backoff) unless the error is a refused connection or a
      // 429; re-watching from the last version is cheaper, and a server that cannot resume there
      // says so with a 410, which relists.
      return backOff(failing, { kind: 'watch', resourceVersion: failing.resourceVersion }, error, env);
  }
}

/** client-go's `list()` with its pager (`tools/pager/pager.go`): two ways to retry at once, then back off. */
function listFailed(state: RequestState & { name: 'listing' }, failing: ReflectorContext, error: InformerError, env: StepEnvironment): ReflectorTransition {
  const { request } = state;
  if (isExpired(error) && request.paged && state.paginated) {
    // The continue token expired: the pager lists once more, whole, at the same version.
    return open(failing, { ...request, paged: false }, info('continue token expired; listing again at the same resourceVersion without paging'));
  }
  const unavailable = isExpired(error) || isTooLargeResourceVersion(error);
  if (!unavailable) return backOff(failing, relistRequest(failing), error, env);
  const atLatest = { ...failing, resourceVersionUnavailable: true };
  if (request.immediateRetry) return backOff(atLatest, relistRequest(atLatest), error, env);
  // client-go retries at once with a consistent read; it keeps the failed list's paging, we page
  // it (a list at '' is paged from etcd or the watch cache alike, and a page bounds our memory).
  return open(atLatest, listRequest('', atLatest.paginatedResult, true), info(`resourceVersion ${request.resourceVersion} unavailable; listing at the latest`));
}

/**
 * client-go's `watchList()` and its fallback in `ListAndWatch`: a refused connection or a 429 is
 * retried as a streaming list after a backoff, a version too old or too new streams again at ''
 * at once, and anything else lists in pages at once instead. client-go tries the streaming list
 * again at its next relist, and so do we, unless the server showed it cannot serve one (400/422:
 * every server before 1.27, and 1.27-1.31 and 1.33 unless the WatchList gate is on).
 */
function streamingListFailed(state: RequestState & { name: 'streamingList' }, context: ReflectorContext, error: InformerError, env: StepEnvironment): ReflectorTransition {
  const failing: ReflectorContext = { ...context, failures: context.failures + 1, lastError: error };
  if (isConnectionRefused(error) || (error instanceof StatusError && error.code === 429)) return backOff(failing, relistRequest(failing), error, env);
  if ((isExpired(error) || isTooLargeResourceVersion(error)) && state.request.resourceVersion !== '') {
    const atLatest = { ...failing, resourceVersionUnavailable: true };
    return open(atLatest, relistRequest(atLatest), info(`resourceVersion ${state.request.resourceVersion} unavailable; streaming at the latest`));
  }
  if (error instanceof StatusError && (error.code === 400 || error.code === 422)) {
    // An answer about what the server supports, not a failure: nothing for health to show, and
    // an info line, not a warning, since every informer on an older server gets it once.
    return listInstead({ ...context, streamingList: false }, info(`the server refused the streaming list (${error.message}); listing in pages from now on`));
  }
  return listInstead(failing, { level: 'warn', message: `the streaming list failed (${error.message}); listing in pages instead` });
}

/**
 * A 404 on the list or watch of a collection: the resource is not served (its CRD deleted or not
 * yet installed), whatever the request was. Not client-go's rule (it retries a 404 like any
 * failure): wait as `resourceGoneBackoff` says, on its own sequence, then relist, since a resource
 * served again (a CRD created again) holds new objects. Streaming lists stay on: a 404 says
 * nothing about them.
 */
function resourceGone(context: ReflectorContext, error: ResourceGoneError, env: StepEnvironment): ReflectorTransition {
  const failing: ReflectorContext = { ...context, failures: context.failures + 1, lastError: error };
  const { delayMs, state: goneBackoff } = nextBackoff(context.goneBackoff, { now: env.now, random: env.random() }, env.resourceGoneBackoff ?? defaultResourceGoneBackoffConfig);
  return {
    state: { name: 'backingOff', next: relistRequest(failing), delayMs },
    context: { ...failing, goneBackoff },
    effect: { kind: 'wait', delayMs },
    log: { level: 'warn', message: 'the resource is not served (its CustomResourceDefinition deleted or not installed?); relisting after backing off (resourceGoneBackoff)' },
  };
}

/** Opens the paged list `context` calls for, at once. */
function listInstead(context: ReflectorContext, log: ReflectorLogLine): ReflectorTransition {
  return open(context, relistRequest({ ...context, streamingList: false }), log);
}

function backOff(context: ReflectorContext, next: ReflectorRequest, error: InformerError, env: StepEnvironment): ReflectorTransition {
  const failure = { now: env.now, random: env.random(), retryAfterSeconds: error.retryAfterSeconds, atCap: isBadRequest(error) };
  const { delayMs, state: backoff } = nextBackoff(context.backoff, failure, env.backoff);
  const level = needsAHuman(error) ? 'error' : isExpired(error) ? 'info' : 'warn';
  return {
    state: { name: 'backingOff', next, delayMs },
    context: { ...context, backoff },
    effect: { kind: 'wait', delayMs },
    log: { level, message: `${requestLabel(next)} after backing off` },
  };
}

function open(context: ReflectorContext, request: ReflectorRequest, log: ReflectorLogLine | undefined): ReflectorTransition {
  const state: ReflectorState =
    request.kind === 'list'
      ? { name: 'listing', request, paginated: false }
      : request.kind === 'streamingList'
        ? { name: 'streamingList', request }
        : { name: 'watching', request };
  return { state, context, effect: { kind: 'open', request }, log };
}

function synced(context: ReflectorContext, resourceVersion: string): ReflectorContext {
  return { ...context, resourceVersion, resourceVersionUnavailable: false, failures: 0, lastError: undefined, goneBackoff: initialBackoffState };
}

function unchanged(state: ReflectorState, context: ReflectorContext): ReflectorTransition {
  return { state, context, effect: { kind: 'continue' }, log: undefined };
}

function info(message: string): ReflectorLogLine {
  return { level: 'info', message };
}

/**
 * 400, 401 and 403 are retried like the rest but logged as errors: they need a human (a bad
 * selector, RBAC). A 404 never gets here: it is a resource not served (see `resourceGone`).
 */
function needsAHuman(error: InformerError): boolean {
  return error instanceof StatusError && (error.code === 400 || error.code === 401 || error.code === 403);
}

/** A 400: the request itself is wrong, and asking again soon will not change the answer. */
function isBadRequest(error: InformerError): boolean {
  return error instanceof StatusError && error.code === 400;
}

/** client-go's `isWatchErrorRetriable`: nobody listens, so the last version is probably still good. */
function isConnectionRefused(error: InformerError): boolean {
  return error instanceof NetworkError && error.code === 'ECONNREFUSED';
}

function requestLabel(request: ReflectorRequest): string {
  switch (request.kind) {
    case 'list':
      return request.immediateRetry ? 'listing at the latest' : 'relisting';
    case 'streamingList':
      return 'relisting (streaming)';
    case 'watch':
      return 're-watching';
  }
}
