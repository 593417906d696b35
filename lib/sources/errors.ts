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

/** What kind of failure an {@link InformerError} is. */
export type InformerErrorKind = 'status' | 'network' | 'protocol' | 'config' | 'timeout';

/** The base of every error rx-informer reports. Switch on `kind`. */
export abstract class InformerError extends Error {
  abstract readonly kind: InformerErrorKind;
  /** Seconds the server asked us to wait before retrying, when it said so. */
  readonly retryAfterSeconds: number | undefined;

  protected constructor(message: string, retryAfterSeconds?: number, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/**
 * The API server answered with a Status: an HTTP error response, or an ERROR event on a watch.
 * `code` is the HTTP code (410 for an expired resourceVersion, whatever the reason says).
 */
export class StatusError extends InformerError {
  readonly kind = 'status' as const;
  readonly code: number;
  readonly reason: string;
  readonly status: Status;

  constructor(status: Status, retryAfterSeconds?: number) {
    const code = status.code ?? 500;
    const reason = status.reason ?? 'Unknown';
    super(`${code} ${reason}: ${status.message ?? '(no message)'}`, retryAfterSeconds ?? status.details?.retryAfterSeconds);
    this.code = code;
    this.reason = reason;
    this.status = status;
  }
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

/** What was wrong with the kubeconfig. */
export type ConfigProblem =
  | 'no-current-context'
  | 'missing-context'
  | 'missing-cluster'
  | 'missing-user'
  | 'invalid-server-url'
  | 'unreadable-file'
  | 'credential-plugin-failed';

/** The kubeconfig cannot be used as it is. */
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
