import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import type { KubeConfig } from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { asyncScheduler, Observable, type SchedulerLike } from 'rxjs';
import type { KubeObject } from '../base/object';
import { resourcePath, type Resource } from '../resources/resource';
import { IdleTimeoutError, NetworkError, ProtocolError, excerptGuard } from '../base/errors';
import { idleWatchdog, type IdleWatchdog } from './idleWatchdog';
import { defaultMaxLineBytes, LineSplitter } from './lineSplitter';
import type { WatchScope, WatchEvent, WatchOptions } from './listerWatcher';
import { errorFromWatchEvent, excerptOf, statusErrorFromResponse } from './statusError';
import { encodeQuery, isJsonContentType, kubeRequest, readBody, responseBody, toReadError } from './transport';

/**
 * Options of {@link watch$}: the watch query, its scope, and client-side guards.
 *
 * ## Example
 * ```ts
 * import type { KubeConfig } from '@kubernetes/client-node';
 * import { pods } from 'rx-informer';
 * import { watch$, type WatchStreamOptions } from 'rx-informer/pipeline';
 *
 * declare const kubeConfig: KubeConfig;
 * const options: WatchStreamOptions = { resourceVersion: '10245', allowWatchBookmarks: true, timeoutSeconds: 290, idleTimeoutMs: 300_000 };
 * watch$(kubeConfig, pods, options).subscribe((event) => console.log(event.type));
 * ```
 */
export interface WatchStreamOptions extends WatchOptions, WatchScope {
  /**
   * Fail with IdleTimeoutError when no byte arrives for this long (counted from subscription).
   * Default: none. The reflector keeps its own event-level timeout; this one is for direct users.
   */
  readonly idleTimeoutMs?: number;
  /** The clock of the idle timeout. Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike;
  /** The longest watch line accepted before ProtocolError `line-too-long`. Default 64 MiB. */
  readonly maxLineBytes?: number;
  /**
   * Leave the server's bytes out of ProtocolError excerpts (the message says they were withheld),
   * so a corrupted line cannot carry an object's data into logs. Default: true for core
   * `secrets`, false otherwise.
   */
  readonly withholdExcerpts?: boolean;
  /**
   * The request's `Accept` header. Default `application/json`. Metadata-only watches ask for
   * `PartialObjectMetadata` with it (see `metadataListerWatcher`); the answer must still be JSON.
   */
  readonly accept?: string;
  /**
   * Ask for a gzip-compressed stream (`Accept-Encoding: gzip`), as client-go does. Default true.
   * The API server compresses only streaming lists (`sendInitialEvents`; one gzip member per
   * flush, from 1.37: gate `WatchListCompression`), never plain watches; a gzip stream is decoded
   * either way.
   */
  readonly compression?: boolean;
}

/** What a watch line parses to before it is checked. */
interface RawEvent {
  readonly type?: unknown;
  readonly object?: { readonly metadata?: { readonly resourceVersion?: unknown; readonly name?: unknown } | null } | null;
}

/**
 * Watches a resource: one HTTP watch request, its newline-delimited JSON split into typed events.
 *
 * A cold Observable: each subscription opens its own request and unsubscribing aborts it. Events
 * are parsed as the bytes arrive, one `JSON.parse` per event and nothing else allocated per event
 * (the parsed `{type, object}` is the emitted value); emission is synchronous, so a slow
 * synchronous consumer stops reading from the socket (TCP backpressure).
 *
 * ```
 * server:   ADDED a ─ MODIFIED a ─ BOOKMARK ─ (end of response)
 * watch$:   ──a────────a'──────────b─────────|
 *
 * server:   ADDED a ─ ERROR {Status 410}
 * watch$:   ──a────────#  StatusError (code 410)
 * ```
 *
 * 1. `sendInitialEvents: true` asks for a streaming list (synthetic ADDED events, then a BOOKMARK
 *    annotated `k8s.io/initial-events-end`); `resourceVersionMatch` defaults to `NotOlderThan`,
 *    which the server requires with it.
 * 2. A clean end of the response completes. A watch never retries: that is the reflector's job.
 * 3. Failures are typed errors: StatusError for an HTTP error or an ERROR event; NetworkError for
 *    a refused or broken connection; ProtocolError for a line that is not JSON (`malformed-json`),
 *    an unknown type, an object without metadata, a response that ends inside a line
 *    (`truncated-stream`) or a body that is not JSON; IdleTimeoutError after `idleTimeoutMs` of
 *    silence; ConfigError for an unusable kubeconfig.
 *
 * ## Example
 * ```ts
 * import type { KubeConfig } from '@kubernetes/client-node';
 * import { pods } from 'rx-informer';
 * import { watch$ } from 'rx-informer/pipeline';
 *
 * declare const kubeConfig: KubeConfig;
 * watch$(kubeConfig, pods, { namespace: 'default', resourceVersion: '10245', allowWatchBookmarks: true, timeoutSeconds: 290 })
 *   .subscribe({ next: (event) => console.log(event.type, event.object.metadata.name), error: (error: unknown) => console.error(String(error)) });
 * ```
 * @param kubeConfig the cluster and credentials, as client-node loaded them.
 * @param resource the resource type to watch.
 * @param options the watch query, scope and client-side guards.
 * @returns the watch events, until the server ends the stream or it fails.
 */
export function watch$<T extends KubeObject = KubeObject>(
  kubeConfig: KubeConfig,
  resource: Resource<T>,
  options: WatchStreamOptions = {},
): Observable<WatchEvent<T>> {
  return new Observable<WatchEvent<T>>((subscriber) => {
    const controller = new AbortController();
    const path = resourcePath(resource, { namespace: options.namespace });
    let response: IncomingMessage | undefined;
    let closed = false;
    const guard = excerptGuard(resource, options.withholdExcerpts);
    const fail = (error: unknown): void => {
      if (!closed) subscriber.error(guard(error));
    };
    const splitter = new LineSplitter((line) => {
      subscriber.next(parseEvent<T>(line));
    }, options.maxLineBytes ?? defaultMaxLineBytes);
    const watchdog: IdleWatchdog | undefined =
      options.idleTimeoutMs === undefined
        ? undefined
        : idleWatchdog(options.scheduler ?? asyncScheduler, options.idleTimeoutMs, () => fail(new IdleTimeoutError(options.idleTimeoutMs ?? 0)));

    const stream = (res: Readable): void => {
      let ended = false;
      res.on('data', (chunk: Buffer) => {
        watchdog?.touch();
        try {
          splitter.push(chunk);
        } catch (error) {
          fail(error);
        }
      });
      res.on('end', () => {
        ended = true;
        if (splitter.pendingBytes > 0 && splitter.pendingExcerpt().trim() !== '') {
          fail(new ProtocolError('truncated-stream', `the watch on ${path} ended inside an event`, splitter.pendingExcerpt()));
        } else if (!closed) {
          subscriber.complete();
        }
      });
      res.on('error', (error: NodeJS.ErrnoException) => fail(toReadError(error, path)));
      res.on('close', () => {
        if (!ended) fail(new NetworkError(`GET ${path} failed: the connection closed during the watch`, 'ECONNRESET'));
      });
    };

    kubeRequest(kubeConfig, { path, query: watchQuery(options), signal: controller.signal, compression: options.compression, headers: options.accept === undefined ? undefined : { Accept: options.accept } }).then(
      (res) => {
        response = res;
        if (closed) {
          res.destroy();
          return;
        }
        watchdog?.touch();
        const statusCode = res.statusCode ?? 0;
        if (statusCode < 200 || statusCode > 299) {
          readBody(res, path, 64 * 1024).then((body) => fail(statusErrorFromResponse(statusCode, res.headers, body, `GET ${path}`)), fail);
        } else if (!isJsonContentType(res.headers['content-type'])) {
          readBody(res, path, 64 * 1024).then(
            (body) => fail(new ProtocolError('non-json-body', `the watch on ${path} answered ${String(res.headers['content-type'])}, not JSON`, excerptOf(body.toString('utf8')))),
            fail,
          );
        } else {
          let body: Readable;
          try {
            body = responseBody(res, path);
          } catch (error) {
            fail(error);
            return;
          }
          stream(body);
        }
      },
      fail,
    );

    return () => {
      closed = true;
      splitter.stop();
      watchdog?.stop();
      controller.abort();
      response?.destroy();
    };
  });
}

/** Parses and checks one watch line; throws the typed error it stands for. */
function parseEvent<T extends KubeObject>(line: string): WatchEvent<T> {
  let event: RawEvent;
  try {
    event = JSON.parse(line) as RawEvent;
  } catch {
    throw new ProtocolError('malformed-json', 'a watch line is not JSON', line);
  }
  if (typeof event !== 'object' || event === null) {
    throw new ProtocolError('malformed-json', 'a watch line is not a JSON object', line);
  }
  const object = event.object;
  switch (event.type) {
    case 'ADDED':
    case 'MODIFIED':
    case 'DELETED':
      if (typeof object !== 'object' || object === null || typeof object.metadata !== 'object' || object.metadata === null) {
        throw new ProtocolError('missing-metadata', `a ${event.type} watch event has an object without metadata`, line);
      }
      if (typeof object.metadata.name !== 'string' || object.metadata.name === '') {
        throw new ProtocolError('missing-metadata', `a ${event.type} watch event has an object without metadata.name`, line);
      }
      return event as unknown as WatchEvent<T>;
    case 'BOOKMARK':
      if (typeof object !== 'object' || object === null || typeof object.metadata?.resourceVersion !== 'string') {
        throw new ProtocolError('missing-metadata', 'a BOOKMARK watch event has no metadata.resourceVersion');
      }
      return event as unknown as WatchEvent<T>;
    case 'ERROR':
      throw errorFromWatchEvent(object);
    default:
      throw new ProtocolError('unknown-event-type', `unknown watch event type ${JSON.stringify(event.type) ?? 'undefined'}`, line.slice(0, 200));
  }
}

/** The query of a watch request; parameters left unset stay out of the URL. */
function watchQuery(options: WatchOptions & WatchScope): string {
  return encodeQuery({
    watch: true,
    resourceVersion: options.resourceVersion,
    resourceVersionMatch: options.resourceVersionMatch ?? (options.sendInitialEvents === true ? 'NotOlderThan' : undefined),
    sendInitialEvents: options.sendInitialEvents,
    allowWatchBookmarks: options.allowWatchBookmarks === true ? true : undefined,
    timeoutSeconds: options.timeoutSeconds,
    labelSelector: options.labelSelector === '' ? undefined : options.labelSelector,
    fieldSelector: options.fieldSelector === '' ? undefined : options.fieldSelector,
    shardSelector: options.shardSelector === '' ? undefined : options.shardSelector,
  });
}
