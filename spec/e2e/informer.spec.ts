import { firstValueFrom, ReplaySubject, type Subscription } from 'rxjs';
import { informer, type Informer } from '../../lib/informer/informer';
import { changedAt } from '../../lib/operators/changedAt';
import type { ResourceHandlers } from '../../lib/handlers/resourceHandlers';
import { defineResource } from '../../lib/resources/resource';
import { configMaps, pods, type Pod } from '../../lib/resources/builtins';
import type { InformerHealth } from '../../lib/reflector/health';
import type { KubeObject } from '../../lib/base/object';
import { NetworkError, ResourceGoneError, StatusError } from '../../lib/base/errors';
import { silentLogger } from '../../lib/base/logger';
import type { Snapshot } from '../../lib/store/snapshot';
import { startApiServer, type ApiServer } from '../../apiserver/src';
import { waitForSync } from '../../lib/informer/waitForSync';
import { describeEachServerVersion, isServedList } from '../support/serverVersions';
import { eventually, firstSatisfying } from '../support/eventually';

const backoff = { initialMs: 10, maxMs: 50 };
// The 403s, 404s, refusals and dropped watches these specs provoke are read from health$ and waitForSync, not from log lines.
const podNamed = (name: string): Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'default', name } });

/** Handler calls as short strings: `add a initial`, `update a 3→4`, `delete b unknown`, `synced`. */
function recorder(): { handlers: ResourceHandlers<Pod>; seen: string[] } {
  const seen: string[] = [];
  const record = (line: string): void => void seen.push(line);
  return {
    seen,
    handlers: {
      onAdd: (o, { isInInitialList }) => record(`add ${o.metadata.name}${isInInitialList ? ' initial' : ''}`),
      onUpdate: (old, o, { isResync }) => record(`update ${o.metadata.name} ${old.metadata.resourceVersion}→${o.metadata.resourceVersion}${isResync ? ' resync' : ''}`),
      onDelete: (o, { finalStateUnknown }) => record(`delete ${o.metadata.name}${finalStateUnknown ? ' unknown' : ''}`),
      onSynced: () => record('synced'),
    },
  };
}

describeEachServerVersion('informer against the loopback API server', (serverVersion) => {
  let server: ApiServer;
  const subscriptions: Subscription[] = [];
  const keep = (subscription: Subscription): Subscription => (subscriptions.push(subscription), subscription);
  const podInformer = (): Informer<Pod> => informer(server.kubeConfig, pods, { namespace: 'default', backoff, logger: silentLogger });

  beforeEach(async () => {
    server = await startApiServer({ serverVersion });
  });
  afterEach(async () => {
    subscriptions.splice(0).forEach((s) => s.unsubscribe());
    await server.close();
  });

  it('delivers the initial list as adds with isInInitialList, then updates with old and new objects, then deletes', async () => {
    server.store.create(pods, podNamed('a'));
    server.store.create(pods, podNamed('b'));
    const informerOfPods = podInformer();
    const { handlers, seen } = recorder();
    keep(informerOfPods.handle(handlers).subscribe());
    await eventually(() => expect(seen).toContain('synced'));
    expect(seen.slice(0, 2).sort()).toEqual(['add a initial', 'add b initial']);

    const before = server.store.get(pods, 'default', 'a')!;
    const after = server.store.update(pods, { ...before, metadata: { ...before.metadata, labels: { touched: 'yes' } } });
    await eventually(() => expect(seen).toContainEqual(expect.stringMatching(/^update a/)));
    expect(seen).toContain(`update a ${before.metadata.resourceVersion}→${after.metadata.resourceVersion}`);

    server.store.delete(pods, 'default', 'b');
    await eventually(() => expect(seen).toContain('delete b'));
  });

  it('after a relist, passes missed deletes with finalStateUnknown and no updates for unchanged objects', async () => {
    server.store.create(pods, podNamed('a'));
    server.store.create(pods, podNamed('b'));
    const { handlers, seen } = recorder();
    keep(podInformer().handle(handlers).subscribe());
    await eventually(() => expect(seen).toContain('synced'));

    const restarting = server.restart(); // drops the watch at once
    server.store.delete(pods, 'default', 'b');
    server.store.compact(); // the informer's resourceVersion is now too old: 410, relist
    await restarting;
    await eventually(() => expect(seen).toContainEqual(expect.stringMatching(/^delete b/)));
    expect(seen.slice(3)).toEqual(['delete b unknown']);
    expect(server.requests.entries.filter(isServedList).length).toBeGreaterThan(1);
  });

  it('gives a handler added after sync the current cache as adds, then live changes', async () => {
    server.store.create(pods, podNamed('a'));
    const informerOfPods = podInformer();
    keep(informerOfPods.informer$.subscribe());
    await waitForSync([informerOfPods], { timeout: 5000 });
    const { handlers, seen } = recorder();
    keep(informerOfPods.handle(handlers).subscribe());
    await eventually(() => expect(seen).toContain('synced'));
    server.store.create(pods, podNamed('c'));
    await eventually(() => expect(seen).toContainEqual(expect.stringMatching(/^add c/)));
    expect(seen).toEqual(['add a initial', 'synced', 'add c']);
    expect(server.requests.entries.filter(isServedList)).toHaveLength(1);
  });

  it('never lets a slow handler delay the cache or another handler', async () => {
    const informerOfPods = podInformer();
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = new ReplaySubject<string>();
    const slowSeen: string[] = [];
    keep(informerOfPods.handle({ onAdd: (o) => (slowSeen.push(o.metadata.name), slow.next(o.metadata.name), gate) }).subscribe());
    const fast = recorder();
    keep(informerOfPods.handle(fast.handlers).subscribe());
    const snapshots = new ReplaySubject<Snapshot<Pod>>(1);
    keep(informerOfPods.informer$.subscribe(snapshots));
    await waitForSync([informerOfPods], { timeout: 5000 });

    for (const name of ['p1', 'p2', 'p3']) server.store.create(pods, podNamed(name));
    await eventually(() => expect(fast.seen).toContain('add p3'));
    await firstSatisfying(snapshots, (snapshot) => expect(snapshot.size).toBe(3));
    expect(slowSeen).toEqual(['p1']);

    release();
    await firstSatisfying(slow, (name) => expect(name).toBe('p3'));
    expect(slowSeen).toEqual(['p1', 'p2', 'p3']);
  });

  it('shows a resource the server does not serve (a CRD may come) as a ResourceGoneError from the first 404, naming the informer and the request, and retries it at resourceGoneBackoff', async () => {
    const gadgets = defineResource({ group: 'example.com', version: 'v1', plural: 'gadgets', kind: 'Gadget', namespaced: true });
    const gadgetInformer = informer(server.kubeConfig, gadgets, { backoff, resourceGoneBackoff: { initialMs: 20, maxMs: 40 }, logger: silentLogger });
    const healths: InformerHealth[] = [];
    keep(gadgetInformer.health$.subscribe((health) => healths.push(health)));
    const failure = await waitForSync([gadgetInformer], { timeout: 300 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ResourceGoneError);
    expect((failure as ResourceGoneError).message).toBe('gadgets.example.com: the resource is not served (404 NotFound on GET /apis/example.com/v1/gadgets: the server could not find the requested resource)');
    expect(((failure as ResourceGoneError).cause as StatusError).code).toBe(404);
    const firstFailure = healths.find((health) => health.lastError !== undefined);
    // A 404 on the streaming list is no reason to list in pages: it backs off at once, streaming still.
    expect(firstFailure).toMatchObject({ phase: 'backingOff', attempt: 1 });
    expect(firstFailure?.lastError?.message).toBe((failure as ResourceGoneError).message);
    expect(server.requests.entries.filter((r) => r.path === '/apis/example.com/v1/gadgets').length).toBeGreaterThan(1);
  });

  it('retries a 403 (RBAC may be granted), naming the informer and the request', async () => {
    await server.close();
    server = await startApiServer({ serverVersion, deny: [{ resource: 'pods' }] });
    const failure = await waitForSync([podInformer()], { timeout: 300 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(StatusError);
    expect((failure as StatusError).message).toMatch(/^pods@default: 403 Forbidden on GET \/api\/v1\/namespaces\/default\/pods: /);
    expect(server.requests.entries.filter((r) => r.resource === 'pods').length).toBeGreaterThan(1);
  });

  it('rejects waitForSync at once with the 400 of a field selector the server does not support, long before its timeout', async () => {
    const started = Date.now();
    const failure = await waitForSync([informer(server.kubeConfig, pods, { fieldSelector: 'spec.color=red', backoff, logger: silentLogger })], { timeout: 60_000 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(StatusError);
    expect((failure as StatusError).message).toBe('pods?spec.color=red: 400 BadRequest on GET /api/v1/pods: field label not supported: spec.color');
    // Generous for a loaded machine; the timeout it did not wait for is 60 s.
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('goes on past a ConfigMap its transform throws on: a bare subscribe() survives, the others are cached, health$ counts it', async () => {
    type Data = KubeObject & { data?: Record<string, string> };
    const withData = (name: string): Data => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'default', name }, data: { key: 'value' } });
    server.store.create(configMaps, withData('a'));
    server.store.create(configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'default', name: 'empty' } });
    // The transform a user writes first: it assumes every ConfigMap has data.
    const dataKeys = (cm: Data): Data => ({ ...cm, data: Object.fromEntries(Object.keys(cm.data!).map((key) => [key, ''])) });
    const configMapInformer = informer(server.kubeConfig, configMaps, { namespace: 'default', backoff, logger: silentLogger, transform: dataKeys as (cm: KubeObject) => KubeObject });
    keep(configMapInformer.informer$.subscribe()); // as the README shows: no error handler
    keep(configMapInformer.handle({}).subscribe());
    const [snapshot] = await waitForSync([configMapInformer], { timeout: 5000 });
    expect([...snapshot.keys()]).toEqual(['default/a']);
    server.store.create(configMaps, withData('b'));
    await firstSatisfying(configMapInformer.informer$, (s) => expect([...s.keys()]).toContain('default/b'));
    const health = await firstValueFrom(configMapInformer.health$);
    expect(health).toMatchObject({ phase: 'watching', rejectedObjects: 1 });
    expect(health.lastRejection?.message).toMatch(/^configmaps@default: cannot cache default\/empty: the transform failed: TypeError: /);
  });

  it('keeps the cache that waitForSync listed for the subscription that comes right after it', async () => {
    server.store.create(pods, podNamed('a'));
    const informerOfPods = podInformer();
    const [synced] = await waitForSync([informerOfPods], { timeout: 5000 });
    const replayed = await firstSatisfying(informerOfPods.informer$, () => undefined);
    expect(replayed).toBe(synced);
    expect(server.requests.entries.filter(isServedList)).toHaveLength(1);
  });

  it('rejects waitForSync with a NetworkError when the server is unreachable', async () => {
    const kubeConfig = server.kubeConfig;
    await server.close();
    const failure = await waitForSync([informer(kubeConfig, pods, { backoff, logger: silentLogger })], { timeout: 300 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(NetworkError);
    expect((failure as NetworkError).code).toBe('ECONNREFUSED');
    server = await startApiServer({ serverVersion });
  });

  it('stops the watch when the last subscriber leaves and starts fresh on the next', async () => {
    server.store.create(pods, podNamed('a'));
    const informerOfPods = podInformer();
    const first = informerOfPods.informer$.subscribe();
    await waitForSync([informerOfPods], { timeout: 5000 });
    first.unsubscribe();
    await firstSatisfying(informerOfPods.health$, (h) => expect(h.phase).toBe('idle'));
    server.store.create(pods, podNamed('b'));
    const [snapshot] = await waitForSync([informerOfPods], { timeout: 5000 });
    expect(snapshot.size).toBe(2);
    expect(server.requests.entries.filter(isServedList)).toHaveLength(2);
  });

  it('flattens the changes of the cache on changes$', async () => {
    server.store.create(pods, podNamed('a'));
    const informerOfPods = podInformer();
    const changes = new ReplaySubject<string>();
    keep(informerOfPods.changes$.subscribe((change) => changes.next(`${change.type} ${change.key}`)));
    await firstSatisfying(changes, (c) => expect(c).toBe('add default/a'));
    server.store.delete(pods, 'default', 'a');
    await firstSatisfying(changes, (c) => expect(c).toBe('delete default/a'));
  });

  it('shares what an update left unchanged with the cached version, so changedAt filters by identity', async () => {
    const withSpec: Pod = { ...podNamed('a'), spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'nginx' }] }, status: { phase: 'Pending' } };
    server.store.create(pods, withSpec);
    const informerOfPods = podInformer();
    const updates = new ReplaySubject<{ oldObject: Pod; object: Pod }>();
    const statusChanges = new ReplaySubject<string>();
    keep(informerOfPods.changes$.subscribe((change) => change.type === 'update' && updates.next(change)));
    keep(informerOfPods.changes$.pipe(changedAt((pod) => pod.status)).subscribe((change) => statusChanges.next(`${change.type} ${change.object.metadata.resourceVersion}`)));
    await firstSatisfying(statusChanges, (line) => expect(line).toMatch(/^add /));

    const stored = server.store.get(pods, 'default', 'a')!;
    const labelled = server.store.update(pods, { ...stored, metadata: { ...stored.metadata, labels: { tier: 'web' } } });
    const running = server.store.update(pods, { ...labelled, status: { phase: 'Running' } });
    const last = await firstSatisfying(updates, (u) => expect(u.object.metadata.resourceVersion).toBe(running.metadata.resourceVersion));
    expect(last.object.spec).toBe(last.oldObject.spec);
    expect(last.object.metadata.labels).toBe(last.oldObject.metadata.labels);
    expect(last.object.status).not.toBe(last.oldObject.status);
    expect(last.object.status).toEqual({ phase: 'Running' });
    // The label-only update passed no status change; the status update did.
    const seen: string[] = [];
    keep(statusChanges.subscribe((line) => seen.push(line)));
    expect(seen).toEqual([`add ${stored.metadata.resourceVersion}`, `update ${running.metadata.resourceVersion}`]);
  });
});
