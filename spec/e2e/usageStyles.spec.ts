import type { KubeConfig } from '@kubernetes/client-node';
import { ReplaySubject } from 'rxjs';
import { informerFactory } from '../../lib/factory/factory';
import type { HandlerEvent } from '../../lib/handlers/resourceHandlers';
import { informer } from '../../lib/informer/informer';
import { pods, type Pod } from '../../lib/resources/builtins';
import { startApiServer, type ApiServer } from '../../apiserver/src';
import { waitForSync } from '../../lib/informer/waitForSync';
import { describeEachServerVersion } from '../support/serverVersions';
import { firstSatisfying } from '../support/eventually';

/**
 * The seed's two ways to run informers (client-go: SharedInformerFactory, and a lone
 * SharedIndexInformer), written the way a user would write them with rx-informer.
 */
describeEachServerVersion('the two usage styles', (serverVersion) => {
  let server: ApiServer;
  let kubeConfig: KubeConfig;
  beforeEach(async () => {
    server = await startApiServer({ serverVersion });
    kubeConfig = server.kubeConfig;
    server.store.create(pods, { apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'default', name: 'web-1' } });
  });
  afterEach(async () => {
    await server.close();
  });

  it('factory → informer → start → wait for sync', async () => {
    const added: string[] = [];
    const handlerEvents = new ReplaySubject<HandlerEvent<Pod>>();

    const factory = informerFactory(kubeConfig, { resyncPeriod: 30_000 });
    const podInformer = factory.informerFor(pods);
    const handler = podInformer
      .handle({
        onAdd: (pod: Pod) => void added.push(pod.metadata.name),
        onUpdate: (_oldPod: Pod, _pod: Pod) => undefined,
        onDelete: (_pod: Pod) => undefined,
      })
      .subscribe(handlerEvents);
    factory.start();
    const synced = await factory.waitForSync({ timeout: 10_000 });

    expect(synced.get('pods')?.get('default/web-1')?.metadata.name).toBe('web-1');
    await firstSatisfying(handlerEvents, (event) => expect(event.type).toBe('synced'));
    expect(added).toEqual(['web-1']);
    handler.unsubscribe();
    await factory.shutdown();
  });

  it('one informer → run → wait for sync', async () => {
    const podInformer = informer(kubeConfig, pods, { namespace: 'default' });
    const running = podInformer.informer$.subscribe();
    const [snapshot] = await waitForSync([podInformer], { timeout: 10_000 });

    expect(snapshot.list({ namespace: 'default' }).map((pod) => pod.metadata.name)).toEqual(['web-1']);
    running.unsubscribe();
  });
});
