import type { ReflectorPhase } from './health';
import { IdleTimeoutError, NetworkError, ProtocolError, StatusError, isExpired, isTooLargeResourceVersion } from '../sources/errors';
import type { InformerError } from '../sources/errors';
import { initialBackoffState, nextBackoff } from './backoff';
import type { BackoffState, ResolvedBackoffConfig } from './backoff';

/**
 * The reflector's state machine, as plain data and one pure {@link step} function, so that every
 * decision (re-watch or relist, at which resourceVersion, now or after a backoff) can be read in
 * one place and tested without I/O. `reflect` drives it: it opens the requests, turns what they
 * deliver into inputs, and carries out each transition's effect.
 */

/** One request to the API server. */
export type ReflectorRequest =
  /**
   * A paged list. `resourceVersion` `'0'`: any cached state (the first list, cheap); `''`: a
   * consistent read (after the last version proved too old or too new); otherwise the last
   * synced version.
   */
  | { readonly kind: 'list'; readonly resourceVersion: string }
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
  /** A paged list is in flight; its pages flow out as one Replace. The cache is not replaced yet. */
  | { readonly name: 'listing'; readonly request: ReflectorRequest & { readonly kind: 'list' } }
  /**
   * A streaming list is in flight; its objects are buffered until the initial-events-end
   * bookmark, for at most the configured bounded wait.
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
  /** Lists are streamed until the server refuses a streaming list or never ends its initial events. */
  readonly streamingList: boolean;
  /** Consecutive failures; 0 after a successful list or a watch event. */
  readonly failures: number;
  /** The last failure, kept until the next successful list or watch event. */
  readonly lastError: InformerError | undefined;
  /** The retry delay sequence (reset by time, not by success: client-go's rule). */
  readonly backoff: BackoffState;
}

/** Something that happened, fed to {@link step}. */
export type ReflectorInput =
  /** Subscribed: make the first request. */
  | { readonly type: 'start' }
  /** A paged list delivered its last page. */
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
}

/** A watch that closes sooner than this with no event is a failure (else a closing server spins us). */
export const MIN_HEALTHY_WATCH_MS = 1000;

/** The reflector before its first request. */
export function initialContext(streamingList: boolean): ReflectorContext {
  return { resourceVersion: '', resourceVersionUnavailable: false, streamingList, failures: 0, lastError: undefined, backoff: initialBackoffState };
}

/** The health phase a state shows as. */
export function phaseOf(state: ReflectorState): ReflectorPhase {
  return state.name === 'streamingList' ? 'listing' : state.name;
}

/**
 * The list that brings the cache back: streamed from the last version (or '' before any, or when
 * that version is unavailable), or paged at '0' first, the last version later, '' when unavailable.
 * Relisting at the last version rather than '' lets the watch cache answer (no etcd stampede).
 */
export function relistRequest(context: ReflectorContext): ReflectorRequest {
  const resourceVersion = context.resourceVersionUnavailable ? '' : context.resourceVersion;
  if (context.streamingList) return { kind: 'streamingList', resourceVersion };
  return { kind: 'list', resourceVersion: context.resourceVersionUnavailable || resourceVersion !== '' ? resourceVersion : '0' };
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
    case 'listed':
      if (state.name !== 'listing') return unchanged(state, context);
      return open(synced(context, input.resourceVersion), { kind: 'watch', resourceVersion: input.resourceVersion }, info('listed; watching'));
    case 'initialEventsEnd':
      if (state.name !== 'streamingList') return unchanged(state, context);
      return { state: { name: 'watching', request: state.request }, context: synced(context, input.resourceVersion), effect: { kind: 'continue' }, log: info('initial events received; watching') };
    case 'initialEventsTimeout': {
      if (state.name !== 'streamingList') return unchanged(state, context);
      const fallback = { ...context, streamingList: false };
      return open(fallback, relistRequest(fallback), { level: 'warn', message: 'no initial-events-end bookmark in time; falling back to a paged list' });
    }
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
  const failing: ReflectorContext = { ...context, failures: context.failures + 1, lastError: error };
  const unavailable = isExpired(error) || isTooLargeResourceVersion(error);
  switch (state.name) {
    case 'listing': {
      const next = unavailable ? { ...failing, resourceVersionUnavailable: true } : failing;
      return backOff(next, relistRequest(next), error, env);
    }
    case 'streamingList': {
      if (error instanceof StatusError && (error.code === 400 || error.code === 422)) {
        const fallback = { ...context, streamingList: false, lastError: error };
        return open(fallback, relistRequest(fallback), { level: 'warn', message: 'the server refused the streaming list; falling back to a paged list' });
      }
      const next = unavailable ? { ...failing, resourceVersionUnavailable: true } : failing;
      return backOff(next, relistRequest(next), error, env);
    }
    case 'watching':
      if (isExpired(error)) return backOff(failing, relistRequest(failing), error, env);
      if (error instanceof IdleTimeoutError) {
        // The wait was the timeout itself: reconnect at once.
        return open(failing, { kind: 'watch', resourceVersion: failing.resourceVersion }, { level: 'warn', message: 'watch idle; re-watching' });
      }
      return backOff(failing, { kind: 'watch', resourceVersion: failing.resourceVersion }, error, env);
  }
}

function backOff(context: ReflectorContext, next: ReflectorRequest, error: InformerError, env: StepEnvironment): ReflectorTransition {
  const failure = { now: env.now, random: env.random(), retryAfterSeconds: error.retryAfterSeconds };
  const { delayMs, state: backoff } = nextBackoff(context.backoff, failure, env.backoff);
  const level = isAccessProblem(error) ? 'error' : isExpired(error) ? 'info' : 'warn';
  return {
    state: { name: 'backingOff', next, delayMs },
    context: { ...context, backoff },
    effect: { kind: 'wait', delayMs },
    log: { level, message: `${requestLabel(next)} after backing off` },
  };
}

function open(context: ReflectorContext, request: ReflectorRequest, log: ReflectorLogLine | undefined): ReflectorTransition {
  const state: ReflectorState =
    request.kind === 'list' ? { name: 'listing', request } : request.kind === 'streamingList' ? { name: 'streamingList', request } : { name: 'watching', request };
  return { state, context, effect: { kind: 'open', request }, log };
}

function synced(context: ReflectorContext, resourceVersion: string): ReflectorContext {
  return { ...context, resourceVersion, resourceVersionUnavailable: false, failures: 0, lastError: undefined };
}

function unchanged(state: ReflectorState, context: ReflectorContext): ReflectorTransition {
  return { state, context, effect: { kind: 'continue' }, log: undefined };
}

function info(message: string): ReflectorLogLine {
  return { level: 'info', message };
}

/** 401, 403 and 404 are retried like the rest but logged as errors: they need a human (RBAC, a CRD). */
function isAccessProblem(error: InformerError): boolean {
  return error instanceof StatusError && (error.code === 401 || error.code === 403 || error.code === 404);
}

function requestLabel(request: ReflectorRequest): string {
  switch (request.kind) {
    case 'list':
      return 'relisting';
    case 'streamingList':
      return 'relisting (streaming)';
    case 'watch':
      return 're-watching';
  }
}
