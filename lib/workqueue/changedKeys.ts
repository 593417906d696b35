import { asyncScheduler, type OperatorFunction, type SchedulerLike } from 'rxjs';
import type { KubeObject } from '../base/object';
import { operate, operatorObserver } from '../base/operate';
import { effectiveResyncPeriod, resync, type ResyncTick } from '../handlers/resync';
import type { Snapshot } from '../store/snapshot';

/** Options of {@link changedKeys}. All optional. */
export interface ChangedKeysOptions<T extends KubeObject = KubeObject> {
  /**
   * The keys an object stands for. Default: its own key. Return other keys to reconcile what the
   * object belongs to, e.g. the owners of a ConfigMap; an update yields the keys of both the old
   * and the new object, so an owner that was removed is reconciled too.
   */
  readonly keysOf?: (object: T) => Iterable<string>;
  /**
   * Emit every key of the latest snapshot again this often (ms): client-go's resync, a safety net
   * for side effects an event never triggered. 0 = never (default); minimum 1000. O(n) per period.
   */
  readonly resyncPeriod?: number;
  /** Runs the resync timer. Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike;
}

/**
 * The keys to reconcile, from an informer's snapshots: every key of the first snapshot (so a
 * late subscriber starts from the whole cache, as a handler's initial adds do), then the key of
 * each change, and every key again each `resyncPeriod`. An update whose resourceVersion did not
 * change (a relist that found the object as it was) yields nothing. Feed the keys to
 * {@link reconcile}, which keeps one entry per key however often it arrives. Ends with its source;
 * a `keysOf` that throws fails the output with that error.
 *
 * ```
 * informer$:      -s-----t------u------       s: {a, b} (first); t: a updated; u: a relist that
 * changedKeys():  -(ab)--a------(bc)---          deleted b, added c and found a unchanged
 * ```
 *
 * Costs: O(size) for the first snapshot and for each resync; O(1) per change after that
 * (times what `keysOf` returns).
 *
 * ## Example
 * ```ts
 * import { merge } from 'rxjs';
 * import { changedKeys, reconcile } from 'rx-informer/workqueue';
 * import type { ConfigMap, Deployment, Informer } from 'rx-informer';
 *
 * declare const deploymentInformer: Informer<Deployment>;
 * declare const configMapInformer: Informer<ConfigMap>;
 * declare function reconcileDeployment(key: string): Promise<void>;
 *
 * // A Deployment's key when it changes, and when a ConfigMap it owns changes.
 * const ownerKeys = (configMap: ConfigMap): string[] =>
 *   (configMap.metadata.ownerReferences ?? [])
 *     .filter((owner) => owner.kind === 'Deployment')
 *     .map((owner) => `${configMap.metadata.namespace}/${owner.name}`);
 * merge(
 *   deploymentInformer.informer$.pipe(changedKeys({ resyncPeriod: 600_000 })),
 *   configMapInformer.informer$.pipe(changedKeys({ keysOf: ownerKeys })),
 * )
 *   .pipe(reconcile(reconcileDeployment))
 *   .subscribe();
 * ```
 *
 * @param options how objects map to keys, and the resync period.
 * @returns an operator from snapshots to keys.
 * @throws RangeError when `resyncPeriod` is negative or NaN.
 */
export function changedKeys<T extends KubeObject = KubeObject>(options: ChangedKeysOptions<T> = {}): OperatorFunction<Snapshot<T>, string> {
  const period = effectiveResyncPeriod(options.resyncPeriod);
  const scheduler = options.scheduler ?? asyncScheduler;
  const { keysOf } = options;
  return operate((snapshots, subscriber) => {
    let first = true;
    const emit = (key: string): void => subscriber.next(key);
    const emitObject = keysOf === undefined ? undefined : (object: T): void => {
      for (const key of keysOf(object)) emit(key);
    };
    const emitAll = (snapshot: Snapshot<T>): void => {
      if (emitObject === undefined) for (const key of snapshot.keys()) emit(key);
      else for (const object of snapshot.values()) emitObject(object);
    };
    return snapshots.pipe(resync<T>({ period, scheduler })).subscribe(
      operatorObserver<ResyncTick<T>>(subscriber, {
        next: (tick) => {
          if (tick.type === 'resync' || first) {
            first = false;
            return emitAll(tick.snapshot);
          }
          for (const change of tick.snapshot.changes) {
            // A relist that found the object as it was: nothing to reconcile (resyncs are for that).
            if (change.type === 'update' && change.object.metadata.resourceVersion === change.oldObject.metadata.resourceVersion) continue;
            if (emitObject === undefined) emit(change.key);
            else {
              if (change.type === 'update') emitObject(change.oldObject);
              emitObject(change.object);
            }
          }
        },
      }),
    );
  });
}
