import { silentLogger } from '../../lib/base/logger';
import { BehaviorSubject, Subject, type Subscription } from 'rxjs';
import { informer, informerName } from '../../lib/informer/informer';
import type { InformerMetricEvent } from '../../lib/informer/informerMetrics';
import { informerFactory } from '../../lib/factory/factory';
import { waitForSync } from '../../lib/informer/waitForSync';
import { configMaps, nodes, pods, type Pod } from '../../lib/resources/builtins';
import type { Snapshot } from '../../lib/store/snapshot';
import type { InformerHealth } from '../../lib/reflector/health';
import { startApiServer, type ApiServer } from '../../apiserver/src';
import { describeEachServerVersion } from '../support/serverVersions';
import { eventually } from '../support/eventually';

const backoff = { initialMs: 10, maxMs: 50 };
const podIn = (namespace: string, name: string): Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { namespace, name } });
const keys = (snapshot: Snapshot | undefined): string[] => [...(snapshot?.keys() ?? [])].sort();

describeEachServerVersion('an informer over a set of namespaces, over HTTP', (serverVersion) => {
  let server: ApiServer;
  const subscriptions: Subscription[] = [];
  const keep = (subscription: Subscription): Subscription => (subscriptions.push(subscription), subscription);

  beforeEach(async () => {
    server = await startApiServer({ serverVersion, deny: [{ resource: 'pods', namespace: 'locked' }] });
    for (const namespace of ['a', 'b', 'c', 'locked']) server.store.create(pods, podIn(namespace, 'p1'));
  });
  afterEach(async () => {
    subscriptions.splice(0).forEach((s) => s.unsubscribe());
    await server.close();
  });

  it('syncs one cache of the namespaces listed, one list and watch each, then follows every watch', async () => {
    const shared = informer(server.kubeConfig, pods, { namespaces: ['a', 'b'], backoff, logger: silentLogger });
    expect(shared.name).toBe('pods@[a,b]');
    const metrics: InformerMetricEvent[] = [];
    keep(shared.metrics$.subscribe((event) => metrics.push(event)));
    let latest: Snapshot<Pod> | undefined;
    keep(shared.informer$.subscribe((snapshot) => (latest = snapshot)));
    const [synced] = await waitForSync([shared], { timeout: 10_000 });
    expect(keys(synced)).toEqual(['a/p1', 'b/p1']);
    expect(synced.indexValues('namespace').sort()).toEqual(['a', 'b']);

    server.store.create(pods, podIn('b', 'p2'));
    server.store.create(pods, podIn('c', 'p2'));
    server.store.delete(pods, 'a', 'p1');
    await eventually(() => expect(keys(latest)).toEqual(['b/p1', 'b/p2']));
    // Each namespace has its own requests, by path.
    const paths = server.requests.entries.filter((record) => record.path.includes('/pods')).map((record) => record.path);
    expect(new Set(paths)).toEqual(new Set(['/api/v1/namespaces/a/pods', '/api/v1/namespaces/b/pods']));
    expect(metrics.filter((event) => event.type === 'watchStarted').length).toBeGreaterThanOrEqual(2);
  });

  it('follows a changing set: a namespace added arrives as adds, one removed leaves as deletes, both marked', async () => {
    const set = new BehaviorSubject<readonly string[]>(['a']);
    const shared = informer(server.kubeConfig, pods, { namespaces: set, backoff, logger: silentLogger });
    expect(shared.name).toBe('pods@[...]');
    const seen: string[] = [];
    keep(
      shared
        .handle({
          onAdd: (pod, { namespaceSet }) => void seen.push(`add ${pod.metadata.namespace}/${pod.metadata.name}${namespaceSet ? ` (${namespaceSet.type})` : ''}`),
          onDelete: (pod, { namespaceSet }) => void seen.push(`delete ${pod.metadata.namespace}/${pod.metadata.name}${namespaceSet ? ` (${namespaceSet.type})` : ''}`),
          onSynced: () => void seen.push('synced'),
        })
        .subscribe(),
    );
    await eventually(() => expect(seen).toEqual(['add a/p1', 'synced']));
    set.next(['a', 'c']);
    await eventually(() => expect(seen.slice(2)).toEqual(['add c/p1 (added)']));
    set.next(['c']);
    await eventually(() => expect(seen.slice(3)).toEqual(['delete a/p1 (removed)']));
    // a's watch is gone: a pod created there now does not reach the cache, one in c does.
    server.store.create(pods, podIn('a', 'p2'));
    server.store.create(pods, podIn('c', 'p2'));
    await eventually(() => expect(seen.slice(4)).toEqual(['add c/p2']));
  });

  it('shows a namespace it may not read on health$ and stays unsynced; dropping that namespace syncs the cache', async () => {
    const set = new BehaviorSubject<readonly string[]>(['a', 'locked']);
    const shared = informer(server.kubeConfig, pods, { namespaces: set, backoff, logger: silentLogger });
    const health: InformerHealth[] = [];
    keep(shared.health$.subscribe((report) => health.push(report)));
    const synced: Snapshot<Pod>[] = [];
    keep(shared.informer$.subscribe());
    keep(shared.synced$.subscribe((snapshot) => synced.push(snapshot)));
    const failing = await eventually(() => {
      const report = health.find((candidate) => candidate.lastError !== undefined);
      expect(report).toBeDefined();
      return report!;
    });
    expect(failing.attempt).toBeGreaterThanOrEqual(1);
    expect(failing.lastError?.message).toMatch(/^pods@\[\.\.\.\]: 403 Forbidden on GET \/api\/v1\/namespaces\/locked\/pods/);
    expect(synced).toEqual([]);
    set.next(['a']);
    await eventually(() => expect(synced.map(keys)).toEqual([['a/p1']]));
    await eventually(() => expect(health.at(-1)?.phase).toBe('watching'));
  });

  it('refuses namespace with namespaces, and namespaces for a cluster-scoped resource, naming informers after the set', () => {
    expect(() => informer(server.kubeConfig, pods, { namespace: 'a', namespaces: ['b'] })).toThrow(new TypeError('informer: give `namespace` or `namespaces`, not both'));
    expect(() => informer(server.kubeConfig, nodes, { namespaces: ['a'] })).toThrow(new TypeError('informer: `namespaces` is for namespaced resources; nodes is cluster-scoped'));
    expect(() => informer(server.kubeConfig, pods, { namespaces: ['a', ''] })).toThrow(TypeError);
    expect(informer(server.kubeConfig, pods, { namespaces: ['b', 'a', 'b'], metadataOnly: true }).name).toBe('pods@[b,a] (metadata)');
    expect(informerName(configMaps, { namespaces: new Subject<readonly string[]>(), labelSelector: 'app=web' })).toBe('configmaps@[...]?app=web');
  });

  it('caches metadata only over a set of namespaces', async () => {
    const shared = informer(server.kubeConfig, pods, { namespaces: ['b', 'c'], metadataOnly: true, backoff, logger: silentLogger });
    const [synced] = await waitForSync([shared], { timeout: 10_000 });
    expect(keys(synced)).toEqual(['b/p1', 'c/p1']);
    expect(synced.get('b/p1')?.kind).toBe('PartialObjectMetadata');
  });

  it('is shared by the factory: the same set gives the same informer, a namespace or another set another', async () => {
    const factory = informerFactory(server.kubeConfig, { backoff, logger: silentLogger });
    const ab = factory.informerFor(pods, { namespaces: ['a', 'b'] });
    expect(factory.informerFor(pods, { namespaces: ['b', 'a', 'a'] })).toBe(ab);
    expect(factory.informerFor(pods, { namespace: 'a' })).not.toBe(ab);
    expect(factory.informerFor(pods, { namespaces: ['a'] })).not.toBe(ab);
    const set = new BehaviorSubject<readonly string[]>(['c']);
    const dynamic = factory.informerFor(pods, { namespaces: set });
    expect(factory.informerFor(pods, { namespaces: set })).toBe(dynamic);
    expect(ab.name).toBe('pods@[a,b]');
    factory.start();
    const synced = await factory.waitForSync({ timeout: 10_000 });
    expect(keys(synced.get('pods@[a,b]'))).toEqual(['a/p1', 'b/p1']);
    expect(keys(synced.get('pods@[...]'))).toEqual(['c/p1']);
    await factory.shutdown();
  });

  it('refuses namespace with namespaces in the factory, and a set that is not of names', () => {
    expect(() => informerFactory(server.kubeConfig, { namespace: 'a', namespaces: ['b'] })).toThrow(new TypeError('informerFactory: give `namespace` or `namespaces`, not both'));
    const factory = informerFactory(server.kubeConfig);
    expect(() => factory.informerFor(pods, { namespace: 'a', namespaces: ['b'] })).toThrow(new TypeError('informerFor: give `namespace` or `namespaces`, not both'));
    expect(() => factory.informerFor(pods, { namespaces: ['a', ''] })).toThrow(new TypeError('namespaces must be non-empty namespace names, got ""'));
  });

  it('takes the factory-wide namespaces, which one informerFor may override', async () => {
    const factory = informerFactory(server.kubeConfig, { backoff, namespaces: ['a', 'c'], logger: silentLogger });
    const everyPod = factory.informerFor(pods);
    const oneNamespace = factory.informerFor(configMaps, { namespace: 'b' });
    const clusterWide = factory.informerFor(nodes);
    expect([everyPod.name, oneNamespace.name, clusterWide.name]).toEqual(['pods@[a,c]', 'configmaps@b', 'nodes']);
    factory.start();
    const synced = await factory.waitForSync({ timeout: 10_000 });
    expect(keys(synced.get('pods@[a,c]'))).toEqual(['a/p1', 'c/p1']);
    await factory.shutdown();
  });
});
