import { firstValueFrom, filter, type Subscription } from 'rxjs';
import { informerFactory, type InformerFactory } from '../../lib/factory/factory';
import { customResourceDefinitions, deployments, pods, type CustomResourceDefinition } from '../../lib/resources/builtins';
import { defineResource } from '../../lib/resources/resource';
import type { InformerHealth } from '../../lib/reflector/health';
import type { KubeObject } from '../../lib/base/object';
import type { Snapshot } from '../../lib/store/snapshot';
import { ResourceGoneError } from '../../lib/base/errors';
import { silentLogger } from '../../lib/base/logger';
import { startApiServer, type ApiServer } from '../../apiserver/src';
import type { ServerVersion } from '../../apiserver/src/serverVersion';
import { eventually } from '../support/eventually';

/**
 * Informers found through discovery, over HTTP against the loopback API server through its
 * KubeConfig: by kind and by kubectl-style name, for a built-in and for a CRD created at run time,
 * with aggregated discovery (1.27+) and without it (1.26); and an informer that follows its CRD:
 * deleted, it says resourceGone on health$ and retries slowly; created again, it serves the new
 * objects; and the factory tears it down.
 */

const backoff = { initialMs: 10, maxMs: 50 };
const resourceGoneBackoff = { initialMs: 100, maxMs: 400 };
const gizmos = defineResource({ group: 'example.org', version: 'v1', plural: 'gizmos', kind: 'Gizmo', namespaced: true });
const GIZMOS_PATH = '/apis/example.org/v1/gizmos';

function gizmoCrd(): CustomResourceDefinition {
  const anyObject = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'gizmos.example.org' },
    spec: { group: 'example.org', names: { plural: 'gizmos', kind: 'Gizmo', shortNames: ['gz'] }, scope: 'Namespaced', versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: anyObject } }] },
  };
}

const gizmo = (name: string): KubeObject => ({ apiVersion: 'example.org/v1', kind: 'Gizmo', metadata: { name, namespace: 'default' } });
const names = (snapshot: Snapshot<KubeObject>): string[] => snapshot.list().map((object) => object.metadata.name ?? '').sort();

async function installGizmos(server: ApiServer): Promise<void> {
  server.store.create(customResourceDefinitions, gizmoCrd());
  await eventually(() => expect(isEstablished(server)).toBe(true));
}

function isEstablished(server: ApiServer): boolean {
  const crd = server.store.get(customResourceDefinitions, undefined, 'gizmos.example.org');
  return (crd?.status?.conditions ?? []).some((condition) => condition.type === 'Established' && condition.status === 'True');
}

const discoveryPaths = (server: ApiServer): string[] =>
  server.requests.entries.filter((entry) => entry.verb === 'discovery').map((entry) => entry.path);

describe.each<ServerVersion>(['1.26', '1.33'])('informers found through discovery (Kubernetes %s)', (serverVersion) => {
  let server: ApiServer;
  let factory: InformerFactory;
  const subscriptions: Subscription[] = [];

  beforeEach(async () => {
    server = await startApiServer({ serverVersion });
    factory = informerFactory(server.kubeConfig, { backoff, logger: silentLogger, discoveryRefreshInterval: 0 });
  });
  afterEach(async () => {
    subscriptions.splice(0).forEach((subscription) => subscription.unsubscribe());
    await factory.shutdown();
    await server.close();
  });

  it('finds a built-in by kind and by short name, sharing the informer informerFor gives, with the discovery requests of the version', async () => {
    server.store.create(pods, { metadata: { name: 'p1', namespace: 'default' } });
    const byKind = await factory.informerForKind('apps/v1', 'Deployment');
    const byName = await factory.informerForName('po');
    expect(byKind).toBe(factory.informerFor(deployments));
    expect(byName).toBe(factory.informerFor(pods));
    factory.start();
    const synced = await factory.waitForSync({ timeout: 5_000 });
    expect(names(synced.get(byName.name)!)).toEqual(['p1']);
    // Aggregated discovery answers in two requests; without it, one more per group version.
    const paths = discoveryPaths(server);
    if (serverVersion === '1.26') expect(paths).toEqual(expect.arrayContaining(['/api', '/apis', '/api/v1', '/apis/apps/v1']));
    else expect(paths.sort()).toEqual(['/api', '/apis']);
  });

  it('finds a CRD created after the first look-up, by kind and by short name', async () => {
    await expect(factory.informerForName('gz')).rejects.toBeInstanceOf(ResourceGoneError);
    await installGizmos(server);
    server.store.create(gizmos, gizmo('g1'));
    const byName = await factory.informerForName('gz');
    expect(await factory.informerForKind('example.org/v1', 'Gizmo')).toBe(byName);
    factory.start();
    const synced = await factory.waitForSync({ timeout: 5_000 });
    expect(names(synced.get(byName.name)!)).toEqual(['g1']);
  });
});

describe('an informer that follows its CRD', () => {
  let server: ApiServer;
  let factory: InformerFactory;
  const subscriptions: Subscription[] = [];

  beforeEach(async () => {
    server = await startApiServer();
    factory = informerFactory(server.kubeConfig, { backoff, resourceGoneBackoff, logger: silentLogger });
  });
  afterEach(async () => {
    subscriptions.splice(0).forEach((subscription) => subscription.unsubscribe());
    await factory.shutdown();
    await server.close();
  });

  it('says resourceGone on health$ when its CRD is deleted, retries at resourceGoneBackoff rather than in a storm, and serves the new objects once the CRD is back', async () => {
    await installGizmos(server);
    server.store.create(gizmos, gizmo('old'));
    const gizmoInformer = await factory.informerForKind('example.org/v1', 'Gizmo');
    const healths: InformerHealth[] = [];
    const snapshots: Snapshot<KubeObject>[] = [];
    subscriptions.push(gizmoInformer.health$.subscribe((health) => healths.push(health)));
    subscriptions.push(gizmoInformer.informer$.subscribe((snapshot) => snapshots.push(snapshot)));
    factory.start();
    await factory.waitForSync({ timeout: 5_000 });

    const deletedAt = Date.now();
    server.store.delete(customResourceDefinitions, undefined, 'gizmos.example.org');
    // The CRD's cleanup deletes its objects (the watch shows each go), then its URLs answer 404.
    await eventually(() => expect(healths.at(-1)?.lastError).toBeInstanceOf(ResourceGoneError), { timeoutMs: 5_000 });
    expect(names(snapshots.at(-1)!)).toEqual([]);
    expect(healths.at(-1)?.lastError?.message).toMatch(/^gizmos\.example\.org: the resource is not served \(404 NotFound on GET \/apis\/example\.org\/v1\/gizmos/);

    // No storm: wait for four retries, then look at the 404s' spacing. Each retry waits at least
    // resourceGoneBackoff's 100 ms (doubling to 400 ms); the ordinary backoff would wait 10 ms.
    await eventually(() => expect(healths.filter((health) => health.phase === 'backingOff' && health.lastError instanceof ResourceGoneError).length).toBeGreaterThanOrEqual(4), { timeoutMs: 10_000 });
    const notFound = server.requests.entries.filter((entry) => entry.path === GIZMOS_PATH && entry.status === 404 && entry.time >= deletedAt).map((entry) => entry.time);
    const gaps = notFound.slice(1).map((time, index) => time - notFound[index]!);
    expect(notFound.length).toBeGreaterThanOrEqual(4);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(100 - 5);

    await installGizmos(server);
    server.store.create(gizmos, gizmo('new'));
    await eventually(() => expect(names(snapshots.at(-1)!)).toEqual(['new']), { timeoutMs: 5_000 });
    await eventually(() => expect(healths.at(-1)?.phase).toBe('watching'), { timeoutMs: 5_000 });
  });

  it('is torn down by the factory: its streams complete, it requests nothing more, and the next informerFor makes a new one', async () => {
    await installGizmos(server);
    const gizmoInformer = await factory.informerForName('gizmos.example.org');
    let completed = false;
    subscriptions.push(gizmoInformer.informer$.subscribe({ complete: () => (completed = true) }));
    factory.start();
    await factory.waitForSync({ timeout: 5_000 });
    server.store.delete(customResourceDefinitions, undefined, 'gizmos.example.org');
    await eventually(() => expect(server.requests.entries.some((entry) => entry.path === GIZMOS_PATH && entry.status === 404)).toBe(true), { timeoutMs: 5_000 });

    await factory.removeInformer(gizmoInformer);
    expect(completed).toBe(true);
    expect((await firstValueFrom(gizmoInformer.health$.pipe(filter((health) => health.phase === 'idle')))).phase).toBe('idle');
    const removedAt = Date.now();
    // A new informer of the CRD, created again, syncs; the removed one sent nothing meanwhile (it
    // would have retried its 404 within 200 ms).
    await installGizmos(server);
    const fresh = factory.informerFor(gizmos);
    expect(fresh).not.toBe(gizmoInformer);
    await factory.waitForSync({ timeout: 5_000 });
    expect(server.requests.entries.filter((entry) => entry.path === GIZMOS_PATH && entry.status === 404 && entry.time >= removedAt)).toEqual([]);
    expect(completed).toBe(true);
    await factory.removeInformer(fresh);
    // The other informers and waitForSync no longer count it.
    expect([...(await factory.waitForSync({ timeout: 1_000 })).keys()]).toEqual([]);
  });
});
