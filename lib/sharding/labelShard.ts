import type { KubeConfig } from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { catchError, EMPTY, map, Observable, type OperatorFunction } from 'rxjs';
import type { Logger } from '../base/logger';
import type { Resource } from '../resources/resource';
import { resourcePath } from '../resources/resource';
import { statusErrorFromResponse } from '../sources/statusError';
import type { ListerWatcher, ListOptions, ListPage, WatchEvent, WatchOptions } from '../sources/listerWatcher';
import { kubeRequest, readBody } from '../sources/transport';
import type { KubeObject } from '../base/object';

/**
 * `label` mode: a ring run by timebertt/kubernetes-controller-sharding's sharder, which assigns
 * each object to a shard with the label `shard.alpha.sharding.timebertt.dev/<ring>: <shard>` and
 * moves an object off a live shard by first adding `drain.alpha.sharding.timebertt.dev/<ring>`.
 * The shard acknowledges a drain by removing both labels (a merge patch with the resourceVersion
 * it saw, so that it never clears a newer assignment) and stops working on the object; the sharder
 * then assigns the new shard. Membership is the shard's own Lease (name = identity, label
 * `alpha.sharding.timebertt.dev/controllerring: <ring>`), held with leader election
 * (`pkg/controller/sharder/reconciler.go`, `docs/implement-sharding.md` of that project).
 */

/** The sharder's label naming an object's shard. */
export function shardLabelOf(ring: string): string {
  return `shard.alpha.sharding.timebertt.dev/${ring}`;
}

/** The sharder's label asking the current shard to let an object go. */
export function drainLabelOf(ring: string): string {
  return `drain.alpha.sharding.timebertt.dev/${ring}`;
}

/** The label that puts a shard's Lease in a timebertt ring. */
export const CONTROLLER_RING_LABEL = 'alpha.sharding.timebertt.dev/controllerring';

/** Acknowledges a drain: removes the shard and drain labels of `object`, if it is still at its resourceVersion. */
export type DrainAcknowledger<T extends KubeObject> = (object: T) => Observable<unknown>;

/**
 * The drain acknowledgement over HTTP: a JSON merge patch of `metadata.labels` (both to null) with
 * `metadata.resourceVersion` as a precondition (409 when the object changed since).
 */
export function kubeDrainAcknowledger<T extends KubeObject>(kubeConfig: KubeConfig, resource: Resource<T>, ring: string): DrainAcknowledger<T> {
  return (object) =>
    new Observable<unknown>((subscriber) => {
      const controller = new AbortController();
      const path = resourcePath(resource, { namespace: object.metadata.namespace, name: object.metadata.name });
      const body = JSON.stringify({ metadata: { resourceVersion: object.metadata.resourceVersion, labels: { [shardLabelOf(ring)]: null, [drainLabelOf(ring)]: null } } });
      kubeRequest(kubeConfig, { method: 'PATCH', path, query: '', signal: controller.signal, body, headers: { 'Content-Type': 'application/merge-patch+json' } })
        .then(async (response) => {
          const code = response.statusCode ?? 0;
          const text = await readBody(response, path, 64 * 1024);
          if (code >= 400) throw statusErrorFromResponse(code, response.headers, text);
          subscriber.next(code);
          subscriber.complete();
        })
        .catch((error: unknown) => subscriber.error(error));
      return () => controller.abort();
    });
}

/**
 * `inner` (already selected on this shard's label) without the objects being drained: a listed
 * object with the drain label is left out, a watched one leaves as DELETED; each is acknowledged.
 */
export function drainingListerWatcher<T extends KubeObject>(inner: ListerWatcher<T>, ring: string, acknowledge: DrainAcknowledger<T>, logger: Logger): ListerWatcher<T> {
  const drain = drainLabelOf(ring);
  const draining = (object: T): boolean => object.metadata.labels?.[drain] !== undefined;
  const ack = (object: T): void => {
    acknowledge(object)
      .pipe(catchError((error: unknown) => (logger.warn({ ring, object: `${object.metadata.namespace ?? ''}/${object.metadata.name}`, error: error instanceof Error ? error.message : String(error) }, 'acknowledging a drain failed; the next event retries'), EMPTY)))
      .subscribe();
  };
  const watchDraining: OperatorFunction<WatchEvent<T>, WatchEvent<T>> = (events) =>
    events.pipe(
      map((event) => {
        if (event.type === 'BOOKMARK' || event.type === 'DELETED' || !draining(event.object)) return event;
        ack(event.object);
        return { type: 'DELETED', object: event.object } as const;
      }),
    );
  return {
    supportsStreamingList: inner.supportsStreamingList,
    list: (options: ListOptions): Observable<ListPage<T>> =>
      inner.list(options).pipe(
        map((page) => ({
          ...page,
          items: page.items.filter((object) => {
            if (!draining(object)) return true;
            ack(object);
            return false;
          }),
        })),
      ),
    // A drained object that was never in the cache arrives as DELETED: the indexer ignores unknown deletes.
    watch: (options: WatchOptions): Observable<WatchEvent<T>> => inner.watch(options).pipe(watchDraining),
  };
}
