import type { KubernetesObject, ListWatch, V1Pod, Watch } from '@kubernetes/client-node';
import { loadClientNode } from '../apiserver/src';
import { HandlerLedger } from './legality';
import { countError, type Subject, type SubjectFactory } from './subject';

/**
 * `@kubernetes/client-node`'s informer as a soak subject, for the differential run.
 *
 * Built exactly as `makeInformer(kubeConfig, '/api/v1/pods', listFn)` builds it (a `ListWatch`
 * over a `Watch`), except that each watch asks for the same short `timeoutSeconds` the
 * rx-informer subject asks for, so that faults armed for "the next watch" reach both.
 *
 * `restartAfterMs`: client-node's informer stops for good on any error but a 410; its README
 * restarts it from the `error` handler after 5 s. Undefined runs it as is.
 */
export function clientNodeSubject(restartAfterMs: number | undefined): SubjectFactory {
  return async (server, context) => {
    const k8s = loadClientNode();
    const kubeConfig = server.kubeConfig;
    const core = kubeConfig.makeApiClient(k8s.CoreV1Api);
    const watch = new k8s.Watch(kubeConfig);
    const shortWatch = {
      watch: (path: string, query: Record<string, unknown>, callback: Parameters<Watch['watch']>[2], done: Parameters<Watch['watch']>[3]) =>
        watch.watch(path, { ...query, timeoutSeconds: context.watchTimeoutSeconds }, callback, done),
    } as unknown as Watch;
    const informer: ListWatch<V1Pod> = new k8s.ListWatch<V1Pod>('/api/v1/pods', shortWatch, () => core.listPodForAllNamespaces(), false);
    const errors = new Map<string, number>();
    const ledger = new HandlerLedger('client-node handlers', context.relists);
    const seen = new Map<string, KubernetesObject>();
    const timers = new Set<ReturnType<typeof setTimeout>>();
    let events = 0;
    let alive = true;
    let stopped = false;

    const keyOf = (object: KubernetesObject): string => `${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;
    const plain = (object: KubernetesObject) => ({ metadata: { name: object.metadata?.name ?? '', namespace: object.metadata?.namespace, resourceVersion: object.metadata?.resourceVersion } });
    informer.on('add', (object) => {
      events++;
      seen.set(keyOf(object), object);
      ledger.observe({ type: 'add', key: keyOf(object), object: plain(object) });
    });
    informer.on('update', (object) => {
      events++;
      const before = seen.get(keyOf(object));
      seen.set(keyOf(object), object);
      ledger.observe({ type: 'update', key: keyOf(object), oldObject: plain(before ?? object), object: plain(object) });
    });
    informer.on('delete', (object) => {
      events++;
      seen.delete(keyOf(object));
      // client-node does not say whether a delete came from a watch event or a relist.
      ledger.observe({ type: 'delete', key: keyOf(object), object: plain(object), finalStateUnknown: false });
    });
    informer.on('error', (error: unknown) => {
      // client-node's stop() itself emits an AbortError: not a failure of the run.
      if (stopped) return;
      countError(errors, error);
      if (restartAfterMs === undefined) {
        alive = false;
        return;
      }
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (!stopped) informer.start().catch((failure: unknown) => countError(errors, failure));
      }, restartAfterMs);
      timers.add(timer);
    });

    let synced = false;
    informer.on('connect', () => undefined);
    const started = informer.start().then(() => (synced = true));
    await Promise.race([started, new Promise((_, reject) => setTimeout(() => reject(new Error('client-node informer did not sync in time')), context.syncTimeoutMs).unref())]);
    if (!synced) throw new Error('client-node informer did not sync');

    const subject: Subject = {
      name: restartAfterMs === undefined ? 'client-node' : `client-node (restart on error after ${restartAfterMs / 1000} s)`,
      cache: () => {
        const versions = new Map<string, string>();
        for (const object of informer.list()) versions.set(`${object.metadata?.namespace}/${object.metadata?.name}`, object.metadata?.resourceVersion ?? '');
        return versions;
      },
      ledgers: [ledger],
      get events() {
        return events;
      },
      errors,
      get alive() {
        return alive;
      },
      stop: () => {
        stopped = true;
        for (const timer of timers) clearTimeout(timer);
        informer.stop().catch(() => undefined);
      },
    };
    return subject;
  };
}
