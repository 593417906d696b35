import * as http from 'node:http';
import * as https from 'node:https';
import type { Socket } from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node';
import { loadClientNode } from '../../apiserver/src/kubeConfig';
import { testCertificates } from '../../apiserver/src/tls';
import { EVENTUALLY_MS, within } from '../support/eventually';

/**
 * Test support for the sources: a real client-node KubeConfig, and small ad-hoc HTTP(S) servers.
 * client-node is loaded through `loadClientNode` (Jest cannot load the ES module itself).
 */

export interface KubeConfigParts {
  readonly server: string;
  readonly cluster?: Record<string, unknown>;
  readonly user?: Record<string, unknown>;
  readonly currentContext?: string;
  readonly extraContexts?: readonly Record<string, unknown>[];
  readonly extraClusters?: readonly Record<string, unknown>[];
  readonly extraUsers?: readonly Record<string, unknown>[];
}

/** A real KubeConfig with one cluster `c`, one user `u` and one context `ctx` (current by default). */
export function kubeConfigFor(parts: KubeConfigParts): KubeConfig {
  const kubeConfig = new (loadClientNode().KubeConfig)();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'c', server: parts.server, ...parts.cluster }, ...(parts.extraClusters ?? [])],
    users: [{ name: 'u', ...parts.user }, ...(parts.extraUsers ?? [])],
    contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }, ...(parts.extraContexts ?? [])],
    currentContext: parts.currentContext ?? 'ctx',
  });
  return kubeConfig;
}

export interface SeenRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: http.IncomingHttpHeaders;
  readonly closed: Promise<void>;
}

export interface TestServer {
  readonly url: string;
  readonly requests: SeenRequest[];
  /** Resolves with the n-th request (0-based) once it has arrived; rejects naming it after 10 s. */
  request(index: number): Promise<SeenRequest>;
  close(): Promise<void>;
}

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, seen: SeenRequest) => void;

/** A loopback HTTP (or HTTPS with the test CA) server; every socket is destroyed on close. */
export async function startServer(handler: Handler, options: { tls?: boolean; requestCert?: boolean; host?: string } = {}): Promise<TestServer> {
  const requests: SeenRequest[] = [];
  const waiters: { index: number; resolve: (r: SeenRequest) => void }[] = [];
  const sockets = new Set<Socket>();
  const listener = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://x');
    const closed = new Promise<void>((resolve) => req.socket.once('close', () => resolve()));
    const seen: SeenRequest = { method: req.method ?? '', path: url.pathname, query: url.searchParams, headers: req.headers, closed };
    requests.push(seen);
    for (const waiter of waiters.filter((w) => w.index === requests.length - 1)) waiter.resolve(seen);
    handler(req, res, seen);
  };
  const server = options.tls
    ? https.createServer(
        {
          key: testCertificates.serverKey,
          cert: testCertificates.serverCert,
          ca: testCertificates.caCert,
          requestCert: options.requestCert ?? false,
          rejectUnauthorized: options.requestCert ?? false,
        },
        listener,
      )
    : http.createServer(listener);
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('secureConnection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `${options.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`,
    requests,
    request: (index) =>
      index < requests.length
        ? Promise.resolve(requests[index] as SeenRequest)
        : within(new Promise((resolve) => waiters.push({ index, resolve })), EVENTUALLY_MS, `request #${index + 1} to arrive`, () =>
            requests.map((r) => `${r.method} ${r.path}?${r.query.toString()}`),
          ),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Answers JSON with a status code. */
export function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: http.OutgoingHttpHeaders = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** A minimal pod as the API lists it (no kind/apiVersion). */
export function listedPod(name: string, namespace = 'default', resourceVersion = '1'): { metadata: Record<string, string> } {
  return { metadata: { name, namespace, resourceVersion, uid: `uid-${name}` } };
}

/**
 * Collects an Observable's values, then its completion or error; if it has done neither after
 * `timeoutMs` (default 10 s), unsubscribes and rejects saying how many values it had sent.
 */
export function collect<T>(source: import('rxjs').Observable<T>, timeoutMs = EVENTUALLY_MS): Promise<{ values: T[]; error?: unknown; completed: boolean }> {
  const values: T[] = [];
  let subscription: import('rxjs').Subscription | undefined;
  const ended = new Promise<{ values: T[]; error?: unknown; completed: boolean }>((resolve) => {
    subscription = source.subscribe({
      next: (value) => values.push(value),
      error: (error: unknown) => resolve({ values, error, completed: false }),
      complete: () => resolve({ values, completed: true }),
    });
  });
  return within(ended, timeoutMs, 'the stream to complete or fail', () => `${values.length} values and neither`).catch((error: unknown) => {
    subscription?.unsubscribe();
    throw error;
  });
}

export const tokenForTests = 'sekret-token-0123456789abcdef';

export interface TestProxy {
  readonly url: string;
  /** The `host:port` of every CONNECT request. */
  readonly connects: string[];
  /** Per tunnel, in order: resolves when the client side of the tunnel has closed. */
  readonly tunnelsClosed: Promise<void>[];
  close(): Promise<void>;
}

/** An HTTP CONNECT proxy that tunnels every connection to `targetUrl` whatever host it names. */
export async function startProxy(targetUrl: string): Promise<TestProxy> {
  const net = await import('node:net');
  const sockets = new Set<Socket>();
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  };
  const connects: string[] = [];
  const tunnelsClosed: Promise<void>[] = [];
  const proxy = http.createServer((_req, res) => res.writeHead(405).end());
  proxy.on('connection', track);
  proxy.on('connect', (req: http.IncomingMessage, client: Socket, head: Buffer) => {
    connects.push(req.url ?? '');
    tunnelsClosed.push(new Promise((resolve) => client.once('close', () => resolve())));
    const target = new URL(targetUrl);
    const upstream = net.connect(Number(target.port), target.hostname, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    track(upstream);
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const address = proxy.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    connects,
    tunnelsClosed,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        proxy.close(() => resolve());
      }),
  };
}
