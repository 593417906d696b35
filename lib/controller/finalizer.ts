import type { Observable } from 'rxjs';
import type { KubeObject } from '../base/object';
import { requeueDelayOf, type ReconcileOutcome } from '../workqueue/reconcileResult';
import type { ControllerReconciler, ControllerRequest } from './controllerRequest';
import { outcomeOnceSettled } from './outcomeOnceSettled';

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
 * A stop with the run's `signal` (whileLeader's) treats a handler as the work queue treats a
 * reconciler: its Promise is waited for, its Observable is unsubscribed, and the run completes
 * only then, the finalizer's own write included. Nothing starts after the stop: no `apply` after
 * the finalizer's addition, no removal after `cleanup` (the next run cleans up again).
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
    const { primary } = request;
    if (primary === undefined) return undefined;
    const ours = (primary.metadata.finalizers ?? []).includes(name);
    if (primary.metadata.deletionTimestamp !== undefined) return ours ? cleanUpThenRemove(name, handlers, { ...request, primary }) : undefined;
    // Nothing around apply: what it returns is the reconcile, as the work queue would have it.
    if (ours) return handlers.apply({ ...request, primary });
    return addThenApply(name, handlers, { ...request, primary });
  };
}

/*
 * The two paths that do more than call a handler are Promises of the whole, settled only once
 * nothing of it runs: the work queue waits for a Promise at a stop (the run's `signal`, which
 * whileLeader passes before releasing the Lease), whereas an Observable is unsubscribed and
 * counted as settled while a Promise inside it still runs. A handler's Promise is followed to
 * its end; its Observable is unsubscribed when the signal aborts (outcomeOnceSettled). After an
 * abort, nothing new starts: the reconcile was abandoned, and the next one starts over.
 */

/** Adds the finalizer (conditional on the resourceVersion read), then runs `apply` on the answer. */
async function addThenApply<T extends KubeObject>(name: string, handlers: FinalizerHandlers<T>, request: FinalizerRequest<T>): Promise<ReconcileOutcome> {
  const { primary, resource, writes, signal } = request;
  const patch = { metadata: { resourceVersion: primary.metadata.resourceVersion, finalizers: [...(primary.metadata.finalizers ?? []), name] } };
  const updated = await writes.patch(resource, primary, { type: 'merge', patch });
  if (signal.aborted) throw signal.reason;
  return outcomeOnceSettled(handlers.apply({ ...request, primary: updated }), signal);
}

/** Runs `cleanup`; once it has succeeded without asking to come back, removes the finalizer (conditional too). */
async function cleanUpThenRemove<T extends KubeObject>(name: string, handlers: FinalizerHandlers<T>, request: FinalizerRequest<T>): Promise<ReconcileOutcome> {
  const { primary, resource, writes, signal } = request;
  const outcome = await outcomeOnceSettled(handlers.cleanup(request), signal);
  if (requeueDelayOf(outcome) !== undefined) return outcome;
  if (signal.aborted) throw signal.reason;
  const rest = (primary.metadata.finalizers ?? []).filter((finalizer) => finalizer !== name);
  const patch = { metadata: { resourceVersion: primary.metadata.resourceVersion, finalizers: rest.length === 0 ? null : rest } };
  await writes.patch(resource, primary, { type: 'merge', patch });
  return undefined;
}
