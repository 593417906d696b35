import { silentLogger } from '../../lib/base/logger';
import { firstValueFrom, type Subscription } from 'rxjs';
import { informer } from '../../lib/informer/informer';
import { informerFactory } from '../../lib/factory/factory';
import { waitForSync } from '../../lib/informer/waitForSync';
import { list$ } from '../../lib/sources/list';
import { StatusError } from '../../lib/base/errors';
import { pods, type Pod } from '../../lib/resources/builtins';
import type { PartialObjectMetadata } from '../../lib/sources/partialObjectMetadata';
import type { Snapshot } from '../../lib/store/snapshot';
import { createChurn, makePod, NEWEST_SERVER_VERSION, OLDEST_SERVER_VERSION, seededRandom, startApiServer, type ApiServer, type ApiServerOptions } from '../../apiserver/src';
import { firstSatisfying } from '../support/eventually';

/**
 * Metadata-only informers over real HTTP against the loopback API server, through a real
 * KubeConfig: the oldest and newest server versions, a server that cannot convert (answers whole
 * objects to the plain-JSON fallback), and a refusal.
 */

const backoff = { initialMs: 10, maxMs: 50 };
const isListing = (r: { verb: string; query: Record<string, string | undefined> }): boolean => r.verb === 'list' || r.query['sendInitialEvents'] === 'true';

/** What the cache must hold for a stored pod: its metadata, managedFields left out. */
function expectedOf(pod: Pod): PartialObjectMetadata {
  const { managedFields: _dropped, ...metadata } = pod.metadata;
  return { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata };
}

const contents = (snapshot: Snapshot<PartialObjectMetadata>): PartialObjectMetadata[] =>
  [...snapshot.list()].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));

let server: ApiServer;
const subscriptions: Subscription[] = [];

async function serverWithPods(options: ApiServerOptions): Promise<Pod[]> {
  server = await startApiServer(options);
  const random = seededRandom(3);
  const created: Pod[] = [];
  for (let i = 0; i < 25; i++) created.push(server.store.create(pods, makePod(random, 'apps', `pod-${i}`)));
  return created.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
}

afterEach(async () => {
  subscriptions.splice(0).forEach((s) => s.unsubscribe());
  await server.close();
});

describe.each([
  [OLDEST_SERVER_VERSION, 'paged lists'],
  [NEWEST_SERVER_VERSION, 'a streaming list'],
] as const)('a metadata-only informer against API server %s (%s)', (serverVersion, _listing) => {
  it('syncs each pod as its metadata without managedFields, then follows updates and deletes', async () => {
    const created = await serverWithPods({ serverVersion });
    expect(created[0]!.metadata.managedFields?.length).toBeGreaterThan(0);
    const podMetadata = informer(server.kubeConfig, pods, { namespace: 'apps', metadataOnly: true, backoff, logger: silentLogger });
    expect(podMetadata.name).toBe('pods@apps (metadata)');
    subscriptions.push(podMetadata.informer$.subscribe());
    const [synced] = await waitForSync([podMetadata], { timeout: 10_000 });
    expect(contents(synced)).toEqual(created.map(expectedOf));
    const listedBy = server.requests.entries.filter(isListing).map((r) => r.verb);
    expect(listedBy).toEqual(serverVersion === NEWEST_SERVER_VERSION ? ['watch'] : ['watch', 'list']);

    const first = created[0]!;
    const updated = server.store.update(pods, { ...first, metadata: { ...first.metadata, labels: { ...first.metadata.labels, touched: 'yes' } } });
    server.store.delete(pods, 'apps', created[1]!.metadata.name);
    const after = await firstSatisfying(podMetadata.informer$, (s) => {
      expect(s.get(`apps/${created[1]!.metadata.name}`)).toBeUndefined();
      expect(s.get(`apps/${first.metadata.name}`)?.metadata.labels?.['touched']).toBe('yes');
    });
    expect(after.get(`apps/${first.metadata.name}`)).toEqual(expectedOf(updated));
    expect(after.size).toBe(created.length - 1);
  });

  it('holds the same cache as a whole-object informer reduced to metadata, under churn', async () => {
    server = await startApiServer({ serverVersion });
    const churn = createChurn(server.store, { seed: 5, namespaces: 2, pods: 30, createsPerSecond: 1, updatesPerSecond: 3, deletesPerSecond: 1 });
    churn.populate();
    const podMetadata = informer(server.kubeConfig, pods, { metadataOnly: true, backoff, logger: silentLogger });
    const whole = informer(server.kubeConfig, pods, { backoff, logger: silentLogger });
    subscriptions.push(podMetadata.informer$.subscribe(), whole.informer$.subscribe());
    await waitForSync([podMetadata, whole], { timeout: 10_000 });
    for (let i = 0; i < 60; i++) churn.step();
    expect(churn.stats.updates).toBeGreaterThan(0);
    const rv = server.store.resourceVersion;
    const [metadataAtRv, wholeAtRv] = await Promise.all([
      firstSatisfying(podMetadata.informer$, (s) => expect(s.resourceVersion).toBe(rv)),
      firstSatisfying(whole.informer$, (s) => expect(s.resourceVersion).toBe(rv)),
    ]);
    expect(contents(metadataAtRv)).toEqual([...wholeAtRv.list()].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name)).map(expectedOf));
  });
});

it('fills the same cache from a server that cannot convert and answers whole objects', async () => {
  const created = await serverWithPods({ serverVersion: NEWEST_SERVER_VERSION, partialObjectMetadata: false });
  const podMetadata = informer(server.kubeConfig, pods, { metadataOnly: true, backoff, logger: silentLogger });
  subscriptions.push(podMetadata.informer$.subscribe());
  const [synced] = await waitForSync([podMetadata], { timeout: 10_000 });
  expect(contents(synced)).toEqual(created.map(expectedOf));
});

it('keeps managedFields and drops the named annotations when asked to', async () => {
  const created = await serverWithPods({});
  const withAnnotation = server.store.update(pods, { ...created[0]!, metadata: { ...created[0]!.metadata, annotations: { big: 'x'.repeat(1000), small: 's' } } });
  const podMetadata = informer(server.kubeConfig, pods, { namespace: 'apps', metadataOnly: { keepManagedFields: true, dropAnnotations: ['big'] }, backoff });
  subscriptions.push(podMetadata.informer$.subscribe());
  const [synced] = await waitForSync([podMetadata], { timeout: 10_000 });
  const cached = synced.get(`apps/${withAnnotation.metadata.name}`)!;
  expect(cached.metadata.managedFields).toEqual(withAnnotation.metadata.managedFields);
  expect(cached.metadata.annotations).toEqual({ small: 's' });
});

it('shares one metadata-only informer per resource and scope in a factory, apart from the whole-object one', async () => {
  const created = await serverWithPods({});
  const factory = informerFactory(server.kubeConfig, { namespace: 'apps', backoff });
  const podMetadata = factory.informerFor(pods, { metadataOnly: true });
  expect(factory.informerFor(pods, { metadataOnly: true })).toBe(podMetadata);
  const whole = factory.informerFor(pods);
  expect(whole).not.toBe(podMetadata);
  factory.start();
  const synced = await factory.waitForSync({ timeout: 10_000 });
  expect([...synced.keys()].sort()).toEqual(['pods@apps', 'pods@apps (metadata)']);
  expect(contents(synced.get('pods@apps (metadata)') as Snapshot<PartialObjectMetadata>)).toEqual(created.map(expectedOf));
  expect(synced.get('pods@apps')!.get(`apps/${created[0]!.metadata.name}`)).toEqual(created[0]);
  await factory.shutdown();
});

describe('406 NotAcceptable', () => {
  it('is a StatusError with code 406 from the sources when no Accept clause is acceptable', async () => {
    server = await startApiServer({});
    const refusal = await firstValueFrom(list$(server.kubeConfig, pods, { accept: 'application/json;as=PartialObjectMetadataList;g=example.com;v=v1' })).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(StatusError);
    expect(refusal).toMatchObject({ code: 406, reason: 'NotAcceptable' });
    expect((refusal as StatusError).message).toContain('only the following media types are accepted');
  });

  it('shows on health$ and rejects waitForSync with it, while the informer keeps retrying', async () => {
    server = await startApiServer({});
    server.faults.inject({ kind: 'status', code: 406, reason: 'NotAcceptable', message: 'only the following media types are accepted: application/json' }, { resource: 'pods', times: 1000 });
    const podMetadata = informer(server.kubeConfig, pods, { metadataOnly: true, backoff, logger: silentLogger });
    subscriptions.push(podMetadata.informer$.subscribe());
    const failure = await waitForSync([podMetadata], { timeout: 500 }).catch((error: unknown) => error);
    expect(String(failure)).toContain('406');
    const health = await firstSatisfying(podMetadata.health$, (h) => expect(h.lastError).toBeDefined());
    expect(health.lastError).toBeInstanceOf(StatusError);
    expect(health.lastError).toMatchObject({ code: 406, reason: 'NotAcceptable' });
    server.faults.clear();
    await waitForSync([podMetadata], { timeout: 10_000 });
  });
});
