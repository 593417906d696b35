import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiException, CoreV1Api, PatchStrategy, setHeaderOptions, type KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
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
async function reconcileInfo(core: CoreV1Api, { primary: deployment, snapshots, writes }: ControllerRequest<Deployment>): Promise<void> {
  if (deployment === undefined) return;
  const { name, namespace = '', uid = '' } = deployment.metadata;
  const data = desiredData(deployment);
  const current = snapshots.of(configMaps).get(`${namespace}/${infoName(name)}`);
  let answer: V1ConfigMap;
  if (current === undefined) {
    const ownerReferences = [{ apiVersion: apiVersionOf(deployments), kind: deployments.kind, name, uid, controller: true }];
    answer = await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: infoName(name), namespace, ownerReferences }, data } });
  } else if (current.data?.replicas !== data.replicas || current.data?.image !== data.image) {
    // A JSON merge patch with the resourceVersion read: a change made meanwhile fails it (409) and the key is retried.
    // The header says so: client-node sends a patch as a JSON Patch otherwise, which this body is not (400).
    const body = { metadata: { resourceVersion: current.metadata.resourceVersion }, data };
    answer = await core.patchNamespacedConfigMap({ namespace, name: infoName(name), body }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  } else {
    return;
  }
  // What was written, and at which resourceVersion: the next reconcile of this key waits until the cache shows it.
  writes.wrote(configMaps, { metadata: { namespace, name: infoName(name), resourceVersion: answer.metadata?.resourceVersion } });
}

/** One line for a failed reconcile; client-node's ApiException message spans lines (code, body, headers). */
const reason = (error: unknown): string => (error instanceof ApiException ? `HTTP ${error.code}` : String(error));

/** Starts the controller; resolves with its /metrics address and a `stop()` that resolves once everything is released. */
export async function startInfoController(kubeConfig: KubeConfig, options: InfoControllerOptions): Promise<{ metricsUrl: string; stop(): Promise<void> }> {
  const factory = informerFactory(kubeConfig, { namespace: options.namespace, transform: dropManagedFields });
  const infoController = controller({ factory, kubeConfig }, deployments).owns(configMaps);
  const core = kubeConfig.makeApiClient(CoreV1Api);
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
    .pipe(whileLeader(({ signal }) => infoController.run((request) => reconcileInfo(core, request), { signal, metrics: queueMetrics }), { signal: shutdown.signal }))
    .subscribe({
      next: (event) => {
        // A rejected reconcile is retried with backoff, on the cache as it is then: a 409 (the ConfigMap made or changed meanwhile) too.
        if (event.type === 'work' && event.value.type === 'failed') console.error(`retrying ${event.value.key} in ${event.value.retryIn} ms: ${reason(event.value.error)}`);
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
