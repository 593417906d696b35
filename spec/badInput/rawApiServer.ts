import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node';
import { filter, firstValueFrom, map, Subscription, throwError, timeout } from 'rxjs';
import type { Health } from '../../lib/reflector/health';
import { informer, type Informer, type InformerOptions } from '../../lib/informer/informer';
import { pods, type Pod } from '../../lib/resources/builtins';
import { InformerError } from '../../lib/base/errors';
import { silentLogger } from '../../lib/base/logger';
import type { Snapshot } from '../../lib/store/snapshot';
import { withMessage } from '../support/eventually';
import { loadClientNode } from '../../apiserver/src';

/**
 * A raw HTTP server that speaks just enough of the list/watch protocol for the bad-input
 * catalogue: each test scripts, per request, exactly which bytes go out, including the ones no
 * real API server would send. The loopback server's faults cannot produce most of these.
 */

/** One request the raw server received. */
export interface RawRequest {
  readonly kind: 'list' | 'watch';
  readonly query: URLSearchParams;
  /** 0 for the first request of its kind, 1 for the second... */
  readonly index: number;
  readonly headers: http.IncomingHttpHeaders;
}

/** Answers one request; may keep the response open (watches). */
export type RawHandler = (request: RawRequest, response: http.ServerResponse) => void;

/** A running raw server. */
export interface RawApiServer {
  readonly url: string;
  /** A kubeconfig pointing at it over plain http, no credentials. */
  readonly kubeConfig: KubeConfig;
  readonly requests: readonly RawRequest[];
  close(): Promise<void>;
}

/** Starts a raw server; requests for pods go to `list` or `watch`, anything else gets 404. */
export async function startRawApiServer(handlers: { readonly list: RawHandler; readonly watch: RawHandler }): Promise<RawApiServer> {
  const requests: RawRequest[] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((incoming, response) => {
    const url = new URL(incoming.url ?? '/', 'http://raw');
    if (url.pathname !== '/api/v1/pods') {
      response.writeHead(404).end();
      return;
    }
    const kind = url.searchParams.get('watch') === '1' || url.searchParams.get('watch') === 'true' ? 'watch' : 'list';
    const request: RawRequest = { kind, query: url.searchParams, index: requests.filter((r) => r.kind === kind).length, headers: incoming.headers };
    requests.push(request);
    response.on('error', () => undefined);
    (kind === 'watch' ? handlers.watch : handlers.list)(request, response);
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    kubeConfig: plainKubeConfig(url),
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A kubeconfig with one cluster at `url`, one user without credentials, one current context. */
export function plainKubeConfig(url: string): KubeConfig {
  const { KubeConfig: KubeConfigClass } = loadClientNode();
  const kubeConfig = new KubeConfigClass();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'raw', server: url, skipTLSVerify: false }],
    users: [{ name: 'raw' }],
    contexts: [{ name: 'raw', cluster: 'raw', user: 'raw' }],
    currentContext: 'raw',
  });
  return kubeConfig;
}

/** A minimal pod in namespace `default`. */
export function pod(name: string, resourceVersion: string, extra: Partial<Pod['metadata']> = {}): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', uid: `uid-${name}`, resourceVersion, ...extra } };
}

/** Answers a list request with one page. */
export function sendList(response: http.ServerResponse, items: readonly unknown[], resourceVersion: string): void {
  response.writeHead(200, { 'Content-Type': 'application/json' });
  response.end(JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion }, items }));
}

/** Answers with any body, status and content type. */
export function sendRaw(response: http.ServerResponse, status: number, contentType: string, body: string | Buffer): void {
  response.writeHead(status, { 'Content-Type': contentType });
  response.end(body);
}

/** An open watch response: write events, raw lines, end it. */
export interface WatchStream {
  event(type: string, object: unknown): void;
  /** Writes `text` followed by a newline, verbatim. */
  line(text: string): void;
  end(): void;
}

/** Starts a chunked watch response (the headers go out at once). */
export function openWatch(response: http.ServerResponse, contentType = 'application/json'): WatchStream {
  response.writeHead(200, { 'Content-Type': contentType, 'Transfer-Encoding': 'chunked' });
  response.flushHeaders();
  return {
    event: (type, object) => response.write(`${JSON.stringify({ type, object })}\n`),
    line: (text) => response.write(`${text}\n`),
    end: () => response.end(),
  };
}

/** A watch that stays open and silent: what a well-behaved server sends when nothing changes. */
export const quietWatch: RawHandler = (_request, response) => {
  openWatch(response);
};

/** The usual starting point: two pods listed at resourceVersion 2. */
export const twoPods: RawHandler = (_request, response) => sendList(response, [pod('a', '1'), pod('b', '2')], '2');

/** An informer under test with everything it reported. */
export interface RunningInformer {
  readonly informer: Informer<Pod>;
  readonly healths: Health[];
  /** The latest snapshot (undefined before the first). */
  latest(): Snapshot<Pod> | undefined;
  /** An error informer$ raised, if it did (it must not). */
  streamError(): unknown;
  /** Resolves with the first error health$ reports that matches; rejects after `timeoutMs` (5 s) naming `match` and the errors reported. */
  errorReported<E extends InformerError>(match: (error: InformerError) => error is E, timeoutMs?: number): Promise<E>;
  /** Resolves with the first snapshot that satisfies `predicate`; rejects after `timeoutMs` (5 s) naming it and the latest snapshot. */
  snapshotWhere(predicate: (snapshot: Snapshot<Pod>) => boolean, timeoutMs?: number): Promise<Snapshot<Pod>>;
  stop(): void;
}

/** Fast retries: the catalogue checks what is reported and kept, not the backoff schedule. */
export const fastRetries: InformerOptions<Pod> = { backoff: { initialMs: 5, maxMs: 40, jitter: 'none' } };

/**
 * Starts an informer over pods and records its health and snapshots. It lists in pages unless
 * `options` ask for streaming lists: a raw server scripts what it serves.
 */
export function runInformer(kubeConfig: KubeConfig, options: InformerOptions<Pod> = {}): RunningInformer {
  // The failures these specs provoke are read from health$; their log lines would only be noise.
  const podInformer = informer<Pod>(kubeConfig, pods, { ...fastRetries, streamingList: false, logger: silentLogger, ...options });
  const healths: Health[] = [];
  const subscriptions = new Subscription();
  let latest: Snapshot<Pod> | undefined;
  let streamError: unknown;
  subscriptions.add(podInformer.health$.subscribe((health) => healths.push(health)));
  subscriptions.add(
    podInformer.informer$.subscribe({
      next: (snapshot) => (latest = snapshot),
      error: (error: unknown) => (streamError = error),
    }),
  );
  return {
    informer: podInformer,
    healths,
    latest: () => latest,
    streamError: () => streamError,
    errorReported: <E extends InformerError>(match: (error: InformerError) => error is E, timeoutMs = 5000): Promise<E> => {
      const failed = new Error(); // made here, so that its stack shows the spec's line
      return firstValueFrom(
        podInformer.health$.pipe(
          map((health) => health.lastError),
          filter((error): error is E => error !== undefined && match(error)),
          timeout({
            first: timeoutMs,
            with: () => {
              const reported = [...new Set(healths.map((health) => health.lastError).filter((error) => error !== undefined).map(String))];
              return throwError(() => withMessage(failed, `no error matching ${String(match)} on health$ within ${timeoutMs} ms; reported: ${JSON.stringify(reported)}`));
            },
          }),
        ),
      );
    },
    snapshotWhere: (predicate, timeoutMs = 5000) => {
      const failed = new Error();
      return firstValueFrom(
        podInformer.informer$.pipe(
          filter(predicate),
          timeout({
            first: timeoutMs,
            with: () => throwError(() => withMessage(failed, `no snapshot satisfying ${String(predicate)} within ${timeoutMs} ms; the latest held ${JSON.stringify(contents(latest))}`)),
          }),
        ),
      );
    },
    stop: () => subscriptions.unsubscribe(),
  };
}

/** Key → resourceVersion of a snapshot, for compact assertions. */
export function contents(snapshot: Snapshot<Pod> | undefined): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  if (snapshot === undefined) return out;
  for (const key of snapshot.keys()) out[key] = snapshot.get(key)?.metadata.resourceVersion;
  return out;
}
