import * as http from 'node:http';
import * as https from 'node:https';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import type { Resource } from '../resources/resource';
import type { Status } from '../sources/errors';
import type { KubeObject } from '../store/object';
import { namespaces } from '../resources/builtins';
import { authenticate, authorize, type DenyRule, type Verb } from './auth';
import { builtinResources, servedResourceOf, type ServedResource } from './builtinResources';
import { ClusterStoreImpl, type ClusterStore } from './clusterStore';
import { FaultQueue, type Fault, type FaultControls } from './faults';
import { loopbackKubeConfig } from './kubeConfig';
import { jsonOf } from './history';
import { ContinueTokens, serveList, writeListPage } from './listHandler';
import { parseListQuery } from './listOptions';
import { createObject, getObject, parseObjectBody, patchObject, readBody, updateObject } from './objectHandlers';
import { RequestLogImpl, type RequestLog, type RequestRecord } from './requestLog';
import { sendJson, sendStatus, sendText } from './respond';
import { route, type Route } from './routes';
import { ApiStatusError, failure, methodNotAllowed, pathNotFound, statusForCode, tooLargeResourceVersion } from './status';
import { testCertificates } from './tls';
import { WatchSession } from './watchHandler';

/** How to start a loopback API server. */
export interface ApiServerOptions {
  /** Default '127.0.0.1'. */
  readonly host?: string;
  /** Default 0: a free port. */
  readonly port?: number;
  /** Default false; when true, HTTPS with the fixed test CA of `testCertificates`. */
  readonly tls?: boolean;
  /** When set, requests without `Authorization: Bearer <token>` (or a test-CA client certificate) get 401. */
  readonly token?: string;
  /** Matching requests get 403 with the real message shape. */
  readonly deny?: readonly DenyRule[];
  /** Watch history window per resource, in events; default 10_000. */
  readonly historyLimit?: number;
  /** Period of BOOKMARK events on watches with allowWatchBookmarks; default 60_000 (the API server's minute). */
  readonly bookmarkIntervalMs?: number;
  /** Continue tokens expire (410) after this; default 300_000 (the API server's 5 minutes). */
  readonly continueTtlMs?: number;
  /** Extra resources (custom resources) served beside the built-ins. */
  readonly resources?: readonly Resource[];
}

/** A running loopback Kubernetes API server. */
export interface ApiServer {
  /** `http://127.0.0.1:PORT` or `https://...`. */
  readonly url: string;
  /** Ready to use: cluster with the server URL (+ CA data when TLS), user with the token when set. */
  readonly kubeConfig: KubeConfig;
  readonly store: ClusterStore;
  readonly faults: FaultControls;
  readonly requests: RequestLog;
  /** Drops every connection and listens again on the same port; data and history are kept. */
  restart(): Promise<void>;
  /** Closes every watch and socket and stops listening; resolves once fully closed. */
  close(): Promise<void>;
}

/** Everything a request needs, shared by the handlers of one server. */
interface ServerState {
  readonly store: ClusterStoreImpl;
  readonly served: readonly ServedResource[];
  readonly faults: FaultQueue;
  readonly requests: RequestLogImpl;
  readonly tokens: ContinueTokens;
  readonly watches: Set<WatchSession>;
  readonly token: string | undefined;
  readonly deny: readonly DenyRule[];
  readonly bookmarkIntervalMs: number;
}

/** The namespaces every cluster starts with. */
const INITIAL_NAMESPACES = ['default', 'kube-system', 'kube-public'] as const;

/** Creates the namespaces a fresh cluster has, shaped as the API server shows them. */
function seedNamespaces(store: ClusterStoreImpl): void {
  for (const name of INITIAL_NAMESPACES) {
    const namespace = {
      metadata: { name, labels: { 'kubernetes.io/metadata.name': name } },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: 'Active' as const },
    };
    store.create(namespaces, namespace);
  }
}

function verbOf(method: string, target: Extract<Route, { kind: 'resource' }>, watch: boolean): Verb | undefined {
  const named = target.name !== undefined;
  switch (method) {
    case 'GET':
      // A GET of one object with ?watch watches that object (the field selector metadata.name=NAME).
      return watch ? 'watch' : named ? 'get' : 'list';
    case 'POST':
      return named ? undefined : 'create';
    case 'PUT':
    case 'PATCH':
      // Verb has no 'patch': a patch is authorized, faulted and logged as the update it is.
      return named ? 'update' : undefined;
    case 'DELETE':
      return named ? 'delete' : undefined;
    default:
      return undefined;
  }
}

function answerFault(response: http.ServerResponse, fault: Fault, store: ClusterStoreImpl): number {
  switch (fault.kind) {
    case 'status': {
      const status = statusForCode(fault.code, fault.reason, fault.message, fault.retryAfterSeconds);
      sendStatus(response, status);
      return fault.code;
    }
    case 'plainText429':
      sendText(response, 429, 'Too many requests, please try again later.\n', { 'Retry-After': String(fault.retryAfterSeconds) });
      return 429;
    case 'tooLargeResourceVersion':
      sendStatus(response, tooLargeResourceVersion(store.currentRv + 1, store.currentRv));
      return 504;
    default:
      return 0;
  }
}

async function handle(state: ServerState, request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://loopback');
  const query: Record<string, string> = {};
  for (const [key, value] of url.searchParams) if (!(key in query)) query[key] = value;
  const method = request.method ?? 'GET';
  const target = route(url.pathname, state.served);
  const isResource = target.kind === 'resource';
  const watch = query.watch === 'true' || query.watch === '1';
  const verb = isResource ? verbOf(method, target, watch) : undefined;
  const record = {
    method,
    path: url.pathname,
    query,
    verb: verb ?? (target.kind === 'discovery' ? 'discovery' : 'other'),
    resource: isResource ? target.served.resource.plural : undefined,
    namespace: isResource ? target.namespace : undefined,
    fault: undefined as Fault['kind'] | undefined,
    time: Date.now(),
  } satisfies Omit<RequestRecord, 'status'>;
  const log = (status: number): void => state.requests.add({ ...record, status });
  const fail = (status: Status): void => {
    sendStatus(response, status);
    log(status.code ?? 500);
  };

  try {
    const fault = state.faults.take(verb, record.resource);
    if (fault !== undefined) {
      record.fault = fault.kind;
      const code = answerFault(response, fault, state.store);
      if (code !== 0) return log(code);
    }
    if (target.kind === 'unknown') return fail(pathNotFound());
    const authentication = authenticate(request, state.token);
    // A wrong credential is refused everywhere; no credential still reads the public endpoints.
    const isPublic = target.kind === 'health' || (target.kind === 'discovery' && target.public === true);
    if ('status' in authentication && (!isPublic || request.headers.authorization !== undefined)) return fail(authentication.status);
    if (target.kind === 'health') {
      sendText(response, 200, 'ok');
      return log(200);
    }
    if (target.kind === 'discovery') {
      sendJson(response, 200, JSON.stringify(target.document));
      return log(200);
    }
    if ('status' in authentication) return fail(authentication.status);
    const resource = target.served.resource;
    if (verb === undefined || (target.subresource !== undefined && (target.subresource !== 'status' || (verb !== 'get' && verb !== 'update')))) {
      return fail(target.subresource === undefined ? methodNotAllowed(method) : pathNotFound());
    }
    const denied = authorize(state.deny, authentication.user, verb, resource, target.namespace, target.name);
    if (denied !== undefined) return fail(denied);

    const { store } = state;
    switch (verb) {
      case 'list': {
        const page = serveList(store, state.tokens, { resource, namespace: target.namespace, query: parseListQuery(target.served, query) });
        log(200);
        return writeListPage(response, page);
      }
      case 'watch': {
        const parsed = parseListQuery(target.served, query);
        const name = target.name;
        const listQuery =
          name === undefined ? parsed : { ...parsed, selective: true, matches: (object: KubeObject) => object.metadata.name === name && parsed.matches(object) };
        const session = WatchSession.open({
          store,
          resource,
          namespace: target.namespace,
          query: listQuery,
          response,
          fault: fault !== undefined && fault.kind !== 'status' ? fault : undefined,
          bookmarkIntervalMs: state.bookmarkIntervalMs,
          onEnd: (ended) => state.watches.delete(ended),
        });
        if (session.isOpen) state.watches.add(session);
        return log(200);
      }
      case 'get':
        sendJson(response, 200, jsonOf(getObject(store, resource, target.namespace, target.name!)));
        return log(200);
      case 'delete': {
        const deleted = store.delete(resource, target.namespace, target.name!);
        sendJson(response, 200, JSON.stringify(deleted));
        return log(200);
      }
      case 'update':
      case 'create': {
        if (method === 'PATCH') {
          const body = await readBody(request);
          const subresource = target.subresource === 'status' ? 'status' : undefined;
          const patched = patchObject(store, resource, target.namespace, target.name!, request.headers['content-type'], body, subresource);
          sendJson(response, 200, jsonOf(patched));
          return log(200);
        }
        const object = parseObjectBody(resource, request.headers['content-type'], await readBody(request));
        const result =
          verb === 'create'
            ? createObject(store, resource, target.namespace, object)
            : updateObject(store, resource, target.namespace, target.name!, object, target.subresource === 'status' ? 'status' : undefined);
        const code = verb === 'create' ? 201 : 200;
        sendJson(response, code, jsonOf(result));
        return log(code);
      }
    }
  } catch (error) {
    const status = error instanceof ApiStatusError ? error.status : internalError(error);
    if (response.headersSent) response.destroy();
    else fail(status);
  }
}

function internalError(error: unknown): Status {
  const message = error instanceof Error ? error.message : String(error);
  return failure(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
}

/**
 * Starts a loopback Kubernetes API server on 127.0.0.1 that speaks the real list/watch protocol
 * (PROTOCOL.md), with an in-process store, scriptable faults and a request log. Close it when done.
 * Like a real cluster, a fresh server holds the `default`, `kube-system` and `kube-public` namespaces.
 *
 * ## Example
 * ```ts
 * const server = await startApiServer();
 * server.store.create(pods, { metadata: { name: 'web', namespace: 'default' } });
 * const core = server.kubeConfig.makeApiClient(CoreV1Api);
 * await server.close();
 * ```
 */
export async function startApiServer(options: ApiServerOptions = {}): Promise<ApiServer> {
  const host = options.host ?? '127.0.0.1';
  const tls = options.tls ?? false;
  const tokens = new ContinueTokens(options.continueTtlMs ?? 300_000);
  const extra = (options.resources ?? []).map(servedResourceOf);
  const state: ServerState = {
    store: new ClusterStoreImpl(options.historyLimit ?? 10_000),
    served: [...builtinResources.filter((b) => !extra.some((e) => e.resource.group === b.resource.group && e.resource.plural === b.resource.plural)), ...extra],
    faults: new FaultQueue(() => tokens.expireAll()),
    requests: new RequestLogImpl(),
    tokens,
    watches: new Set(),
    token: options.token,
    deny: options.deny ?? [],
    bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000,
  };

  seedNamespaces(state.store);

  const listener = (request: http.IncomingMessage, response: http.ServerResponse): void => {
    request.on('error', () => undefined);
    response.on('error', () => undefined);
    handle(state, request, response).catch((error: unknown) => {
      // handle() answers its own errors; this is the last line of defence (a bad URL, a bug).
      if (!response.headersSent) sendStatus(response, internalError(error));
      else response.destroy();
    });
  };
  const server = tls
    ? https.createServer(
        { key: testCertificates.serverKey, cert: testCertificates.serverCert, ca: testCertificates.caCert, requestCert: true, rejectUnauthorized: false },
        listener,
      )
    : http.createServer(listener);
  server.keepAliveTimeout = 5_000;
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('clientError', (_error, socket) => socket.destroy());

  const listen = (port: number): Promise<number> =>
    new Promise((resolve, reject) => {
      const onError = (error: Error): void => reject(error);
      server.once('error', onError);
      server.listen(port, host, () => {
        server.off('error', onError);
        resolve((server.address() as AddressInfo).port);
      });
    });
  const stop = (): Promise<void> =>
    new Promise((resolve) => {
      for (const session of [...state.watches]) session.destroy();
      for (const socket of sockets) socket.destroy();
      if (!server.listening) return resolve();
      server.close(() => resolve());
    });

  const port = await listen(options.port ?? 0);
  const url = `${tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`;
  let kubeConfig: KubeConfig | undefined;
  let closed = false;
  return {
    url,
    get kubeConfig(): KubeConfig {
      kubeConfig ??= loopbackKubeConfig({ url, tls, token: options.token });
      return kubeConfig;
    },
    store: state.store,
    faults: state.faults,
    requests: state.requests,
    async restart() {
      if (closed) throw new Error('the loopback API server is closed');
      await stop();
      await listen(port);
    },
    async close() {
      closed = true;
      await stop();
    },
  };
}
