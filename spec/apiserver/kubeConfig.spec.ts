import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { pods, type Pod } from '../../lib/resources/builtins';
import { loadClientNode } from '../../apiserver/src/kubeConfig';
import { startApiServer, type ApiServer } from '../../apiserver/src/server';

/** `server.kubeConfig` is ready for @kubernetes/client-node, over HTTP and over HTTPS with a token. */

let server: ApiServer;

beforeEach(async () => {
  server = await startApiServer();
});

afterEach(async () => {
  await server.close();
});

describe('kubeConfig', () => {
  const clientNode = loadClientNode();

  it('lets client-node list, create and watch through CoreV1Api and Watch', async () => {
    server.store.create(pods, { metadata: { name: 'a', namespace: 'ns' } });
    const core: CoreV1Api = server.kubeConfig.makeApiClient(clientNode.CoreV1Api);
    const list = await core.listNamespacedPod({ namespace: 'ns' });
    expect(list.items.map((p: V1Pod) => p.metadata?.name)).toEqual(['a']);
    await core.createNamespacedPod({ namespace: 'ns', body: { metadata: { name: 'b' } } });
    expect(server.store.get(pods, 'ns', 'b')).toBeDefined();
    expect(server.store.get(pods, 'ns', 'b')?.metadata).toMatchObject({ name: 'b', namespace: 'ns', uid: expect.any(String) });

    const seen: string[] = [];
    const watch = new clientNode.Watch(server.kubeConfig);
    let finished!: () => void;
    const done = new Promise<void>((resolve) => (finished = resolve));
    const controller = await watch.watch(
      '/api/v1/namespaces/ns/pods',
      { resourceVersion: list.metadata?.resourceVersion },
      (type: string, object: Pod) => {
        seen.push(`${type} ${object.metadata.name}`);
        if (seen.length === 2) finished();
      },
      () => undefined,
    );
    server.store.delete(pods, 'ns', 'a');
    await done;
    controller.abort();
    expect(seen).toEqual(['ADDED b', 'DELETED a']);
  });

  it('carries the CA over TLS and the bearer token when the server wants one', async () => {
    await server.close();
    server = await startApiServer({ tls: true, token: 'secret' });
    server.store.create(pods, { metadata: { name: 'a', namespace: 'ns' } });
    const core: CoreV1Api = server.kubeConfig.makeApiClient(clientNode.CoreV1Api);
    expect((await core.listPodForAllNamespaces()).items).toHaveLength(1);
    expect(server.kubeConfig.getCurrentUser()?.token).toBe('secret');
  });
});
