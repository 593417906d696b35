import { firstValueFrom, filter, timeout } from 'rxjs';
import { configMaps, deployments, informer, leases, type Deployment, type KubeObject, type Resource } from 'rx-informer';
import { startApiServer, type ApiServer } from 'rx-informer-apiserver';
import { infoName, startInfoController } from './controller.js';

const NS = 'shop';
const web = (replicas: number): Deployment => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { namespace: NS, name: 'web' },
  spec: { replicas, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } } },
});

describe('the info controller', () => {
  let server: ApiServer;
  beforeEach(async () => {
    server = await startApiServer({ tls: true }); // HTTPS, as client-node talks to a cluster
  });
  afterEach(() => server.close());

  /** Resolves once the server's object `name` passes `test`, seen through an informer: no polling. */
  async function serverShows<T extends KubeObject>(resource: Resource<T>, name: string, test: (object: T | undefined) => boolean): Promise<void> {
    const watcher = informer(server.kubeConfig, resource, { namespace: NS });
    await firstValueFrom(watcher.informer$.pipe(filter((snapshot) => test(snapshot.get(`${NS}/${name}`))), timeout(10_000)));
  }

  it('keeps web-info in step with the Deployment, serves metrics, and releases the Lease on stop', async () => {
    const deployment = server.store.create(deployments, web(3));
    const running = await startInfoController(server.kubeConfig, { namespace: NS, identity: 'test', metricsPort: 0 });

    await serverShows(configMaps, infoName('web'), (info) => info?.data?.replicas === '3');
    const info = server.store.get(configMaps, NS, infoName('web'));
    expect(info?.data).toEqual({ replicas: '3', image: 'nginx:1.27' });
    expect(info?.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Deployment', name: 'web', uid: deployment.metadata.uid, controller: true });

    server.store.update(deployments, { ...web(5), metadata: server.store.get(deployments, NS, 'web')!.metadata });
    // Patched in as a merge patch: sent as a JSON Patch (client-node's default), the server refuses the body (400).
    await serverShows(configMaps, infoName('web'), (info) => info?.data?.replicas === '5');

    const metrics = await (await fetch(running.metricsUrl)).text();
    expect(metrics).toMatch(/workqueue_adds_total\{name="deployments"\} [1-9]/);

    expect(server.store.get(leases, NS, 'info-controller')?.spec?.holderIdentity).toBe('test');
    await running.stop();
    await serverShows(leases, 'info-controller', (lease) => lease?.spec?.holderIdentity === ''); // released: another replica takes over at once
  });
});
