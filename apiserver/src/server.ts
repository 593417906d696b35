import * as http from 'node:http';
import * as https from 'node:https';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { asyncScheduler, Subscription, type SchedulerAction, type SchedulerLike } from 'rxjs';
import type { Resource } from 'rx-informer';
import { namespaces } from 'rx-informer';
import type { DenyRule } from './auth';
import { builtinResources, servedResourceOf } from './builtinResources';
import { ClusterStoreImpl, type ClusterStore } from './clusterStore';
import { CrdControllers } from './crdControllers';
import { CUSTOM_RESOURCE_DEFINITIONS_SERVED } from './crdServing';
import { ClusterStoreWithCrds } from './crdStore';
import { ServedResources } from './servedResources';
import { FaultQueue, type FaultControls } from './faults';
import { loopbackKubeConfig } from './kubeConfig';
import { ContinueTokens } from './listHandler';
import { RequestLogImpl, type RequestLog } from './requestLog';
import { handle, internalError, type ServerState } from './requestHandler';
import { sendStatus } from './respond';
import { defaultServerProfile, NEWEST_SERVER_VERSION, serverProfile, versionDocument, type ServerProfile, type ServerVersion } from './serverVersion';
import { testCertificates } from './tls';

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
  /**
   * Change events kept per resource, for etcd's history (Exact lists, continue tokens) and the
   * watch cache alike; default 10_000. A memory bound: the real etcd keeps every revision back to
   * its last compaction.
   */
  readonly historyLimit?: number;
  /** Events the watch cache keeps per resource (a watch from before them gets 410); default (and at most) `historyLimit`. */
  readonly watchCacheCapacity?: number;
  /**
   * Events older than this leave the watch cache as new events arrive; default: no time bound.
   * (The API server's keeps about 75 s of events under churn, 100 to 102 400 of them.)
   */
  readonly watchCacheWindowMs?: number;
  /**
   * etcd is compacted this often, each time at the resourceVersion of the compaction before, so it
   * keeps one to two intervals of history (the API server's `--etcd-compaction-interval`,
   * `etcd3/compact.go`); default 300_000 (5 minutes); 0 never compacts (`store.compact()` still does).
   */
  readonly etcdCompactionIntervalMs?: number;
  /** Period of BOOKMARK events on watches with allowWatchBookmarks; default 60_000 (the API server's minute). */
  readonly bookmarkIntervalMs?: number;
  /** Continue tokens expire (410) after this; default 300_000 (the API server's 5 minutes). */
  readonly continueTtlMs?: number;
  /** Extra resources (custom resources) served beside the built-ins. */
  readonly resources?: readonly Resource[];
  /**
   * The Kubernetes version to answer like (see `serverProfile`): streaming lists, validation of
   * list options, which lists the watch cache serves and `/version`. Default: the newest modelled,
   * {@link NEWEST_SERVER_VERSION}, except that lists at resourceVersion "0" are paged, which no
   * real version does (see `defaultServerProfile`); name a version to get its exact answers.
   */
  readonly serverVersion?: ServerVersion;
  /**
   * How long a list the watch cache serves waits for a resourceVersion the server has not reached
   * before answering 504 "Too large resource version"; default 3 000 (the watch cache's
   * `blockTimeout`).
   */
  readonly watchCacheWaitMs?: number;
  /** Runs the server's own timers and clocks (the watch cache's wait and window, etcd's compaction); default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike;
  /**
   * Serve KEP-5866's `shardSelector` on lists and watches and echo it in a list's
   * `metadata.shardInfo`, like a 1.36+ server with the `ShardedListAndWatch` gate on. Default
   * true; false answers like a server without the feature (the parameter is ignored).
   */
  readonly shardedListAndWatch?: boolean;
  /**
   * Convert objects to `meta.k8s.io` PartialObjectMetadata when Accept asks (`;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`,
   * `...List` for lists), as every API server since 1.15 does; default true. False plays one that
   * cannot (before 1.15, or an aggregated API server that does not): it passes such Accept clauses
   * over, answering plain objects to a header with a plain-JSON fallback and 406 to one without.
   */
  readonly partialObjectMetadata?: boolean;
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
  /** The version the server answers like, and what that changes. */
  readonly profile: ServerProfile;
  /**
   * Restarts the API server: drops every connection and listens again on the same port. Its watch
   * cache starts empty at the current resourceVersion, so a watch from an older one gets 410,
   * while etcd's data and history are kept.
   */
  restart(): Promise<void>;
  /** Closes every watch and socket and stops listening; resolves once fully closed. */
  close(): Promise<void>;
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

/**
 * Compacts etcd every `intervalMs` at the revision the previous run saw, as the API server's
 * compactor does (`etcd3/compact.go`: the first run only records the revision). The watch cache
 * keeps its events.
 */
function startEtcdCompactor(store: ClusterStoreImpl, intervalMs: number, scheduler: SchedulerLike): Subscription {
  if (intervalMs <= 0) return Subscription.EMPTY;
  let seen: number | undefined;
  return scheduler.schedule(function compact(this: SchedulerAction<undefined>) {
    if (seen !== undefined) store.compactTo(seen, true);
    seen = store.currentRv;
    this.schedule(undefined, intervalMs);
  }, intervalMs);
}

/**
 * Starts a loopback Kubernetes API server on 127.0.0.1 that speaks the real list/watch protocol
 * (PROTOCOL.md), with an in-process store, scriptable faults and a request log. Close it when done.
 * Like a real cluster, a fresh server holds the `default`, `kube-system` and `kube-public` namespaces.
 *
 * ## Example
 * ```ts
 * import { CoreV1Api } from '@kubernetes/client-node';
 * import { pods } from 'rx-informer';
 * import { startApiServer } from 'rx-informer-apiserver';
 *
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
  const profile = options.serverVersion === undefined ? defaultServerProfile() : serverProfile(options.serverVersion);
  const scheduler = options.scheduler ?? asyncScheduler;
  const store = new ClusterStoreWithCrds({
    historyLimit: options.historyLimit,
    watchCacheCapacity: options.watchCacheCapacity,
    watchCacheWindowMs: options.watchCacheWindowMs,
    now: () => scheduler.now(),
  });
  const fixed = [...builtinResources, CUSTOM_RESOURCE_DEFINITIONS_SERVED];
  // Resources given in options replace the built-in of the same group and plural.
  const served = new ServedResources([...fixed.filter((b) => !extra.some((e) => e.resource.group === b.resource.group && e.resource.plural === b.resource.plural)), ...extra]);
  const state: ServerState = {
    store,
    get served() {
      return served.all;
    },
    faults: new FaultQueue(() => tokens.expireAll()),
    requests: new RequestLogImpl(),
    tokens,
    watches: new Set(),
    token: options.token,
    deny: options.deny ?? [],
    bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000,
    profile,
    versionDocument: versionDocument(profile),
    watchCacheWaitMs: options.watchCacheWaitMs ?? 3_000,
    scheduler,
    shardedListAndWatch: options.shardedListAndWatch ?? true,
    convertsMetadata: options.partialObjectMetadata ?? true,
    metadataJson: new WeakMap(),
  };

  seedNamespaces(state.store);
  const crds = new CrdControllers(store, served, scheduler, (resource) => {
    for (const session of [...state.watches]) {
      if (session.resource.group === resource.group && session.resource.plural === resource.plural) session.end();
    }
  });

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
  const compactor = startEtcdCompactor(store, options.etcdCompactionIntervalMs ?? 300_000, scheduler);
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
    profile,
    async restart() {
      if (closed) throw new Error('the loopback API server is closed');
      // At once, before anything else changes: the new process's cache starts at this revision.
      store.resetWatchCache();
      await stop();
      await listen(port);
    },
    async close() {
      closed = true;
      compactor.unsubscribe();
      crds.close();
      await stop();
    },
  };
}
