import { from, isObservable, mergeMap, Observable, of, reduce } from 'rxjs';
import type { KubeObject } from '../base/object';
import { requeueDelayOf, type ReconcileOutcome } from '../workqueue/reconcileResult';
import type { ControllerReconciler, ControllerRequest } from './controllerRequest';

/** A controller request whose primary exists: what `apply` and `cleanup` are handed. */
export interface FinalizerRequest<T extends KubeObject = KubeObject> extends ControllerRequest<T> {
  readonly primary: T;
}

/** What a handler of {@link finalizer} may return: as a reconciler does. */
export type FinalizerOutcome = ReconcileOutcome | PromiseLike<ReconcileOutcome> | Observable<ReconcileOutcome>;

/** The two halves of a reconcile under a finalizer. */
export interface FinalizerHandlers<T extends KubeObject = KubeObject> {
  /** Makes the world match the primary, which is not being deleted and carries the finalizer. */
  apply(request: FinalizerRequest<T>): FinalizerOutcome;
  /**
   * Releases what the primary held outside the cluster (or anything its deletion must not
   * leave behind); it is being deleted and still carries the finalizer. Must be idempotent: it
   * runs again after a failure, and after a crash between its end and the finalizer's removal.
   * Resolving with nothing lets the finalizer go; `requeueAfter(ms)` keeps it and runs cleanup
   * again then; a throw keeps it and retries with backoff.
   */
  cleanup(request: FinalizerRequest<T>): FinalizerOutcome;
}

/**
 * A reconciler that guards its primary with a finalizer, so that its deletion waits for your
 * cleanup: kube-runtime's `finalizer()`, Pepr's `Reconcile(...).Finalize(...)`.
 *
 * 1. **Not being deleted, no finalizer:** adds it (a JSON merge patch carrying the
 *    resourceVersion it read, so a write made meanwhile fails it with 409 Conflict and the key is
 *    retried on the newer version), then calls `apply` with the object the server answered, which
 *    carries it: the finalizer is there before the first apply changes anything.
 * 2. **Not being deleted, finalizer there:** calls `apply`.
 * 3. **Being deleted (`deletionTimestamp` set), finalizer there:** calls `cleanup`; once it has
 *    succeeded, removes the finalizer (again a merge patch with the resourceVersion), which lets
 *    the API server delete the object when no other finalizer holds it. Until then the object
 *    stays. A cleanup that fails is retried with the work queue's backoff; one that asks to come
 *    back (`requeueAfter`) is run again then; the finalizer stays meanwhile.
 * 4. **Being deleted without the finalizer, or gone:** nothing. Read after write: the reconcile
 *    after a finalizer's removal waits for the cache to show it, so it never sees the object as it
 *    was and cleans up twice.
 *
 * Other finalizers on the object are left as they are. The writes go through `request.writes`.
 *
 * ## Example
 * ```ts
 * import { configMaps, type KubeObject, type Resource } from 'rx-informer';
 * import { controller, finalizer, type ControllerSources } from 'rx-informer/controller';
 *
 * interface Bucket extends KubeObject {
 *   readonly spec?: { readonly region?: string };
 * }
 * declare const sources: ControllerSources;
 * declare const buckets: Resource<Bucket>;
 * declare function ensureBucket(bucket: Bucket, signal: AbortSignal): Promise<void>;
 * declare function deleteBucket(bucket: Bucket, signal: AbortSignal): Promise<void>;
 *
 * controller(sources, buckets)
 *   .owns(configMaps)
 *   .run(
 *     finalizer<Bucket>('example.com/bucket', {
 *       apply: ({ primary, signal }) => ensureBucket(primary, signal),
 *       cleanup: ({ primary, signal }) => deleteBucket(primary, signal), // the Bucket goes once this resolves
 *     }),
 *   )
 *   .subscribe();
 * ```
 *
 * @param name the finalizer, a qualified name (`example.com/cleanup`).
 * @param handlers `apply` and `cleanup`.
 * @returns a reconciler for the controller's `run`.
 */
export function finalizer<T extends KubeObject>(name: string, handlers: FinalizerHandlers<T>): ControllerReconciler<T> {
  return (request) => {
    const { primary, resource, writes } = request;
    if (primary === undefined) return undefined;
    const finalizers = primary.metadata.finalizers ?? [];
    const ours = finalizers.includes(name);
    const resourceVersion = primary.metadata.resourceVersion;
    if (primary.metadata.deletionTimestamp !== undefined) {
      if (!ours) return undefined;
      return lastOutcome(handlers.cleanup({ ...request, primary })).pipe(
        mergeMap((outcome) => {
          if (requeueDelayOf(outcome) !== undefined) return of(outcome);
          const rest = finalizers.filter((finalizer) => finalizer !== name);
          const patch = { metadata: { resourceVersion, finalizers: rest.length === 0 ? null : rest } };
          return from(writes.patch(resource, primary, { type: 'merge', patch }).then(() => undefined));
        }),
      );
    }
    if (ours) return handlers.apply({ ...request, primary });
    const patch = { metadata: { resourceVersion, finalizers: [...finalizers, name] } };
    return from(writes.patch(resource, primary, { type: 'merge', patch })).pipe(mergeMap((updated) => lastOutcome(handlers.apply({ ...request, primary: updated }))));
  };
}

/** A handler's outcome as an Observable of its last value (undefined when it gives none). */
function lastOutcome(output: FinalizerOutcome): Observable<ReconcileOutcome> {
  if (isObservable(output)) return output.pipe(reduce((_last, value: ReconcileOutcome) => value, undefined as ReconcileOutcome));
  if (typeof output === 'object' && output !== null && typeof (output as { then?: unknown }).then === 'function') return from(output as PromiseLike<ReconcileOutcome>);
  return of(output as ReconcileOutcome);
}
