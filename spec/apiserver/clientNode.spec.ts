import type { ApiException, CoreV1Api, KubeConfig, V1Pod } from '@kubernetes/client-node';
import { pods, type Pod } from '../../lib/resources/builtins';
import { makePod, seededRandom } from '../../apiserver/src/churn';
import { startApiServer, type ApiServer, type ApiServerOptions } from '../../apiserver/src/server';
import { testCertificates } from '../../apiserver/src/tls';
import { eventually } from '../support/eventually';

/**
 * The loopback API server as @kubernetes/client-node 2.x sees it: its generated API client, its
 * Watch class and its informer, all through a real KubeConfig over real HTTP(S). client-node is
 * the peer our benchmarks compare against, so the server must serve it faithfully.
 *
 * client-node 2.x is an ES module; Jest's CommonJS runtime cannot load it, Node 22's require can.
 */
type ClientNode = typeof import('@kubernetes/client-node');
const clientNode = (process.getBuiltinModule('node:module') as typeof import('node:module')).createRequire(__filename)(
  '@kubernetes/client-node',
) as ClientNode;

const NS = 'shop';

interface SeenEvent {
  readonly type: string;
  readonly object: { readonly metadata?: { readonly name?: string; readonly resourceVersion?: string; readonly annotations?: Record<string, string> }; readonly code?: number; readonly reason?: string };
}

interface WatchOutcome {
  readonly events: SeenEvent[];
  /** Set when client-node called `done` (the stream ended or failed) before the predicate held. */
  readonly ended: boolean;
  readonly error: unknown;
}

/**
 * Watches with client-node's Watch until `enough(events)` holds or the stream ends, then aborts.
 * Gives up after 5 s with the events seen so far, so a broken server fails the test with context.
 */
function watchUntil(kubeConfig: KubeConfig, path: string, query: Record<string, string | number | boolean | undefined>, enough: (events: SeenEvent[]) => boolean): Promise<WatchOutcome> {
  return new Promise((resolve, reject) => {
    const events: SeenEvent[] = [];
    let controller: AbortController | undefined;
    let finished = false;
    const finish = (outcome: WatchOutcome | Error): void => {
      if (finished) return;
      finished = true;
      clearTimeout(giveUp);
      controller?.abort();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const giveUp = setTimeout(() => finish(new Error(`watch gave up; saw ${JSON.stringify(events.map((e) => e.type))}`)), 5000);
    new clientNode.Watch(kubeConfig)
      .watch(
        path,
        query,
        (type: string, object: SeenEvent['object']) => {
          events.push({ type, object });
          if (enough(events)) finish({ events, ended: false, error: undefined });
        },
        (error: unknown) => finish({ events, ended: true, error }),
      )
      .then((c) => {
        controller = c;
        if (finished) c.abort();
      }, (error: unknown) => finish(error instanceof Error ? error : new Error(String(error))));
  });
}

async function apiError(promise: Promise<unknown>): Promise<ApiException<unknown>> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof clientNode.ApiException) return error as ApiException<unknown>;
    throw error;
  }
  throw new Error('expected the call to fail');
}

function statusBody(error: ApiException<unknown>): { code?: number; reason?: string; message?: string } {
  return typeof error.body === 'string' ? (JSON.parse(error.body) as { code?: number }) : (error.body as { code?: number });
}

function kubeConfigWith(server: string, user: Record<string, unknown>, cluster: Record<string, unknown> = {}): KubeConfig {
  const kubeConfig = new clientNode.KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'loopback', server, skipTLSVerify: server.startsWith('http:'), ...cluster }],
    users: [{ name: 'someone', ...user }],
    contexts: [{ name: 'loopback', cluster: 'loopback', user: 'someone' }],
    currentContext: 'loopback',
  });
  return kubeConfig;
}

/**
 * server.kubeConfig as a client-node user must have it: client-node 2.x refuses a plain-http
 * cluster unless `skipTLSVerify` is set (it throws "HTTP protocol is not allowed when
 * skipTLSVerify is not set or false"), and the loopback kubeconfig leaves it false.
 */
function clientNodeConfig(server: ApiServer): KubeConfig {
  if (server.url.startsWith('https:')) return server.kubeConfig;
  const kubeConfig = new clientNode.KubeConfig();
  kubeConfig.loadFromString(server.kubeConfig.exportConfig());
  kubeConfig.clusters = kubeConfig.clusters.map((cluster) => ({ ...cluster, skipTLSVerify: true }));
  return kubeConfig;
}

function seedPods(server: ApiServer, count: number): void {
  const random = seededRandom(11);
  const apps = ['api', 'web', 'worker'];
  for (let i = 0; i < count; i++) {
    server.store.create(pods, makePod(random, NS, `pod-${String(i).padStart(2, '0')}`, { app: apps[i % apps.length] as string }));
  }
}

function names(items: readonly V1Pod[]): string[] {
  return items.map((pod) => pod.metadata?.name ?? '').sort();
}

describe('client-node against the loopback server (http, no auth)', () => {
  let server: ApiServer;
  let kubeConfig: KubeConfig;
  let api: CoreV1Api;

  beforeEach(async () => {
    server = await startApiServer({ bookmarkIntervalMs: 50 });
    seedPods(server, 7);
    kubeConfig = clientNodeConfig(server);
    api = kubeConfig.makeApiClient(clientNode.CoreV1Api);
  });
  afterEach(() => server.close());

  it('pages a list with limit and continue, every page at the same resourceVersion', async () => {
    const seen: V1Pod[] = [];
    const versions = new Set<string | undefined>();
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await api.listNamespacedPod({ namespace: NS, limit: 3, ...(token === undefined ? {} : { _continue: token }) });
      pages++;
      seen.push(...page.items);
      versions.add(page.metadata?.resourceVersion);
      token = page.metadata?._continue === '' ? undefined : page.metadata?._continue;
      // A write between pages must not show up: pages form one consistent snapshot.
      if (pages === 1) server.store.create(pods, makePod(seededRandom(1), NS, 'pod-late'));
    } while (token !== undefined);
    expect(pages).toBe(3);
    expect(names(seen)).toEqual(['pod-00', 'pod-01', 'pod-02', 'pod-03', 'pod-04', 'pod-05', 'pod-06']);
    expect(versions.size).toBe(1);
  });

  it('creates, replaces and deletes pods, with 409 on a stale resourceVersion and 404 afterwards', async () => {
    const created = await api.createNamespacedPod({
      namespace: NS,
      body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'made-by-client-node', labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
    });
    expect(created.metadata?.uid).toEqual(expect.any(String));
    expect(created.metadata?.resourceVersion).toEqual(expect.any(String));
    expect(server.store.get(pods, NS, 'made-by-client-node')?.metadata.labels).toEqual({ app: 'x' });

    const replaced = await api.replaceNamespacedPod({
      namespace: NS,
      name: 'made-by-client-node',
      body: { ...created, metadata: { ...created.metadata, labels: { app: 'y' } } },
    });
    expect(replaced.metadata?.labels).toEqual({ app: 'y' });
    expect(replaced.metadata?.resourceVersion).not.toBe(created.metadata?.resourceVersion);

    const stale = await apiError(api.replaceNamespacedPod({ namespace: NS, name: 'made-by-client-node', body: created }));
    expect(stale.code).toBe(409);
    expect(statusBody(stale)).toMatchObject({ kind: 'Status', code: 409, reason: 'Conflict' });

    await api.deleteNamespacedPod({ namespace: NS, name: 'made-by-client-node' });
    expect(server.store.get(pods, NS, 'made-by-client-node')).toBeUndefined();
    const missing = await apiError(api.readNamespacedPod({ namespace: NS, name: 'made-by-client-node' }));
    expect(missing.code).toBe(404);
    expect(statusBody(missing)).toMatchObject({ reason: 'NotFound', message: 'pods "made-by-client-node" not found' });
  });

  it('lists by label selector and by field selector', async () => {
    expect(names((await api.listNamespacedPod({ namespace: NS, labelSelector: 'app=api' })).items)).toEqual(['pod-00', 'pod-03', 'pod-06']);
    expect(names((await api.listNamespacedPod({ namespace: NS, labelSelector: 'app in (web,worker),app!=web' })).items)).toEqual(['pod-02', 'pod-05']);
    expect(names((await api.listNamespacedPod({ namespace: NS, fieldSelector: 'metadata.name=pod-04' })).items)).toEqual(['pod-04']);
    expect(names((await api.listPodForAllNamespaces({ fieldSelector: `metadata.namespace=${NS}`, labelSelector: 'app=web' })).items)).toEqual(['pod-01', 'pod-04']);
  });

  it('resumes a watch from a list resourceVersion: exactly the later changes, in order', async () => {
    const list = await api.listNamespacedPod({ namespace: NS });
    server.store.create(pods, makePod(seededRandom(2), NS, 'pod-new'));
    const current = server.store.get(pods, NS, 'pod-01') as Pod;
    server.store.update(pods, { ...current, metadata: { ...current.metadata, labels: { app: 'changed' } } });
    server.store.delete(pods, NS, 'pod-02');
    const { events } = await watchUntil(kubeConfig, `/api/v1/namespaces/${NS}/pods`, { resourceVersion: list.metadata?.resourceVersion }, (e) => e.length >= 3);
    expect(events.map((e) => `${e.type} ${e.object.metadata?.name}`)).toEqual(['ADDED pod-new', 'MODIFIED pod-01', 'DELETED pod-02']);
  });

  it('answers a watch from a compacted resourceVersion with one ERROR 410 event, then ends the stream', async () => {
    const list = await api.listNamespacedPod({ namespace: NS });
    server.store.create(pods, makePod(seededRandom(3), NS, 'pod-after'));
    server.store.compact();
    const outcome = await watchUntil(kubeConfig, `/api/v1/namespaces/${NS}/pods`, { resourceVersion: list.metadata?.resourceVersion }, () => false);
    expect(outcome.ended).toBe(true);
    expect(outcome.error).toBeNull();
    expect(outcome.events).toEqual([{ type: 'ERROR', object: expect.objectContaining({ kind: 'Status', code: 410, reason: 'Expired' }) }]);
  });

  it('sends BOOKMARK events carrying only a resourceVersion when asked for them', async () => {
    const list = await api.listNamespacedPod({ namespace: NS });
    const { events } = await watchUntil(kubeConfig, `/api/v1/namespaces/${NS}/pods`, { resourceVersion: list.metadata?.resourceVersion, allowWatchBookmarks: true }, (e) => e.some((x) => x.type === 'BOOKMARK'));
    const bookmark = events.find((e) => e.type === 'BOOKMARK');
    expect(bookmark?.object).toEqual({ kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: server.store.resourceVersion } });
  });

  it('streams the initial state with sendInitialEvents, ending with the annotated bookmark', async () => {
    const { events } = await watchUntil(
      kubeConfig,
      `/api/v1/namespaces/${NS}/pods`,
      { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: true },
      (e) => e.some((x) => x.object.metadata?.annotations?.['k8s.io/initial-events-end'] === 'true'),
    );
    const added = events.filter((e) => e.type === 'ADDED').map((e) => e.object.metadata?.name ?? '');
    expect(added.sort()).toEqual(['pod-00', 'pod-01', 'pod-02', 'pod-03', 'pod-04', 'pod-05', 'pod-06']);
    const last = events[events.length - 1];
    expect(last?.type).toBe('BOOKMARK');
    expect(last?.object.metadata?.resourceVersion).toBe(server.store.resourceVersion);
  });

  it('filters watch events by label selector', async () => {
    const list = await api.listNamespacedPod({ namespace: NS });
    server.store.create(pods, makePod(seededRandom(4), NS, 'other-1', { app: 'web' }));
    server.store.create(pods, makePod(seededRandom(4), NS, 'wanted-1', { app: 'api' }));
    const { events } = await watchUntil(kubeConfig, `/api/v1/namespaces/${NS}/pods`, { resourceVersion: list.metadata?.resourceVersion, labelSelector: 'app=api' }, (e) => e.length >= 1);
    expect(events.map((e) => `${e.type} ${e.object.metadata?.name}`)).toEqual(['ADDED wanted-1']);
  });

  it('relays an injected 429 with its Retry-After header, in both the Status and the plain-text form', async () => {
    server.faults.inject({ kind: 'status', code: 429, reason: 'TooManyRequests', message: 'slow down', retryAfterSeconds: 3 }, { verb: 'list', resource: 'pods' });
    const status = await apiError(api.listNamespacedPod({ namespace: NS }));
    expect(status.code).toBe(429);
    expect(status.headers['retry-after']).toBe('3');
    expect(statusBody(status)).toMatchObject({ kind: 'Status', code: 429, reason: 'TooManyRequests', details: { retryAfterSeconds: 3 } });

    server.faults.inject({ kind: 'plainText429', retryAfterSeconds: 1 }, { verb: 'list', resource: 'pods' });
    const plain = await apiError(api.listNamespacedPod({ namespace: NS }));
    expect(plain.code).toBe(429);
    expect(plain.headers['retry-after']).toBe('1');
    expect(plain.body).toBe('Too many requests, please try again later.\n');

    expect((await api.listNamespacedPod({ namespace: NS })).items).toHaveLength(7);
  });

  it('keeps client-node\'s informer in sync: initial list, then adds, updates and deletes', async () => {
    const informer = clientNode.makeInformer(kubeConfig, `/api/v1/namespaces/${NS}/pods`, () => api.listNamespacedPod({ namespace: NS }));
    const seen: string[] = [];
    const errors: unknown[] = [];
    const record = (verb: string) => (pod: V1Pod): void => void seen.push(`${verb} ${pod.metadata?.name}`);
    informer.on('add', record('add'));
    informer.on('update', record('update'));
    informer.on('delete', record('delete'));
    informer.on('error', (error: unknown) => errors.push(error));
    try {
      await informer.start();
      await eventually(() => expect(names(informer.list(NS))).toHaveLength(7), { timeoutMs: 5000 });
      const current = server.store.get(pods, NS, 'pod-03') as Pod;
      server.store.create(pods, makePod(seededRandom(5), NS, 'pod-07'));
      server.store.update(pods, { ...current, metadata: { ...current.metadata, labels: { app: 'moved' } } });
      server.store.delete(pods, NS, 'pod-05');
      await eventually(() => expect(seen).toContain('delete pod-05'), { timeoutMs: 5000 });
      expect(seen.slice(7)).toEqual(['add pod-07', 'update pod-03', 'delete pod-05']);
      expect(names(informer.list(NS))).toEqual(['pod-00', 'pod-01', 'pod-02', 'pod-03', 'pod-04', 'pod-06', 'pod-07']);
      expect(informer.get('pod-03', NS)?.metadata?.labels).toEqual({ app: 'moved' });
      expect(errors).toEqual([]);
    } finally {
      await informer.stop();
    }
  });
});

describe('client-node against the loopback server with authentication and authorization', () => {
  let server: ApiServer;
  const start = async (options: ApiServerOptions): Promise<void> => {
    server = await startApiServer(options);
    seedPods(server, 2);
  };
  afterEach(() => server.close());

  it('gets 401 for a wrong or missing bearer token, and the list with the right one', async () => {
    await start({ token: 's3cret' });
    const wrong = kubeConfigWith(server.url, { token: 'guess' });
    expect((await apiError(wrong.makeApiClient(clientNode.CoreV1Api).listNamespacedPod({ namespace: NS }))).code).toBe(401);
    const none = kubeConfigWith(server.url, {});
    expect((await apiError(none.makeApiClient(clientNode.CoreV1Api).listNamespacedPod({ namespace: NS }))).code).toBe(401);
    const watch = await watchUntil(wrong, `/api/v1/namespaces/${NS}/pods`, {}, () => false);
    expect(watch.ended).toBe(true);
    expect((watch.error as { statusCode?: number }).statusCode).toBe(401);
    expect((await clientNodeConfig(server).makeApiClient(clientNode.CoreV1Api).listNamespacedPod({ namespace: NS })).items).toHaveLength(2);
  });

  it('gets 403 with the API server\'s message for a denied verb, and only for it', async () => {
    await start({ token: 's3cret', deny: [{ verb: 'list', resource: 'pods', namespace: 'secret-ns' }] });
    const api = clientNodeConfig(server).makeApiClient(clientNode.CoreV1Api);
    const denied = await apiError(api.listNamespacedPod({ namespace: 'secret-ns' }));
    expect(denied.code).toBe(403);
    expect(statusBody(denied)).toMatchObject({
      kind: 'Status',
      code: 403,
      reason: 'Forbidden',
      message: 'pods is forbidden: User "system:serviceaccount:default:test" cannot list resource "pods" in API group "" in the namespace "secret-ns"',
    });
    expect((await api.listNamespacedPod({ namespace: NS })).items).toHaveLength(2);
  });
});

describe('client-node against the loopback server over https', () => {
  let server: ApiServer;
  afterEach(() => server.close());

  it('verifies the server with the CA from server.kubeConfig, lists and watches', async () => {
    server = await startApiServer({ tls: true, token: 's3cret' });
    seedPods(server, 3);
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const list = await server.kubeConfig.makeApiClient(clientNode.CoreV1Api).listNamespacedPod({ namespace: NS });
    expect(names(list.items)).toEqual(['pod-00', 'pod-01', 'pod-02']);
    server.store.delete(pods, NS, 'pod-01');
    const { events } = await watchUntil(server.kubeConfig, `/api/v1/namespaces/${NS}/pods`, { resourceVersion: list.metadata?.resourceVersion }, (e) => e.length >= 1);
    expect(events.map((e) => `${e.type} ${e.object.metadata?.name}`)).toEqual(['DELETED pod-01']);
  });

  it('refuses the connection when the kubeconfig lacks the CA', async () => {
    server = await startApiServer({ tls: true, token: 's3cret' });
    const noCa = kubeConfigWith(server.url, { token: 's3cret' });
    await expect(noCa.makeApiClient(clientNode.CoreV1Api).listNamespacedPod({ namespace: NS })).rejects.toThrow();
  });

  it('authenticates a client certificate signed by the test CA instead of a token', async () => {
    server = await startApiServer({ tls: true, token: 's3cret', deny: [{ verb: 'list', resource: 'secrets' }] });
    seedPods(server, 1);
    const cluster = { caData: Buffer.from(testCertificates.caCert).toString('base64') };
    const withCert = kubeConfigWith(
      server.url,
      { certData: Buffer.from(testCertificates.clientCert).toString('base64'), keyData: Buffer.from(testCertificates.clientKey).toString('base64') },
      cluster,
    );
    const api = withCert.makeApiClient(clientNode.CoreV1Api);
    expect(names((await api.listNamespacedPod({ namespace: NS })).items)).toEqual(['pod-00']);
    // The 403 names the certificate's CN: the server took the user from the certificate.
    const denied = await apiError(api.listNamespacedSecret({ namespace: NS }));
    expect(statusBody(denied).message).toBe('secrets is forbidden: User "rx-informer-test-user" cannot list resource "secrets" in API group "" in the namespace "shop"');
    const anonymous = kubeConfigWith(server.url, {}, cluster);
    expect((await apiError(anonymous.makeApiClient(clientNode.CoreV1Api).listNamespacedPod({ namespace: NS }))).code).toBe(401);
  });
});
