import { Observable, type SchedulerLike, type Subscriber, type Subscription } from 'rxjs';
import type { Resource } from 'rx-informer';
import type { ListerWatcher, ListOptions, ListPage, WatchEvent, WatchOptions } from 'rx-informer/pipeline';
import { NetworkError, StatusError } from 'rx-informer';
import type { KubeObject } from 'rx-informer';
import { parseLabelSelector } from 'rx-informer';
import { ClusterStoreImpl, type ClusterStore } from './clusterStore';
import { jsonOf, type StoredObject } from './history';
import { tooOldResourceVersion } from './status';
import type { Latency, LeaseFault } from './storeLeaseClient';

/**
 * A {@link ListerWatcher} over a loopback store, without HTTP, for informers in virtual time:
 * lists and watches take `latency` on a scheduler, watch events arrive in order, a watch from an
 * old resourceVersion replays the store's watch cache (410 when it is gone), and objects travel
 * through JSON as over HTTP. With `storeLeaseClient` on the same store, a distributed protocol
 * over Leases (leader election, a sharding ring) runs in a test with one clock per process.
 */

/** Options of {@link storeListerWatcher}. */
export interface StoreListerWatcherOptions {
  /** Where requests and events wait out their latency. Use the process's scheduler. */
  readonly scheduler: SchedulerLike;
  /** Only this namespace; default all. */
  readonly namespace?: string;
  /** Only objects whose labels match (`app=web`); default all. */
  readonly labelSelector?: string;
  /** A request's round trip (the store is read halfway), or its two legs; watch events take `back`. Default 0. */
  readonly latency?: Latency | (() => Latency);
  /**
   * A fault for a request (`'unreachable'` fails it after its latency, `'hang'` never answers,
   * `'lostResponse'` is treated as `'hang'`). Asked when a request is sent and before each watch
   * event is delivered: an open watch breaks (ECONNRESET) when it says `'unreachable'`.
   */
  readonly fault?: () => LeaseFault | undefined;
}

/**
 * A ListerWatcher of `resource` on `store` (from `createClusterStore()` or a loopback server's `store`).
 *
 * ## Example
 * ```ts
 * import { VirtualAction, VirtualTimeScheduler } from 'rxjs';
 * import { leases } from 'rx-informer';
 * import { informerFrom } from 'rx-informer/pipeline';
 * import { createClusterStore, storeListerWatcher } from 'rx-informer-apiserver';
 *
 * const time = new VirtualTimeScheduler(VirtualAction, 60_000);
 * const store = createClusterStore();
 * const ring = informerFrom(storeListerWatcher(store, leases, { scheduler: time, latency: 20, labelSelector: 'rx-informer.io/ring=demo' }), { scheduler: time });
 * ring.informer$.subscribe((snapshot) => console.log(snapshot.size, 'members'));
 * time.flush();
 * ```
 *
 * @throws TypeError when `store` is not a store this package made.
 */
export function storeListerWatcher<T extends KubeObject>(store: ClusterStore, resource: Resource<T>, options: StoreListerWatcherOptions): ListerWatcher<T> {
  if (!(store instanceof ClusterStoreImpl)) throw new TypeError('storeListerWatcher needs a store from createClusterStore() or a loopback server');
  const { scheduler, namespace, fault } = options;
  const labels = parseLabelSelector(options.labelSelector ?? '');
  const legs = (): { readonly there: number; readonly back: number } => {
    const value = typeof options.latency === 'function' ? options.latency() : (options.latency ?? 0);
    return typeof value === 'number' ? { there: Math.max(0, value) / 2, back: Math.max(0, value) / 2 } : { there: Math.max(0, value.there), back: Math.max(0, value.back) };
  };
  const inScope = (entry: StoredObject | undefined): boolean =>
    entry !== undefined && (!resource.namespaced || namespace === undefined || entry.object.metadata.namespace === namespace) && labels.matches(entry.object.metadata.labels);
  const copy = (entry: StoredObject): T => JSON.parse(jsonOf(entry)) as T;
  const unreachable = (what: string) => new NetworkError(`${what} ${resource.plural} failed: connect ECONNREFUSED`, 'ECONNREFUSED');

  /** Runs `serve` once the request has arrived, unless the network fails it first. */
  const request = <V>(what: string, serve: (subscriber: Subscriber<V>, back: number) => (() => void) | void) =>
    new Observable<V>((subscriber) => {
      const failure = fault?.();
      if (failure === 'hang' || failure === 'lostResponse') return undefined;
      const { there, back } = legs();
      let teardown: (() => void) | void;
      let answer: Subscription | undefined;
      const arrive = scheduler.schedule(() => {
        if (failure === 'unreachable') answer = scheduler.schedule(() => subscriber.error(unreachable(what)), back);
        else teardown = serve(subscriber, back);
      }, there);
      return () => {
        arrive.unsubscribe();
        answer?.unsubscribe();
        teardown?.();
      };
    });

  return {
    list: (_options: ListOptions) =>
      request<ListPage<T>>('list', (subscriber, back) => {
        const items = store.objectsAt(resource, store.currentRv)!.filter(inScope).map(copy);
        const page: ListPage<T> = { items, resourceVersion: store.resourceVersion, last: true, remainingItemCount: undefined };
        const answer = scheduler.schedule(() => {
          subscriber.next(page);
          subscriber.complete();
        }, back);
        return () => answer.unsubscribe();
      }),
    watch: (watchOptions: WatchOptions) =>
      request<WatchEvent<T>>('watch', (subscriber, back) => {
        const deliveries = new Set<Subscription>();
        let lastDue = scheduler.now();
        const send = (event: WatchEvent<T>): void => {
          // In order: never before the event sent ahead of it.
          lastDue = Math.max(lastDue, scheduler.now() + back);
          const delivery = scheduler.schedule(() => {
            deliveries.delete(delivery);
            if (fault?.() === 'unreachable') subscriber.error(new NetworkError(`the watch on ${resource.plural} broke: read ECONNRESET`, 'ECONNRESET'));
            else subscriber.next(event);
          }, lastDue - scheduler.now());
          deliveries.add(delivery);
        };
        const deliver = (type: 'ADDED' | 'MODIFIED' | 'DELETED', object: StoredObject, prev: StoredObject | undefined, rv: number): void => {
          const wasIn = inScope(prev);
          if (type === 'DELETED') {
            if (wasIn) send({ type, object: copy(object) });
            return;
          }
          const isIn = inScope(object);
          if (isIn) send({ type: wasIn ? type : 'ADDED', object: copy(object) });
          // Left the selection: DELETED with the last state it had inside, at this resourceVersion.
          else if (wasIn) send({ type: 'DELETED', object: { ...copy(prev!), metadata: { ...prev!.object.metadata, resourceVersion: String(rv) } } as T });
        };
        const from = watchOptions.resourceVersion;
        let skipUpTo = store.currentRv;
        if (from === undefined || from === '' || from === '0') {
          for (const entry of store.objectsAt(resource, store.currentRv)!) if (inScope(entry)) send({ type: 'ADDED', object: copy(entry) });
        } else {
          const rv = Number(from);
          const replay = store.watchCacheSince(resource, rv);
          if (replay === undefined) {
            const gone = new StatusError(tooOldResourceVersion(rv, store.watchCacheOldestRv(resource)));
            const answer = scheduler.schedule(() => subscriber.error(gone), back);
            return () => answer.unsubscribe();
          }
          for (const event of replay) deliver(event.type, event.object, event.prev, event.rv);
          skipUpTo = Math.max(rv, store.currentRv);
        }
        const unsubscribe = store.subscribe(resource, (event) => {
          if (event.rv > skipUpTo) deliver(event.type, event.object, event.prev, event.rv);
        });
        return () => {
          unsubscribe();
          for (const delivery of deliveries) delivery.unsubscribe();
        };
      }),
  };
}
