import type { Observable } from 'rxjs';
import type { KubeObject } from '../base/object';
import type { Resource } from '../resources/resource';
import type { Snapshot } from '../store/snapshot';
import type { ReconcileOutcome } from '../workqueue/reconcileResult';
import type { DeleteOptions, ObjectPatch, ObjectRef } from './objectClient';

/**
 * The caches a reconcile reads: the snapshot of every informer the controller uses, all taken
 * when the reconcile started (after the cache had shown the writes before it), so that every
 * read in one reconcile agrees with every other.
 */
export interface ControllerSnapshots {
  /**
   * The snapshot of a resource the controller watches (its primary, or one it `owns` or
   * `watches`). Typed by the resource: `of(configMaps)` is a `Snapshot<ConfigMap>`.
   * @throws Error naming the watched resources, for one the controller does not watch.
   */
  of<R extends KubeObject>(resource: Resource<R>): Snapshot<R>;
  /**
   * The objects of a resource the controller `owns` that name `owner` (by uid) in an owner
   * reference, in O(log n) through the owner index `owns` adds; none for an owner without a uid.
   * @throws Error for a resource the controller does not watch; `IndexNotFoundError` for one it
   *   watches without the owner index (added by `owns`, or by an `OWNER_INDEX` you pass).
   */
  owned<R extends KubeObject>(resource: Resource<R>, owner: KubeObject): R[];
}

/**
 * The writes of one reconcile, as Promises that reject when its signal aborts. Each answer the
 * server gives is recorded: the next reconcile of the same key starts once the cache shows it
 * (see the controller's `readAfterWriteTimeout`).
 */
export interface ControllerWrites {
  /** POST a new object; resolves with it as stored. */
  create<R extends KubeObject>(resource: Resource<R>, object: R): Promise<R>;
  /**
   * PATCH an object (`target` may be the object itself). Put the `metadata.resourceVersion` you
   * read in a merge patch to make it conditional: it fails with 409 Conflict if the object changed.
   */
  patch<R extends KubeObject>(resource: Resource<R>, target: ObjectRef | R, patch: ObjectPatch): Promise<R>;
  /** DELETE an object; resolves with it when the server answers with it, else undefined. */
  delete<R extends KubeObject>(resource: Resource<R>, target: ObjectRef | R, options?: DeleteOptions): Promise<R | undefined>;
  /** Records a write you made with another client: its answer, as the server gave it. */
  wrote<R extends KubeObject>(resource: Resource<R>, answer: R): void;
}

/** What a controller's reconciler is handed: one key, and one consistent view to work from. */
export interface ControllerRequest<T extends KubeObject = KubeObject> {
  /** The primary's key (`namespace/name`, or `name` when cluster-scoped). */
  readonly key: string;
  /** The primary as the cache holds it, or undefined when it is gone. */
  readonly primary: T | undefined;
  /** The primary's resource. */
  readonly resource: Resource<T>;
  /** Every informer's snapshot, taken when this reconcile started. */
  readonly snapshots: ControllerSnapshots;
  /** Writes that the next reconcile of this key will read back. */
  readonly writes: ControllerWrites;
  /** Aborts when this reconcile is abandoned (its timeout, a stop): pass it on to your requests. */
  readonly signal: AbortSignal;
  /** Failures of this key since it last succeeded: 0 on a first attempt. */
  readonly failures: number;
}

/**
 * A controller's reconcile function: makes the world match the primary under `request.key`.
 * Returns (or resolves, or completes with) nothing when done, `requeueAfter(ms)` to run again
 * later; a throw, rejection or error is retried with backoff.
 */
export type ControllerReconciler<T extends KubeObject = KubeObject> = (
  request: ControllerRequest<T>,
) => ReconcileOutcome | PromiseLike<ReconcileOutcome> | Observable<ReconcileOutcome>;
