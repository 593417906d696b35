import { firstValueFrom, filter } from 'rxjs';
import { IndexerConflictError, informerFactory, type InformerFactory } from '../../lib/factory/factory';
import { informer, type Informer } from '../../lib/informer/informer';
import * as kubeListerWatcherModule from '../../lib/sources/kubeListerWatcher';
import { configMaps, namespaces, pods, type Pod } from '../../lib/resources/builtins';
import { StatusError } from '../../lib/sources/errors';
import { labelIndex } from '../../lib/store/indexers';
import { dropManagedFields } from '../../lib/store/transforms';
import { startApiServer, widgets, type ApiServer } from '../../lib/testing';

const fastBackoff = { initialMs: 10, maxMs: 50 };
const podIn = (namespace: string, name: string, labels: Record<string, string> = {}): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { namespace, name, labels, managedFields: [{ manager: 'test' }] },
});

describe('informerFactory', () => {
  let server: ApiServer;
  let factory: InformerFactory | undefined;
  beforeEach(async () => {
    server = await startApiServer();
  });
  afterEach(async () => {
    factory?.shutdown();
    factory = undefined;
    await server.close();
  });
  const make = (options: Parameters<typeof informerFactory>[1] = {}): InformerFactory =>
    (factory = informerFactory(server.kubeConfig, { backoff: fastBackoff, ...options }));
  /** Requests that fill a cache: lists, and streaming lists (watches with sendInitialEvents). */
  const listRequests = (plural: string) =>
    server.requests.entries.filter((r) => (r.verb === 'list' || r.query['sendInitialEvents'] === 'true') && r.resource === plural);

  it('hands its request options (list read-ahead) to every informer, and informer() hands them to its lister-watcher', () => {
    const made = jest.spyOn(kubeListerWatcherModule, 'kubeListerWatcher');
    make({ listReadAhead: false }).informerFor(pods).informer$.subscribe().unsubscribe();
    expect(made).toHaveBeenLastCalledWith(server.kubeConfig, pods, expect.anything(), { listReadAhead: false, withholdExcerpts: undefined });
    informer(server.kubeConfig, configMaps, { listReadAhead: true, withholdExcerpts: true }).informer$.subscribe().unsubscribe();
    expect(made).toHaveBeenLastCalledWith(server.kubeConfig, configMaps, expect.anything(), { listReadAhead: true, withholdExcerpts: true });
    made.mockRestore();
  });

  it('shares one informer per resource, namespace and selectors', () => {
    const f = make({ namespace: 'default' });
    expect(f.informerFor(pods)).toBe(f.informerFor(pods));
    expect(f.informerFor(pods)).not.toBe(f.informerFor(pods, { namespace: 'other' }));
    expect(f.informerFor(pods)).not.toBe(f.informerFor(pods, { labelSelector: 'app=web' }));
    expect(f.informerFor(pods)).not.toBe(f.informerFor(configMaps));
    // Cluster-scoped resources ignore the namespace.
    expect(f.informerFor(namespaces)).toBe(f.informerFor(namespaces, { namespace: 'other' }));
    expect(f.informerFor(pods).name).toBe('pods@default');
  });

  it('starts every informer once however often start() is called, and starts later ones at once', async () => {
    const f = make();
    f.informerFor(pods);
    f.start();
    f.start();
    f.informerFor(configMaps);
    f.start();
    await f.waitForSync({ timeout: 5000 });
    expect(listRequests('pods')).toHaveLength(1);
    expect(listRequests('configmaps')).toHaveLength(1);
  });

  it('waits for every started informer and resolves with their snapshots by name', async () => {
    server.store.create(pods, podIn('default', 'a'));
    server.store.create(pods, podIn('other', 'b'));
    const f = make({ namespace: 'default' });
    f.informerFor(pods);
    f.informerFor(configMaps);
    f.start();
    const snapshots = await f.waitForSync({ timeout: 5000 });
    expect([...snapshots.keys()]).toEqual(['pods@default', 'configmaps@default']);
    expect([...(snapshots.get('pods@default')?.keys() ?? [])]).toEqual(['default/a']);
  });

  it('rejects waitForSync with the error of an informer the server forbids, instead of hanging', async () => {
    await server.close();
    server = await startApiServer({ deny: [{ resource: 'configmaps' }] });
    const f = make();
    f.informerFor(pods);
    f.informerFor(configMaps);
    f.start();
    const failure = await f.waitForSync({ timeout: 500 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(StatusError);
    expect((failure as StatusError).code).toBe(403);
  });

  it('stops every informer on shutdown, and a later start() starts them fresh', async () => {
    const f = make();
    const podInformer = f.informerFor(pods);
    f.start();
    await f.waitForSync({ timeout: 5000 });
    f.shutdown();
    await firstValueFrom(podInformer.health$.pipe(filter((h) => h.phase === 'idle')));
    f.start();
    await f.waitForSync({ timeout: 5000 });
    expect(listRequests('pods')).toHaveLength(2);
  });

  it('applies tweakListOptions to every informer’s requests', async () => {
    server.store.create(pods, podIn('default', 'web', { app: 'web' }));
    server.store.create(pods, podIn('default', 'db', { app: 'db' }));
    const f = make({ tweakListOptions: (selectors) => ({ ...selectors, labelSelector: 'app=web' }) });
    const podInformer = f.informerFor(pods);
    expect(f.informerFor(pods, { labelSelector: 'ignored=by-tweak' })).toBe(podInformer);
    f.start();
    const snapshots = await f.waitForSync({ timeout: 5000 });
    expect([...(snapshots.get('pods?app=web')?.keys() ?? [])]).toEqual(['default/web']);
    expect(listRequests('pods')[0].query.labelSelector).toBe('app=web');
  });

  it('applies the factory’s transform to every cached object', async () => {
    server.store.create(pods, podIn('default', 'a'));
    const f = make({ transform: dropManagedFields });
    f.informerFor(pods);
    f.start();
    const snapshot = (await f.waitForSync({ timeout: 5000 })).get('pods');
    expect(snapshot?.get('default/a')?.metadata.managedFields).toBeUndefined();
  });

  it('watches any group/version/resource, such as a custom resource', async () => {
    server.store.create(widgets, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { namespace: 'default', name: 'w' }, spec: { size: 2 } });
    const f = make();
    const widgetInformer = f.informerFor({ group: 'example.com', version: 'v1', resource: 'widgets' });
    expect(widgetInformer).toBe(f.informerFor(widgets));
    f.start();
    const snapshot = (await f.waitForSync({ timeout: 5000 })).get('widgets.example.com');
    expect(snapshot?.get('default/w')?.metadata.name).toBe('w');
  });

  it('merges indexers until the informer first runs, then refuses new ones with an IndexerConflictError', async () => {
    server.store.create(pods, podIn('default', 'a', { app: 'web' }));
    const f = make();
    const byApp = labelIndex('app');
    const podInformer: Informer<Pod> = f.informerFor(pods, { indexers: { app: byApp } });
    f.informerFor(pods, { indexers: { tier: labelIndex('tier'), app: byApp } });
    expect(() => f.informerFor(pods, { indexers: { app: labelIndex('app') } })).toThrow(IndexerConflictError);
    f.start();
    const snapshot = (await f.waitForSync({ timeout: 5000 })).get('pods');
    expect(snapshot?.indexValues('app')).toEqual(['web']);
    expect(snapshot?.indexValues('tier')).toEqual([]);
    expect(() => f.informerFor(pods, { indexers: { owner: labelIndex('owner') } })).toThrow(IndexerConflictError);
    expect(f.informerFor(pods, { indexers: { app: byApp } })).toBe(podInformer);
  });
});
