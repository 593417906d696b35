import { silentLogger } from '../../lib/base/logger';
import { firstValueFrom, ReplaySubject, throwError, type Observable, type Subscription } from 'rxjs';
import { IndexerConflictError, informerFactory, type InformerFactory } from '../../lib/factory/factory';
import type { HandlerEvent } from '../../lib/handlers/resourceHandlers';
import { informer, type Informer } from '../../lib/informer/informer';
import { InformerStoppedError } from '../../lib/informer/waitForSync';
import * as indexerModule from '../../lib/store/indexer';
import * as kubeListerWatcherModule from '../../lib/sources/kubeListerWatcher';
import { configMaps, namespaces, pods, type Pod } from '../../lib/resources/builtins';
import { ConfigError, StatusError } from '../../lib/base/errors';
import type { Snapshot } from '../../lib/store/snapshot';
import { labelIndex } from '../../lib/store/indexers';
import { dropManagedFields } from '../../lib/store/transforms';
import { startApiServer, widgets, type ApiServer } from '../../apiserver/src';
import { describeEachServerVersion, isServedList } from '../support/serverVersions';
import { EVENTUALLY_MS, firstSatisfying, within } from '../support/eventually';

const fastBackoff = { initialMs: 10, maxMs: 50 };
const podIn = (namespace: string, name: string, labels: Record<string, string> = {}): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { namespace, name, labels, managedFields: [{ manager: 'test' }] },
});

describeEachServerVersion('informerFactory', (serverVersion) => {
  let server: ApiServer;
  let factory: InformerFactory | undefined;
  beforeEach(async () => {
    server = await startApiServer({ serverVersion });
  });
  afterEach(async () => {
    await factory?.shutdown();
    factory = undefined;
    await server.close();
  });
  // The 403s and the failing cache these specs provoke are read from waitForSync and health$, not from log lines.
  const make = (options: Parameters<typeof informerFactory>[1] = {}): InformerFactory =>
    (factory = informerFactory(server.kubeConfig, { backoff: fastBackoff, logger: silentLogger, ...options }));
  /** Requests that filled a cache: lists, and streaming lists the server served. */
  const listRequests = (plural: string) => server.requests.entries.filter((r) => isServedList(r) && r.resource === plural);

  it('hands its request options (list read-ahead) to every informer, and informer() hands them to its lister-watcher', () => {
    const made = jest.spyOn(kubeListerWatcherModule, 'kubeListerWatcher');
    const f = make({ listReadAhead: false });
    f.informerFor(pods);
    f.start();
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
    server = await startApiServer({ serverVersion, deny: [{ resource: 'configmaps' }] });
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
    await f.shutdown();
    expect((await firstValueFrom(podInformer.health$)).phase).toBe('idle');
    f.start();
    await f.waitForSync({ timeout: 5000 });
    expect(listRequests('pods')).toHaveLength(2);
  });

  it('requests nothing before start(): streams subscribed earlier wait for it, then ride one list', async () => {
    server.store.create(pods, podIn('default', 'a'));
    const f = make();
    const podInformer = f.informerFor(pods);
    const added: string[] = [];
    const events = new ReplaySubject<HandlerEvent<Pod>>();
    podInformer.handle({ onAdd: (pod) => void added.push(pod.metadata.name) }).subscribe(events);
    const snapshots: Snapshot<Pod>[] = [];
    podInformer.informer$.subscribe((snapshot) => snapshots.push(snapshot));
    const health = await firstValueFrom(podInformer.health$);
    // A request would have moved the reflector to 'listing' as it subscribed, synchronously.
    expect(health.phase).toBe('idle');
    expect(snapshots).toEqual([]);
    f.start();
    await firstSatisfying(events, (event) => expect(event.type).toBe('synced'));
    expect(added).toEqual(['a']);
    expect(listRequests('pods')).toHaveLength(1);
  });

  it('completes every stream of every informer on shutdown, and resolves once every informer has stopped', async () => {
    server.store.create(pods, podIn('default', 'a'));
    const f = make();
    const podInformer = f.informerFor(pods);
    const configMapInformer = f.informerFor(configMaps);
    const completed: string[] = [];
    const track = (label: string, stream: Observable<unknown>): Subscription => stream.subscribe({ complete: () => completed.push(label), error: () => completed.push(`${label} errored`) });
    track('handle', podInformer.handle({}));
    track('informer$', podInformer.informer$);
    track('changes$', podInformer.changes$);
    track('deltas$', configMapInformer.deltas$);
    track('waiting handle', f.informerFor(namespaces).handle({}));
    f.start();
    await f.waitForSync({ timeout: 5000 });
    const stopping = f.shutdown();
    expect(completed.sort()).toEqual(['changes$', 'deltas$', 'handle', 'informer$', 'waiting handle']);
    await within(stopping, EVENTUALLY_MS, 'shutdown() to resolve once every informer has stopped');
    for (const informer of [podInformer, configMapInformer]) expect((await firstValueFrom(informer.health$)).phase).toBe('idle');
  });

  it('completes at shutdown even the streams subscribed before start()', async () => {
    const f = make();
    let completed = false;
    f.informerFor(pods).handle({}).subscribe({ complete: () => (completed = true) });
    await f.shutdown();
    expect(completed).toBe(true);
    expect(server.requests.entries.filter((r) => r.resource === 'pods')).toEqual([]);
  });

  it('rejects a waitForSync in progress with an InformerStoppedError when the factory shuts down', async () => {
    await server.close();
    server = await startApiServer({ serverVersion, deny: [{ resource: 'pods' }] });
    const f = make();
    f.informerFor(pods);
    f.start();
    const waiting = f.waitForSync({ timeout: 60_000 }).catch((error: unknown) => error);
    await firstSatisfying(f.informerFor(pods).health$, (health) => expect(health.lastError).toBeDefined());
    await within(f.shutdown(), EVENTUALLY_MS, 'shutdown() to resolve');
    const failure = await within(waiting, EVENTUALLY_MS, 'the waitForSync in progress (timeout 60 s) to reject at shutdown');
    expect(failure).toBeInstanceOf(InformerStoppedError);
    expect((failure as InformerStoppedError).message).toBe('pods stopped before it synced');
  });

  it('rejects waitForSync before start(), since nothing runs until then', async () => {
    const f = make();
    f.informerFor(pods);
    await expect(f.waitForSync({ timeout: 5000 })).rejects.toThrow(/before start\(\)/);
  });

  it('rejects waitForSync naming an informer whose cache has failed, instead of resolving without it', async () => {
    const real = indexerModule.indexer;
    const failing = jest.spyOn(indexerModule, 'indexer').mockImplementation((config) => {
      const indexed = real(config);
      // A cache that fails as configmaps are indexed: what no data can do now, a bug could.
      return (deltas) => (config?.indexers?.['byConfigMapFailure'] ? throwError(() => new Error('cache bug')) : indexed(deltas));
    });
    try {
      const f = make();
      f.informerFor(pods);
      f.informerFor(configMaps, { indexers: { byConfigMapFailure: labelIndex('x') } });
      f.start();
      const failure = await f.waitForSync({ timeout: 5000 }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(InformerStoppedError);
      expect((failure as InformerStoppedError).message).toBe('configmaps stopped before it synced: cache bug');
      expect((failure as InformerStoppedError).informer).toBe('configmaps');
    } finally {
      failing.mockRestore();
    }
  });

  it('keeps the namespace index when indexers are given', async () => {
    server.store.create(pods, podIn('default', 'a', { app: 'web' }));
    server.store.create(pods, podIn('other', 'b', { app: 'web' }));
    const f = make();
    f.informerFor(pods, { indexers: { app: labelIndex('app') } });
    f.start();
    const snapshot = (await f.waitForSync({ timeout: 5000 })).get('pods');
    expect(snapshot?.byIndex('namespace', 'default').map((pod) => pod.metadata.name)).toEqual(['a']);
    expect(snapshot?.list({ namespace: 'other' }).map((pod) => pod.metadata.name)).toEqual(['b']);
    expect(snapshot?.indexValues('app')).toEqual(['web']);
  });

  it('takes indexers after health$ is subscribed: watching health builds nothing and requests nothing', async () => {
    const f = make();
    const phases: string[] = [];
    f.informerFor(pods).health$.subscribe((health) => phases.push(health.phase));
    expect(() => f.informerFor(pods, { indexers: { app: labelIndex('app') } })).not.toThrow();
    f.start();
    const snapshot = (await f.waitForSync({ timeout: 5000 })).get('pods');
    expect(snapshot?.indexValues('app')).toEqual([]);
    expect(phases[0]).toBe('idle');
    expect(phases).toContain('watching');
  });

  it('throws a ConfigError from informerFor for a selector that does not parse, and from informerFactory for a kubeconfig without a current context', () => {
    const f = make();
    expect(() => f.informerFor(pods, { labelSelector: 'app in (web' })).toThrow(ConfigError);
    expect(() => f.informerFor(pods, { fieldSelector: 'spec.nodeName' })).toThrow(/^pods\?spec\.nodeName: invalid fieldSelector "spec\.nodeName" at 0: term "spec\.nodeName" has no operator/);
    const noContext = server.kubeConfig;
    const copy = Object.create(noContext) as typeof noContext;
    copy.setCurrentContext('');
    expect(() => informerFactory(copy)).toThrow(expect.objectContaining({ problem: 'no-current-context' }));
  });

  it('throws a RangeError from informerFactory for an option out of range, instead of failing each informer at start()', () => {
    expect(() => informerFactory(server.kubeConfig, { pageSize: -1 })).toThrow(RangeError);
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
