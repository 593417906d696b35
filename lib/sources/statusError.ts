import type { IncomingHttpHeaders } from 'node:http';
import { ProtocolError, StatusError, type Status } from '../base/errors';

/**
 * Turns what the API server says about a failure into a StatusError: a `metav1.Status` body, or
 * the plain text (or HTML) that filters in front of the API (priority-and-fairness, max-in-flight,
 * proxies) send, with their `Retry-After` header.
 */

/** The reason client-go assumes for a code when the body is not a Status. */
const reasonByCode: Readonly<Record<number, string>> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Expired',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

/**
 * The StatusError for an HTTP error response.
 *
 * The HTTP code wins over a Status body's code (they agree on a real server); `retryAfterSeconds`
 * comes from the `Retry-After` header, else from the Status details. A body that is not a Status
 * becomes a synthetic Status carrying an excerpt of the text as its message. `request` (method and
 * path, no query) goes into the message, so that a 403 or 404 says what was refused.
 *
 * ## Example
 * ```ts
 * const error = statusErrorFromResponse(429, { 'retry-after': '1' }, Buffer.from('Too many requests, please try again later.\n'), 'GET /api/v1/pods');
 * error.code;              // 429
 * error.reason;            // 'TooManyRequests'
 * error.retryAfterSeconds; // 1
 * error.message;           // '429 TooManyRequests on GET /api/v1/pods: Too many requests, please try again later.'
 * ```
 */
export function statusErrorFromResponse(statusCode: number, headers: IncomingHttpHeaders, body: Buffer, request?: string): StatusError {
  const retryAfter = retryAfterSeconds(headers['retry-after']);
  const text = body.toString('utf8');
  const parsed = parseJson(text);
  if (isStatus(parsed)) {
    return new StatusError({ ...parsed, code: statusCode }, retryAfter, request);
  }
  const status: Status = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    reason: reasonByCode[statusCode] ?? 'Unknown',
    message: excerptOf(text) || `the server answered ${statusCode} with an empty body`,
    code: statusCode,
  };
  return new StatusError(status, retryAfter, request);
}

/**
 * The error an `ERROR` watch event stands for: a StatusError when its object is a Status, else a
 * ProtocolError `error-event-not-status`.
 *
 * ## Example
 * ```ts
 * errorFromWatchEvent({ kind: 'Status', apiVersion: 'v1', reason: 'Expired', code: 410 }).kind; // 'status'
 * ```
 */
export function errorFromWatchEvent(object: unknown): StatusError | ProtocolError {
  if (isStatus(object)) return new StatusError(object);
  return new ProtocolError('error-event-not-status', 'the watch sent an ERROR event whose object is not a Status', safeStringify(object));
}

/**
 * True for a parsed `metav1.Status`.
 *
 * ## Example
 * ```ts
 * isStatus(JSON.parse(body)); // true for {"kind":"Status",...}
 * ```
 */
export function isStatus(value: unknown): value is Status {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'Status';
}

/**
 * Seconds from a `Retry-After` header: delta-seconds, or an HTTP date. Undefined when absent or unreadable.
 *
 * ## Example
 * ```ts
 * retryAfterSeconds('3'); // 3
 * ```
 */
export function retryAfterSeconds(header: string | string[] | undefined, now = Date.now()): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value.trim());
  if (Number.isFinite(seconds)) return seconds >= 0 ? Math.floor(seconds) : undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

/**
 * At most 200 characters of a body, whitespace collapsed, for messages and `excerpt` fields.
 *
 * ## Example
 * ```ts
 * excerptOf('<html>\n  <body>login</body>\n</html>'); // '<html> <body>login</body> </html>'
 * ```
 */
export function excerptOf(text: string): string {
  return text.slice(0, 400).replace(/\s+/g, ' ').trim().slice(0, 200);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
