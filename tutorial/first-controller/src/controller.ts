import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { apiVersionOf, configMaps, deployments, dropManagedFields, informerFactory, type Deployment } from 'rx-informer';
import { controller, type ControllerRequest } from 'rx-informer/controller';
import { leaderElection, whileLeader } from 'rx-informer/leader-election';
import { registerWorkqueueMetrics } from 'rx-informer/prometheus';

/** For every Deployment of `namespace`, a ConfigMap `<name>-info` holding its replicas and image. */
export interface InfoControllerOptions {
  readonly namespace: string;
  /** This replica's name in the leader election. */
  readonly identity: string;
  /** The port of /metrics; 0 picks a free one. */
  readonly metricsPort?: number;
}

export const infoName = (deployment: string): string => `${deployment}-info`;

export function desiredData(deployment: Deployment): Record<string, string> {
  const image = deployment.spec?.template?.spec?.containers?.[0]?.image;
  return { replicas: String(deployment.spec?.replicas ?? 1), image: typeof image === 'string' ? image : '' };
}

/** One reconcile: make the Deployment's ConfigMap match it. Its deletion is the garbage collector's. */
async function reconcileInfo({ primary: deployment, snapshots, writes }: ControllerRequest<Deployment>): Promise<void> {
  if (deployment === undefined) return;
  const { name, namespace, uid } = deployment.metadata;
  const data = desiredData(deployment);
  const current = snapshots.of(configMaps).get(`${namespace}/${infoName(name)}`);
  if (current === undefined) {
    const ownerReferences = [{ apiVersion: apiVersionOf(deployments), kind: deployments.kind, name, uid: uid ?? '', controller: true }];
    await writes.create(configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: infoName(name), namespace, ownerReferences }, data });
  } else if (current.data?.replicas !== data.replicas || current.data?.image !== data.image) {
    // A JSON merge patch with the resourceVersion read: a change made meanwhile fails it (409) and the key is retried.
    await writes.patch(configMaps, current, { type: 'merge', patch: { metadata: { resourceVersion: current.metadata.resourceVersion }, data } });
  }
}

/** Starts the controller; resolves with its /metrics address and a `stop()` that resolves once everything is released. */
export async function startInfoController(kubeConfig: KubeConfig, options: InfoControllerOptions): Promise<{ metricsUrl: string; stop(): Promise<void> }> {
  const factory = informerFactory(kubeConfig, { namespace: options.namespace, transform: dropManagedFields });
  const infoController = controller({ factory, kubeConfig }, deployments).owns(configMaps);
  factory.start(); // every replica keeps its caches warm: a new leader starts at once

  const registry = new Registry();
  const queueMetrics = registerWorkqueueMetrics(registry, { name: 'deployments' });
  const metricsServer = createServer((_request, response) => {
    void registry.metrics().then((text) => response.writeHead(200, { 'content-type': registry.contentType }).end(text));
  });
  await new Promise<void>((resolve) => metricsServer.listen(options.metricsPort ?? 9090, '127.0.0.1', resolve));

  const shutdown = new AbortController();
  let stopped = (): void => undefined;
  const done = new Promise<void>((resolve) => (stopped = resolve));
  leaderElection(kubeConfig, { namespace: options.namespace, name: 'info-controller', identity: options.identity })
    .pipe(whileLeader(({ signal }) => infoController.run(reconcileInfo, { signal, metrics: queueMetrics }), { signal: shutdown.signal }))
    .subscribe({
      next: (event) => {
        if (event.type === 'work' && event.value.type === 'failed') console.error(`reconcile ${event.value.key} failed:`, event.value.error);
        if (event.type === 'stopped') stopped(); // every reconcile has settled; the Lease is released
      },
      error: (error: unknown) => {
        console.error('stopped on an error:', error);
        stopped();
      },
    });

  return {
    metricsUrl: `http://127.0.0.1:${(metricsServer.address() as AddressInfo).port}/metrics`,
    stop: async () => {
      shutdown.abort();
      await done;
      queueMetrics.unregister();
      await factory.shutdown();
      await new Promise((resolve) => metricsServer.close(resolve));
    },
  };
}
