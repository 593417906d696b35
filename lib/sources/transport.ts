import * as http from 'node:http';
import * as https from 'node:https';
import type { Readable } from 'node:stream';
import * as zlib from 'node:zlib';
import type { KubeConfig } from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { ConfigError, InformerError, NetworkError, ProtocolError } from '../base/errors';

/**
 * The HTTP transport of the sources: one GET against the cluster a `KubeConfig` points at, with
 * the TLS material, credentials and proxy that `kubeConfig.applyToHTTPSOptions` yields, streamed
 * with `node:http`/`node:https`. client-node is imported for its types only, so this runs on any
 * Node version the user's client-node runs on.
 */

/** One request to the API server: a GET unless `method` says otherwise. */
export interface KubeRequest {
  /** The URL path below the cluster's server URL (`/api/v1/namespaces/a/pods`). */
  readonly path: string;
  /** The query string, already encoded, without the leading `?` ('' for none). */
  readonly query: string;
  /** Aborting it destroys the request and its response. */
  readonly signal: AbortSignal;
  /**
   * Ask for a gzip-compressed body (`Accept-Encoding: gzip`), as client-go does unless
   * `DisableCompression` is set. Default true. The API server compresses only what is worth it
   * (responses over 128 KiB); read the body through {@link responseBody}, which undoes it.
   */
  readonly compression?: boolean;
  /** Default 'GET'. The writes (the Lease client's) send a `body`. */
  readonly method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The request body, sent with a Content-Length. */
  readonly body?: string;
  /** Headers added to (or replacing) the defaults, e.g. `Content-Type` for a body. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** What a kubeconfig resolves to for one request: the server URL without credentials. */
export interface Target {
  readonly url: URL;
  readonly secure: boolean;
}

/**
 * Opens a request (a GET unless `request.method` says otherwise) and resolves with the response as
 * soon as its headers arrive; the body is left unread for the caller to stream (and so to apply
 * backpressure).
 *
 * Credentials are applied per request, so rotating exec and OIDC tokens are picked up. Failures
 * reject with typed errors: `ConfigError` for an unusable kubeconfig, `NetworkError` when no
 * response arrives. No error carries a header, token or key.
 *
 * ## Example
 * ```ts
 * const controller = new AbortController();
 * const response = await kubeRequest(kubeConfig, { path: '/api/v1/pods', query: 'limit=10', signal: controller.signal });
 * response.statusCode; // 200
 * ```
 */
export async function kubeRequest(kubeConfig: KubeConfig, request: KubeRequest): Promise<http.IncomingMessage> {
  const target = resolveTarget(kubeConfig);
  const method = request.method ?? 'GET';
  const options: https.RequestOptions = {
    method,
    headers: { Accept: 'application/json', 'User-Agent': 'rx-informer', ...(request.compression === false ? {} : { 'Accept-Encoding': 'gzip' }), ...request.headers },
  };
  await applyCredentials(kubeConfig, options, target);
  if (request.signal.aborted) throw new NetworkError(`${method} ${request.path} aborted`, 'ABORT_ERR');

  const base = target.url.pathname.endsWith('/') ? target.url.pathname.slice(0, -1) : target.url.pathname;
  options.hostname = unbracket(target.url.hostname);
  options.port = target.url.port === '' ? (target.secure ? 443 : 80) : Number(target.url.port);
  options.path = request.query === '' ? `${base}${request.path}` : `${base}${request.path}?${request.query}`;
  options.signal = request.signal;

  return new Promise((resolve, reject) => {
    const onResponse = (response: http.IncomingMessage): void => resolve(response);
    const outgoing = target.secure ? https.request(options, onResponse) : http.request(options, onResponse);
    // Errors after the response arrived belong to the response's reader; before, they reject.
    outgoing.on('error', (error: NodeJS.ErrnoException) => reject(toNetworkError(error, request.path, method)));
    outgoing.end(request.body);
  });
}

/**
 * A view of `kubeConfig` that uses the named context instead of the current one, leaving the
 * user's object untouched. A context that does not exist fails each request with a `ConfigError`
 * (`missing-context`).
 *
 * ## Example
 * ```ts
 * const staging = inContext(kubeConfig, 'staging');
 * list$(staging, pods).subscribe(...);
 * ```
 */
export function inContext(kubeConfig: KubeConfig, contextName: string): KubeConfig {
  // Every KubeConfig method reads the context through `this.currentContext`, so an object that
  // inherits everything else (users, clusters, authenticators, agent cache) and shadows only that
  // field is a complete, independent view.
  const view = Object.create(kubeConfig) as KubeConfig;
  view.setCurrentContext(contextName);
  return view;
}

/**
 * Turns a Node socket error into a NetworkError that names the request path only (never a header).
 *
 * ## Example
 * ```ts
 * request.on('error', (error) => subscriber.error(toNetworkError(error, '/api/v1/pods'))); // code 'ECONNREFUSED' ...
 * ```
 */
export function toNetworkError(error: NodeJS.ErrnoException, path: string, method = 'GET'): NetworkError {
  return new NetworkError(`${method} ${path} failed: ${error.message}`, error.code, { cause: error });
}

/** The kubeconfig's server, checked (`informer()` calls it up front too). @throws ConfigError */
export function resolveTarget(kubeConfig: KubeConfig): Target {
  const contextName = kubeConfig.getCurrentContext();
  if (contextName === undefined || contextName === null || contextName === '') {
    throw new ConfigError('no-current-context', 'the kubeconfig has no current context');
  }
  const context = kubeConfig.getContextObject(contextName);
  if (context === null) {
    throw new ConfigError('missing-context', `the kubeconfig has no context named "${contextName}"`);
  }
  const cluster = kubeConfig.getCurrentCluster();
  if (cluster === null) {
    throw new ConfigError('missing-cluster', `context "${contextName}" names cluster "${context.cluster}", which the kubeconfig lacks`);
  }
  if (context.user !== undefined && context.user !== '' && kubeConfig.getCurrentUser() === null) {
    throw new ConfigError('missing-user', `context "${contextName}" names user "${context.user}", which the kubeconfig lacks`);
  }
  let url: URL;
  try {
    url = new URL(cluster.server);
  } catch {
    throw new ConfigError('invalid-server-url', `cluster "${cluster.name}" has an invalid server URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConfigError('invalid-server-url', `cluster "${cluster.name}" server URL must be http or https, not ${url.protocol}`);
  }
  if (url.username !== '' || url.password !== '') {
    // Credentials in the URL would end up in error messages; client-go rejects them too.
    throw new ConfigError('invalid-server-url', `cluster "${cluster.name}" server URL must not hold credentials`);
  }
  return { url, secure: url.protocol === 'https:' };
}

async function applyCredentials(kubeConfig: KubeConfig, options: https.RequestOptions, target: Target): Promise<void> {
  try {
    await kubeConfig.applyToHTTPSOptions(options);
  } catch (error) {
    // client-node refuses plain http unless skipTLSVerify is set, and throws only after it has
    // applied the headers. The kubeconfig asked for http, so honour it, as kubectl does.
    if (target.secure || !/HTTP protocol is not allowed/.test(messageOf(error))) throw toConfigError(error);
  }
  // Some client-node versions hand out an https Agent whatever the scheme; http.request rejects it.
  if (!target.secure && isHttpsAgent(options.agent)) options.agent = undefined;
}

// Errors and agents may come from another realm (client-node loaded by a different loader), so
// they are recognised by shape, not instanceof.
function messageOf(error: unknown): string {
  const message = typeof error === 'object' && error !== null ? (error as { message?: unknown }).message : undefined;
  return typeof message === 'string' ? message : String(error);
}

function isHttpsAgent(agent: unknown): boolean {
  return agent instanceof https.Agent || (typeof agent === 'object' && agent !== null && (agent as { protocol?: unknown }).protocol === 'https:');
}

function toConfigError(error: unknown): ConfigError {
  const errno = error as NodeJS.ErrnoException;
  if (errno !== null && typeof errno === 'object' && errno.syscall === 'open' && typeof errno.code === 'string') {
    // fs errors name the path and the errno only: safe to keep as the cause.
    return new ConfigError('unreadable-file', `cannot read a file the kubeconfig names: ${errno.message}`, { cause: error });
  }
  if (typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'SyntaxError') {
    // JSON.parse messages quote the input, which here is the plugin's credential output.
    return new ConfigError('credential-plugin-failed', 'the credential plugin printed output that is not JSON');
  }
  return new ConfigError('credential-plugin-failed', `getting credentials failed: ${redact(messageOf(error))}`);
}

/**
 * Strips anything shaped like a credential (bearer/basic values, token fields, PEM blocks) from
 * text that might echo one, such as a credential plugin's stderr; cuts it to 500 characters.
 *
 * ## Example
 * ```ts
 * redact('refresh failed: Authorization: Bearer abc.def'); // 'refresh failed: Authorization: Bearer [redacted]'
 * ```
 */
export function redact(text: string): string {
  return text
    .replace(/-----BEGIN [^-]*-----[\s\S]*?(-----END [^-]*-----|$)/g, '[redacted key]')
    .replace(/(bearer|basic)\s+\S+/gi, '$1 [redacted]')
    .replace(/("?(?:token|id-token|refresh-token|password|client-key-data|access_token)"?\s*[:=]\s*)("[^"]*"|\S+)/gi, '$1[redacted]')
    .slice(0, 500);
}

function unbracket(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

/**
 * Encodes query parameters, leaving out the undefined ones.
 *
 * ## Example
 * ```ts
 * encodeQuery({ watch: 1, resourceVersion: undefined, labelSelector: 'app in (a,b)' }); // 'watch=1&labelSelector=app+in+%28a%2Cb%29'
 * ```
 */
export function encodeQuery(params: Readonly<Record<string, string | number | boolean | undefined>>): string {
  const search = new URLSearchParams();
  for (const key of Object.keys(params)) {
    const value = params[key];
    if (value !== undefined) search.append(key, String(value));
  }
  return search.toString();
}

/**
 * Reads a whole response body. Resolves with the bytes at the end of the response; rejects with
 * a NetworkError when the connection breaks first. Bytes past `maxBytes` are read and dropped (an
 * error body is only ever shown as an excerpt).
 *
 * ## Example
 * ```ts
 * const body = await readBody(response, '/api/v1/pods', 64 * 1024);
 * ```
 */
export function readBody(response: http.IncomingMessage, path: string, maxBytes = Number.POSITIVE_INFINITY): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    let ended = false;
    // An error body in an encoding we cannot undo is still worth its status code: read it as it is.
    const body = encodingOf(response) === 'other' ? response : responseBody(response, path);
    body.on('data', (chunk: Buffer) => {
      if (length >= maxBytes) return;
      chunks.push(chunk);
      length += chunk.length;
    });
    body.on('end', () => {
      ended = true;
      resolve(Buffer.concat(chunks, length));
    });
    body.on('error', (error: NodeJS.ErrnoException) => reject(toReadError(error, path)));
    body.on('close', () => {
      if (!ended) reject(new NetworkError(`GET ${path} failed: the connection closed before the response ended`, 'ECONNRESET'));
    });
  });
}

/**
 * Reads a whole response body as UTF-8 text, decompressed when it is gzip (see
 * {@link responseBody}). Chunks are decoded as they arrive (a character split across chunks is
 * kept whole) and joined as V8 string ropes: no body-sized Buffer. For short bodies (a Lease, an
 * object); a list goes through `readListBody`, which has no size limit.
 *
 * Rejects with a NetworkError when the connection breaks first, a ProtocolError `body-too-large`
 * (destroying the response) once the text would exceed `maxChars`, and one `non-json-body` for
 * gzip that does not decompress.
 *
 * ## Example
 * ```ts
 * const lease = JSON.parse(await readText(response, '/apis/coordination.k8s.io/v1/namespaces/a/leases/b', 1 << 20));
 * ```
 */
export function readText(response: http.IncomingMessage, path: string, maxChars: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    let ended = false;
    let body: Readable;
    try {
      body = responseBody(response, path);
    } catch (error) {
      reject(error);
      return;
    }
    body.setEncoding('utf8');
    body.on('data', (chunk: string) => {
      if (text.length + chunk.length > maxChars) {
        ended = true;
        body.destroy();
        response.destroy();
        reject(new ProtocolError('body-too-large', `the body of ${path} exceeds ${maxChars} characters`));
        return;
      }
      text += chunk;
    });
    body.on('end', () => {
      ended = true;
      resolve(text);
    });
    body.on('error', (error: NodeJS.ErrnoException) => reject(toReadError(error, path)));
    body.on('close', () => {
      if (!ended) reject(new NetworkError(`GET ${path} failed: the connection closed before the response ended`, 'ECONNRESET'));
    });
  });
}

/**
 * True for a JSON media type, or no declared type at all (lenient with minimal servers).
 *
 * ## Example
 * ```ts
 * isJsonContentType('application/json;stream=watch'); // true
 * isJsonContentType('text/html');                      // false
 * ```
 */
export function isJsonContentType(contentType: string | undefined): boolean {
  return contentType === undefined || contentType.includes('json');
}

/**
 * The body of a response as the server meant it: the response itself, or, when its
 * `Content-Encoding` is gzip, the response decompressed as it arrives (node:zlib on its thread
 * pool, emitting what each chunk yields, so a compressed watch delivers every event at once; a
 * stream of several gzip members, as the API server writes per flush, decodes as one). A gzip
 * body is decoded whether or not it was asked for, as a lenient reader should.
 *
 * Errors keep their types: a broken connection fails the body with a NetworkError and corrupt or
 * truncated gzip with a {@link toReadError} ProtocolError `non-json-body`. Destroying the body
 * destroys the response. Throws a ProtocolError `non-json-body` for an encoding it cannot undo.
 *
 * Cost: inflating takes the client about what reading the uncompressed bytes would; the API
 * server pays for the compression (docs/PERFORMANCE.md, "Compression").
 *
 * ## Example
 * ```ts
 * const body = responseBody(await kubeRequest(kubeConfig, { path, query, signal }), path);
 * body.setEncoding('utf8');
 * body.on('data', (text: string) => decoder.push(text));
 * ```
 */
export function responseBody(response: http.IncomingMessage, path: string): Readable {
  const encoding = encodingOf(response);
  if (encoding === 'identity') return response;
  if (encoding === 'other') {
    response.destroy();
    throw new ProtocolError('non-json-body', `the body of ${path} is encoded as ${JSON.stringify(response.headers['content-encoding'])}, which rx-informer cannot decode`);
  }
  // Output in 64 KiB pieces, a socket read's size: zlib's smaller default costs one thread-pool
  // round trip per piece, four times as many (docs/performance-notes.md, "Compression").
  const gunzip = zlib.createGunzip({ flush: zlib.constants.Z_SYNC_FLUSH, chunkSize: 64 * 1024 });
  response.on('error', (error: NodeJS.ErrnoException) => gunzip.destroy(toNetworkError(error, path)));
  response.on('close', () => {
    if (!response.complete) gunzip.destroy(new NetworkError(`GET ${path} failed: the connection closed before the response ended`, 'ECONNRESET'));
  });
  gunzip.on('close', () => {
    if (!response.complete) response.destroy();
  });
  response.pipe(gunzip);
  return gunzip;
}

function encodingOf(response: http.IncomingMessage): 'identity' | 'gzip' | 'other' {
  const encoding = (response.headers['content-encoding'] ?? '').trim().toLowerCase();
  if (encoding === '' || encoding === 'identity') return 'identity';
  return encoding === 'gzip' || encoding === 'x-gzip' ? 'gzip' : 'other';
}

/**
 * The typed error for a failure while reading a body: typed errors pass unchanged, zlib's (corrupt
 * or truncated gzip) become ProtocolError `non-json-body`, anything else a NetworkError.
 *
 * ## Example
 * ```ts
 * body.on('error', (error) => subscriber.error(toReadError(error, '/api/v1/pods')));
 * ```
 */
export function toReadError(error: unknown, path: string): InformerError {
  if (error instanceof InformerError) return error;
  const errno = error as NodeJS.ErrnoException;
  if (typeof errno?.code === 'string' && errno.code.startsWith('Z_')) {
    return new ProtocolError('non-json-body', `the body of ${path} is not the gzip its Content-Encoding says: ${errno.message}`);
  }
  return toNetworkError(errno, path);
}
