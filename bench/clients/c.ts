/**
 * Peer c: @kubernetes/client-node's makeInformer, used as its README shows (the list function is
 * the generated CoreV1Api call, which deserialises into model classes). client-node 2.x needs
 * Node ≥ 22.19 (undici 8).
 */
import { CoreV1Api, makeInformer, type V1Pod } from '@kubernetes/client-node';
import type { KubeObject } from '../../lib/store/object';
import type { ClientConfig } from '../protocol';
import { runClient, type ClientUnderTest, type UpdateHandler } from './harness';
import { loopbackKubeConfig } from './kubeConfig';

function clientNode(config: ClientConfig, handlers: readonly UpdateHandler[]): ClientUnderTest {
  const kubeConfig = loopbackKubeConfig(config.serverUrl);
  const api = kubeConfig.makeApiClient(CoreV1Api);
  const informer = makeInformer<V1Pod>(kubeConfig, '/api/v1/pods', () => api.listPodForAllNamespaces());
  for (const handler of handlers) informer.on('update', (pod) => handler(pod as unknown as KubeObject));
  let failure: unknown;
  informer.on('error', (error) => {
    failure = error;
    process.stderr.write(`client-node informer error: ${String(error)}\n`);
  });
  return {
    async start() {
      await informer.start();
      if (failure !== undefined) throw failure instanceof Error ? failure : new Error(String(failure));
    },
    async stop() {
      await informer.stop();
    },
  };
}

void runClient(clientNode);
