/**
 * Typed errors. Every failure the sources can meet becomes one of these values; the reflector
 * decides from them whether to re-watch, relist or back off, and `health$` shows them to users.
 * No error message or field ever holds a bearer token, client key or Authorization header.
 */

/** A `metav1.Status` body, as the API server sends it with an error. */
export interface Status {
  readonly kind: 'Status';
  readonly apiVersion: string;
  readonly metadata?: { readonly continue?: string; readonly resourceVersion?: string };
  readonly status?: 'Success' | 'Failure';
  readonly message?: string;
  readonly reason?: string;
  readonly details?: {
    readonly name?: string;
    readonly group?: string;
    readonly kind?: string;
    readonly uid?: string;
    readonly causes?: readonly { readonly reason?: string; readonly message?: string; readonly field?: string }[];
    readonly retryAfterSeconds?: number;
  };
  readonly code?: number;
}

/**
 * What kind of failure an {@link InformerError} is: `status`, `network`, `protocol`, `timeout`
 * come from requests and are retried; `resourceGone` is a resource the API server does not serve
 * (a CRD deleted or not installed yet), retried more slowly; `config` is an informer that cannot
 * be made as asked; `object` an object the cache could not take; `stopped` an informer that
 * stopped before it synced.
 */
export type InformerErrorKind = 'status' | 'network' | 'protocol' | 'config' | 'timeout' | 'resourceGone' | 'object' | 'stopped';

/** The base of every error rx-informer reports. Switch on `kind`. */
export abstract class InformerError extends Error {
  abstract readonly kind: InformerErrorKind;
  /** Seconds the server asked us to wait before retrying, when it said so. */
  readonly retryAfterSeconds: number | undefined;
  /**
   * The name of the informer that reported it (its message then starts with that name), so that
   * an error out of `health$` or `waitForSync` says which of many informers it is about.
   */
  readonly informer: string | undefined;

  protected constructor(message: string, retryAfterSeconds?: number, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.retryAfterSeconds = retryAfterSeconds;
    this.informer = undefined;
  }
}

/**
 * The same error attributed to an informer: a copy of the same class whose `informer` is set and
 * whose message starts with the informer's name (`pods@default: 403 Forbidden on GET ...`). An
 * error already attributed is returned as it is. The original is left untouched: lister-watchers
 * may hand the same instance to several informers.
 *
 * ## Example
 * ```ts
 * const named = attributeTo(new NetworkError('GET /api/v1/pods failed: connect ECONNREFUSED'), 'pods');
 * named.message;                   // 'pods: GET /api/v1/pods failed: connect ECONNREFUSED'
 * named instanceof NetworkError;   // true
 * ```
 */
export function attributeTo<E extends InformerError>(error: E, informer: string): E {
  if (error.informer !== undefined) return error;
  const attributed = Object.create(Object.getPrototypeOf(error) as object) as E;
  Object.defineProperties(attributed, Object.getOwnPropertyDescriptors(error));
  const message = `${informer}: ${error.message}`;
  Object.defineProperty(attributed, 'message', { value: message, writable: true, configurable: true, enumerable: false });
  Object.defineProperty(attributed, 'informer', { value: informer, writable: false, configurable: true, enumerable: true });
  if (typeof error.stack === 'string') attributed.stack = error.stack.replace(error.message, message);
  return attributed;
}

/**
 * The API server answered with a Status: an HTTP error response, or an ERROR event on a watch.
 * `code` is the HTTP code (410 for an expired resourceVersion, whatever the reason says). The
 * message names the request when it is known: `404 NotFound on GET /apis/example.com/v1/widgets: ...`.
 */
export class StatusError extends InformerError {
  readonly kind = 'status' as const;
  readonly code: number;
  readonly reason: string;
  readonly status: Status;
  /** The request that got this answer, as `GET /api/v1/pods` (path only: no query, no host). */
  readonly request: string | undefined;

  constructor(status: Status, retryAfterSeconds?: number, request?: string) {
    const code = status.code ?? 500;
    const reason = status.reason ?? 'Unknown';
    const on = request === undefined ? '' : ` on ${request}`;
    super(`${code} ${reason}${on}: ${status.message ?? '(no message)'}`, retryAfterSeconds ?? status.details?.retryAfterSeconds);
    this.code = code;
    this.reason = reason;
    this.status = status;
    this.request = request;
  }
}

/**
 * The API server does not serve the resource: a list or watch of its collection was answered
 * 404 (its CustomResourceDefinition was deleted, or is not installed yet: no collection URL is
 * ever 404 otherwise, a namespace that does not exist lists empty), or discovery found nothing of
 * that name or kind. A state more than a failure: an informer retries at its slower
 * `resourceGoneBackoff` until the resource is served again, `health$` shows this error meanwhile
 * (`lastError.kind === 'resourceGone'`), and a factory made with `stopWhenResourceGone` stops the
 * informer instead. `cause` is the 404's {@link StatusError}, when there was one.
 *
 * ## Example
 * ```ts
 * import type { Informer } from 'rx-informer';
 *
 * declare const widgets: Informer; // an informer of a custom resource
 * widgets.health$.subscribe((health) => {
 *   if (health.lastError?.kind === 'resourceGone') console.log('waiting for the CRD:', health.lastError.message);
 * });
 * ```
 */
export class ResourceGoneError extends InformerError {
  readonly kind = 'resourceGone' as const;
  /** The request that got the 404 (`GET /apis/example.com/v1/widgets`), when one did. */
  readonly request: string | undefined;

  constructor(message: string, options: { readonly cause?: unknown; readonly request?: string } = {}) {
    super(message, undefined, { cause: options.cause });
    this.request = options.request;
  }

  /** The ResourceGoneError a 404 on a collection's list or watch stands for. */
  static fromNotFound(notFound: StatusError): ResourceGoneError {
    return new ResourceGoneError(`the resource is not served (${notFound.message})`, { cause: notFound, request: notFound.request });
  }
}

/**
 * True for a {@link ResourceGoneError}: the API server does not serve the resource (now).
 *
 * ## Example
 * ```ts
 * import { isResourceGone, type InformerHealth } from 'rx-informer';
 *
 * declare const health: InformerHealth; // from an informer's health$
 * if (isResourceGone(health.lastError)) console.log('its CustomResourceDefinition is gone');
 * ```
 */
export function isResourceGone(error: unknown): error is ResourceGoneError {
  return error instanceof ResourceGoneError;
}

/** The connection failed: refused, reset, DNS, TLS handshake. `code` is Node's (`ECONNREFUSED`). */
export class NetworkError extends InformerError {
  readonly kind = 'network' as const;
  readonly code: string | undefined;

  constructor(message: string, code?: string, options?: { cause?: unknown }) {
    super(message, undefined, options);
    this.code = code;
  }
}

/** What was wrong with what the server sent. */
export type ProtocolProblem =
  | 'malformed-json'
  | 'unknown-event-type'
  | 'truncated-stream'
  | 'non-json-body'
  | 'not-a-list'
  | 'missing-metadata'
  | 'line-too-long'
  | 'body-too-large'
  | 'error-event-not-status';

/** The server sent something that is not the Kubernetes protocol. `excerpt` is at most 200 chars. */
export class ProtocolError extends InformerError {
  readonly kind = 'protocol' as const;
  readonly problem: ProtocolProblem;
  readonly excerpt: string | undefined;

  constructor(problem: ProtocolProblem, message: string, excerpt?: string) {
    super(message);
    this.problem = problem;
    this.excerpt = excerpt === undefined ? undefined : excerpt.slice(0, 200);
  }
}

/** What was wrong with the kubeconfig, or with the informer's selectors. */
export type ConfigProblem =
  | 'no-current-context'
  | 'missing-context'
  | 'missing-cluster'
  | 'missing-user'
  | 'invalid-server-url'
  | 'unreadable-file'
  | 'credential-plugin-failed'
  | 'invalid-label-selector'
  | 'invalid-field-selector';

/**
 * The kubeconfig, or a selector, cannot be used as it is. `informer()` and `informerFor` throw it
 * at once for what no retry can fix (no current context, a missing cluster, user or context, a
 * bad server URL, a selector that does not parse); a file the kubeconfig names that cannot be
 * read, or a credential plugin that fails, is reported per request on `health$` and retried, since
 * it may be fixed while the informer runs.
 */
export class ConfigError extends InformerError {
  readonly kind = 'config' as const;
  readonly problem: ConfigProblem;

  constructor(problem: ConfigProblem, message: string, options?: { cause?: unknown }) {
    super(message, undefined, options);
    this.problem = problem;
  }
}

/** Nothing arrived on a watch for longer than the idle timeout: the connection is presumed dead. */
export class IdleTimeoutError extends InformerError {
  readonly kind = 'timeout' as const;
  readonly idleMs: number;
  /** Which request went quiet. */
  readonly request: 'watch' | 'list';

  constructor(idleMs: number, request: 'watch' | 'list' = 'watch') {
    super(request === 'watch' ? `no bytes received on the watch for ${idleMs} ms` : `no list page received for ${idleMs} ms`);
    this.idleMs = idleMs;
    this.request = request;
  }
}

/**
 * What the sources do to an error before they emit it: with excerpts withheld, a ProtocolError is
 * rebuilt without its excerpt (the message says so), so a malformed line or item cannot carry an
 * object's data into logs; anything else passes unchanged. `withholdExcerpts` defaults to true for
 * core `secrets` and false otherwise (set it for a custom resource that carries credentials).
 */
export function excerptGuard(resource: { readonly group: string; readonly plural: string }, withholdExcerpts?: boolean): (error: unknown) => unknown {
  const withhold = withholdExcerpts ?? (resource.group === '' && resource.plural === 'secrets');
  if (!withhold) return (error) => error;
  return (error) =>
    error instanceof ProtocolError && error.excerpt !== undefined
      ? new ProtocolError(error.problem, `${error.message} (excerpt withheld: ${resource.plural})`)
      : error;
}

/** At which step the indexer failed to cache an object: its key, the transform, or an index function. */
export type RejectionStage = 'key' | 'transform' | 'index';

/**
 * What the cache did instead: `left-out` (nothing is cached under the key), `kept-previous` (the
 * cache keeps the version it had), `deleted` (a deletion applied with the cached version as the
 * object's final state, since its own could not be transformed).
 */
export type RejectionOutcome = 'left-out' | 'kept-previous' | 'deleted';

const OUTCOME_TEXT: Readonly<Record<RejectionOutcome, string>> = {
  'left-out': 'left out of the cache',
  'kept-previous': 'the cache keeps its previous version',
  deleted: 'deleted, with its cached version as its final state',
};

/**
 * An object the indexer could not cache: it has no `metadata.name`, or the transform or an index
 * function threw on it (or the transform returned no object). A value, not a stream error: the
 * informer reports it on `health$` (`rejectedObjects`, `lastRejection`) and through its logger, and
 * goes on with the next object. `cause` is what was thrown.
 */
export class RejectedObjectError extends InformerError {
  readonly kind = 'object' as const;
  /** The object's cache key; undefined when it has none (no `metadata.name`). */
  readonly key: string | undefined;
  readonly stage: RejectionStage;
  /** The index whose function threw, for stage `index`. */
  readonly indexName: string | undefined;
  readonly outcome: RejectionOutcome;

  constructor(details: { key: string | undefined; stage: RejectionStage; indexName?: string; outcome: RejectionOutcome; cause?: unknown }) {
    const { key, stage, indexName, outcome, cause } = details;
    const what = key === undefined ? 'an object without a metadata.name string' : key;
    const why = stage === 'key' ? 'it has no cache key' : `${stage === 'index' ? `index function ${JSON.stringify(indexName)}` : 'the transform'} failed: ${describe(cause)}`;
    super(`cannot cache ${what}: ${why}; ${OUTCOME_TEXT[outcome]}`, undefined, { cause });
    this.key = key;
    this.stage = stage;
    this.indexName = indexName;
    this.outcome = outcome;
  }
}

function describe(thrown: unknown): string {
  return thrown instanceof Error ? `${thrown.name}: ${thrown.message}` : String(thrown);
}

/**
 * True for a 400 Bad Request: the server will never accept the request as sent (a field selector
 * the resource does not support, say). The reflector still retries it, at its backoff cap, but
 * `waitForSync` rejects with it at once rather than waiting for a fix that has to be a new informer.
 */
export function isBadRequest(error: unknown): error is StatusError {
  return error instanceof StatusError && error.code === 400;
}

/** True for a 410: the resourceVersion (or continue token) is too old. Matches on code, not reason. */
export function isExpired(error: unknown): error is StatusError {
  return error instanceof StatusError && error.code === 410;
}

/** True for the 504 "Too large resource version" the server gives for a version it has not reached. */
export function isTooLargeResourceVersion(error: unknown): error is StatusError {
  return (
    error instanceof StatusError &&
    (error.status.details?.causes?.some((c) => c.reason === 'ResourceVersionTooLarge') === true ||
      /too large resource version/i.test(error.status.message ?? ''))
  );
}
