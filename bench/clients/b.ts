/**
 * Variant b: rx-informer with its default options plus one label index (`app`; `team` for the
 * Applications), and one
 * `handle()` subscription per handler. Synced means every handler has processed the initial list
 * (the `'synced'` event), the moment client-node's `start()` also stands for. It lists with a
 * streaming list in the `streaming` scenario and with paged lists otherwise, whatever the default.
 */
import type { Subscription } from 'rxjs';
import { informer, type Informer } from '../../lib/informer/informer';
import { labelIndex, namespaceIndex, NAMESPACE_INDEX, type IndexFunc } from '../../lib/store/indexers';
import { dropManagedFields } from '../../lib/store/transforms';
import type { KubeObject } from '../../lib/base/object';
import { benchResourceOf, type ClientConfig } from '../protocol';
import { runClient, type ClientUnderTest, type UpdateHandler } from './harness';
import { loopbackKubeConfig } from './kubeConfig';

function rxInformer(config: ClientConfig, handlers: readonly UpdateHandler[]): ClientUnderTest {
  // The label index: pods carry `app`, the Applications `team`.
  const label = config.objects === 'application' ? 'team' : 'app';
  const indexers: Record<string, IndexFunc<KubeObject>> = { [NAMESPACE_INDEX]: namespaceIndex, [label]: labelIndex(label) };
  const options = {
    indexers,
    // BENCH_SHARE_UNCHANGED=0 measures b without structural sharing (before/after figures).
    shareUnchanged: process.env['BENCH_SHARE_UNCHANGED'] !== '0',
    streamingList: config.scenario === 'streaming',
    ...(config.listTimeoutMs === undefined ? {} : { listPageTimeoutMs: config.listTimeoutMs, initialEventsTimeoutMs: config.listTimeoutMs }),
  };
  const kubeConfig = loopbackKubeConfig(config.serverUrl);
  const resource = benchResourceOf(config.objects);
  const podInformer: Informer<KubeObject> = config.metadataOnly
    ? informer(kubeConfig, resource, { ...options, metadataOnly: true })
    : informer(kubeConfig, resource, { ...options, ...(config.dropManagedFields ? { transform: dropManagedFields } : {}) });
  const subscriptions: Subscription[] = [];
  return {
    async start() {
      // Subscribing to a handle() stream is what adds the handler; the informer starts with the first.
      const synced = handlers.map(
        (handler) =>
          new Promise<void>((resolve, reject) => {
            const subscription = podInformer.handle({ onUpdate: (_old, pod) => handler(pod) }).subscribe({
              next: (event) => (event.type === 'synced' ? resolve() : reject(event.error)),
              error: reject,
            });
            subscriptions.push(subscription);
          }),
      );
      await Promise.all(synced);
    },
    async stop() {
      for (const subscription of subscriptions) subscription.unsubscribe();
    },
  };
}

void runClient(rxInformer);
