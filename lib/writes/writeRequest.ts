import type { KubeConfig } from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { Observable } from 'rxjs';
import { ProtocolError } from '../base/errors';
import { statusErrorFromResponse } from '../sources/statusError';
import { isJsonContentType, kubeRequest, readBody, readText } from '../sources/transport';
import { writeErrorOf, type WriteKind } from './writeErrors';

/** One write: a body sent with its media type, answered with the object as stored. */
export interface WriteRequest {
  readonly method: 'POST' | 'PUT' | 'PATCH';
  /** The URL path (`/api/v1/namespaces/a/pods/b/status`). */
  readonly path: string;
  /** Encoded query without `?` ('' for none). */
  readonly query: string;
  /** The body's media type (`application/json-patch+json`, ...). */
  readonly contentType: string;
  readonly body: string;
  /** What was sent, which decides how a 409 or 422 reads ({@link writeErrorOf}). */
  readonly kind: WriteKind;
}

/**
 * The longest answer read: an object is at most what etcd stores (1.5 MiB by default) and the
 * API server accepts request bodies of up to 3 MiB; this leaves room for either.
 */
const MAX_OBJECT_CHARS = 8 * 1024 * 1024;

/** How much of an error body is read: a Status is short, and only an excerpt of anything else is shown. */
const MAX_ERROR_BYTES = 64 * 1024;

/**
 * Sends one write through the user's KubeConfig with the sources' transport, as a cold
 * Observable: subscribing sends it, the object the server answers is emitted once and the
 * Observable completes; unsubscribing aborts the request. Failures are typed: a `StatusError`
 * (a {@link ConflictError} or {@link ApplyConflictError} where {@link writeErrorOf} says so), a
 * `NetworkError`, a `ProtocolError` for an answer that is not a JSON object, a `ConfigError`.
 *
 * ## Example
 * ```ts
 * sendWrite<Pod>(kubeConfig, { method: 'PATCH', path: '/api/v1/namespaces/a/pods/b', query: '', contentType: 'application/merge-patch+json', body: '{"metadata":{"labels":{"x":"y"}}}', kind: 'merge-patch' });
 * ```
 */
export function sendWrite<T>(kubeConfig: KubeConfig, request: WriteRequest): Observable<T> {
  const described = `${request.method} ${request.path}`;
  return new Observable<T>((subscriber) => {
    const controller = new AbortController();
    kubeRequest(kubeConfig, {
      method: request.method,
      path: request.path,
      query: request.query,
      signal: controller.signal,
      body: request.body,
      headers: { 'Content-Type': request.contentType },
    })
      .then(async (response) => {
        const code = response.statusCode ?? 0;
        if (code >= 400) {
          const error = statusErrorFromResponse(code, response.headers, await readBody(response, request.path, MAX_ERROR_BYTES), described);
          throw writeErrorOf(error, request.kind);
        }
        if (!isJsonContentType(response.headers['content-type'])) {
          response.destroy();
          throw new ProtocolError('non-json-body', `${described} answered ${String(response.headers['content-type'])}, not JSON`);
        }
        const text = await readText(response, request.path, MAX_OBJECT_CHARS);
        subscriber.next(parseObject<T>(text, described));
        subscriber.complete();
      })
      .catch((error: unknown) => subscriber.error(error));
    return () => controller.abort();
  });
}

function parseObject<T>(text: string, request: string): T {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // No excerpt: the object may be a Secret.
    throw new ProtocolError('malformed-json', `${request} answered with a body that is not JSON`);
  }
  if (typeof parsed !== 'object' || parsed === null || typeof (parsed as { metadata?: unknown }).metadata !== 'object') {
    throw new ProtocolError('missing-metadata', `${request} answered with an object without metadata`);
  }
  return parsed as T;
}
