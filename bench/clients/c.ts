/**
 * Peer c: @kubernetes/client-node's makeInformer, used as its README shows (the list function is
 * the generated CoreV1Api call, which deserialises into model classes; for custom resources the
 * CustomObjectsApi call). client-node 2.x needs
 * Node ≥ 22.19 (undici 8).
 */
import { CoreV1Api, CustomObjectsApi, makeInformer, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import { resourcePath } from '../../lib/resources/resource';
import type { KubeObject } from '../../lib/base/object';
import { benchResourceOf, type ClientConfig } from '../protocol';
import { runClient, type ClientUnderTest, type UpdateHandler } from './harness';
import { loopbackKubeConfig } from './kubeConfig';

function clientNode(config: ClientConfig, handlers: readonly UpdateHandler[]): ClientUnderTest {
  const kubeConfig = loopbackKubeConfig(config.serverUrl);
  const resource = benchResourceOf(config.objects);
  // Custom resources list through CustomObjectsApi, which returns plain JSON objects.
  const list =
    resource.group === ''
      ? () => kubeConfig.makeApiClient(CoreV1Api).listPodForAllNamespaces() as Promise<KubernetesListObject<KubernetesObject>>
      : () => kubeConfig.makeApiClient(CustomObjectsApi).listClusterCustomObject({ group: resource.group, version: resource.version, plural: resource.plural }) as Promise<KubernetesListObject<KubernetesObject>>;
  const informer = makeInformer<KubernetesObject>(kubeConfig, resourcePath(resource), list);
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
