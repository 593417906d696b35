/*
 * A TypeScript consumer of the packed rx-informer, type-checked only (tsc --noEmit) by
 * compat/run.sh against the built .d.ts files, under `moduleResolution: node16` (the exports map)
 * and the classic `node10`: both must lead to the types of `rx-informer`, `rx-informer-apiserver` and
 * `rx-informer/prometheus`,
 * and those types must agree with the consumer's own @kubernetes/client-node (1.x or 2.x) and rxjs.
 * The `@ts-expect-error` lines prove the types are real: were a type to fall back to `any` (an
 * import the .d.ts cannot resolve), the expected error would vanish and tsc would fail.
 */
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { firstValueFrom, type Observable, type Subscription } from 'rxjs';
import {
  informer,
  informerFactory,
  NAMESPACE_INDEX,
  pods,
  StatusError,
  waitForSync,
  type HandlerEvent,
  type Informer,
  type Pod,
  type Snapshot,
} from 'rx-informer';
import { startApiServer, type ApiServer } from 'rx-informer-apiserver';
import { registerInformerMetrics, registerWorkqueueMetrics, type WorkqueueMetricsRecorder } from 'rx-informer/prometheus';

export async function typedUsage(): Promise<number> {
  const server: ApiServer = await startApiServer({ tls: true, token: 't' });
  // The loopback kubeconfig is the consumer's own KubeConfig type: it goes to client-node as is.
  const kubeConfig: KubeConfig = server.kubeConfig;
  // @ts-expect-error: server.kubeConfig is typed, not any.
  const notANumber: number = server.kubeConfig;
  const core: CoreV1Api = kubeConfig.makeApiClient(CoreV1Api);
  await core.listNamespacedPod({ namespace: 'default' });
  server.store.create(pods, { metadata: { namespace: 'default', name: 'web' } });

  const podInformer: Informer<Pod> = informer(kubeConfig, pods, { namespace: 'default' });
  // @ts-expect-error: informer() wants a KubeConfig.
  informer('not a kubeconfig', pods);
  const registry = new Registry();
  const recording: Subscription = registerInformerMetrics(registry, podInformer);
  const queueMetrics: WorkqueueMetricsRecorder = registerWorkqueueMetrics(registry, { name: 'pods' });
  // @ts-expect-error: a queue's metrics need its name.
  registerWorkqueueMetrics(registry, {});
  const running = podInformer.informer$.subscribe();
  running.add(recording);
  running.add(() => queueMetrics.unregister());
  const [snapshot] = await waitForSync([podInformer], { timeout: 10_000 });
  const typed: Snapshot<Pod> = snapshot;
  const images: (string | undefined)[] = typed.byIndex(NAMESPACE_INDEX, 'default').flatMap((pod) => pod.spec?.containers?.map((c) => c.image) ?? []);
  // @ts-expect-error: a snapshot is read-only.
  typed.size = 0;

  const events: Observable<HandlerEvent<Pod>> = podInformer.handle({ onAdd: (pod: Pod, info) => void [pod.metadata.name, info.isInInitialList] });
  await firstValueFrom(events);

  const factory = informerFactory(kubeConfig);
  factory.informerFor(pods);
  factory.shutdown();

  try {
    await waitForSync([informer(new KubeConfig(), pods)], { timeout: 1 });
  } catch (error) {
    if (error instanceof StatusError) return error.code;
  }
  running.unsubscribe();
  await server.close();
  return images.length + notANumber;
}
