/*
 * A CommonJS consumer under `module: node16`, which models a Node that cannot require() an ES
 * module: it cannot import @kubernetes/client-node itself (TS1479, client-node being an ES
 * module), but rx-informer's declarations, which import client-node for types only, must still
 * type-check there (skipLibCheck false). Type-checked only, by compat/run.sh.
 */
import { firstValueFrom } from 'rxjs';
import { deployments, informerFactory, pods, type Deployment, type Informer, type Pod, type Snapshot } from 'rx-informer';
import { startApiServer } from 'rx-informer-apiserver';
import { registerInformerMetrics } from 'rx-informer/prometheus';
import { Registry } from 'prom-client';

export async function readyContainers(): Promise<number> {
  const server = await startApiServer();
  const podInformer: Informer<Pod> = informerFactory(server.kubeConfig).informerFor(pods);
  registerInformerMetrics(new Registry(), podInformer);
  const snapshot: Snapshot<Pod> = await firstValueFrom(podInformer.synced$);
  const ready = snapshot.list().flatMap((pod) => pod.status?.containerStatuses?.filter((status) => status.ready) ?? []).length;
  const replicas = (deployment: Deployment): number => deployment.spec?.replicas ?? 1;
  await server.close();
  return ready + replicas({ metadata: { name: deployments.plural } });
}
