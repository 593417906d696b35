/**
 * Custom RxJS operators over an informer's streams, and a program that uses one.
 *
 * - `becameReady()` works on `changes$` (changes carry the old and the new object): the pods whose
 *   Ready condition just turned true.
 * - `quietPerObject(ms)` works on `deltas$` (the reflector's raw stream): the last watch delta of
 *   each object once that object has been quiet for `ms`, a per-key debounce.
 *
 * Both are plain compositions of RxJS operators: nothing to subclass, nothing to register.
 *
 * Run: `npx ts-node examples/run/customOperator.ts [namespace]` (current kubeconfig context).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { asyncScheduler, debounceTime, filter, groupBy, last, lastValueFrom, map, mergeMap, take, tap, toArray, type OperatorFunction, type SchedulerLike } from 'rxjs';
import { informer, objectKey, pods, type AddedDelta, type Change, type DeletedDelta, type Delta, type KubeObject, type Pod, type UpdatedDelta } from 'rx-informer';

/** True when the pod's `Ready` condition is `True`. */
export function isReady(pod: Pod): boolean {
  const conditions = pod.status?.['conditions'];
  if (!Array.isArray(conditions)) return false;
  return conditions.some((condition: unknown) => {
    const { type, status } = (typeof condition === 'object' && condition !== null ? condition : {}) as { type?: unknown; status?: unknown };
    return type === 'Ready' && status === 'True';
  });
}

/**
 * The pods that became Ready: updates from not Ready to Ready, and pods added Ready after the
 * initial list (those in the initial list were already Ready, they did not become so).
 *
 * ```
 * changes$:       --a(ready, initial)--u(not→ready)--u(ready→ready)--a(ready)--|
 * becameReady(): ---------------------P-----------------------------P--------|
 * ```
 */
export function becameReady(): OperatorFunction<Change<Pod>, Pod> {
  return (changes$) =>
    changes$.pipe(
      filter((change) => {
        if (change.type === 'update') return isReady(change.object) && !isReady(change.oldObject);
        if (change.type === 'add') return !change.isInInitialList && isReady(change.object);
        return false;
      }),
      map((change) => change.object),
    );
}

/** A delta about one object: Added, Updated or Deleted. */
export type ObjectDelta<T extends KubeObject> = AddedDelta<T> | UpdatedDelta<T> | DeletedDelta<T>;

/**
 * The last watch delta of each object, once no delta about it has come for `quietMs`. Replace and
 * Bookmark deltas are dropped. Memory: one group per object with a delta in the last `quietMs`;
 * a group ends (and is released) when it emits.
 *
 * ```
 * deltas$:               -1-2-b------3------|   1, 2, 3: deltas about object a; b: about object b
 * quietPerObject(5 ms):  --------2-b------3-|   (one dash = 1 ms)
 * ```
 */
export function quietPerObject<T extends KubeObject>(quietMs: number, scheduler: SchedulerLike = asyncScheduler): OperatorFunction<Delta<T>, ObjectDelta<T>> {
  return (deltas$) =>
    deltas$.pipe(
      filter((delta): delta is ObjectDelta<T> => delta.type === 'Added' || delta.type === 'Updated' || delta.type === 'Deleted'),
      groupBy((delta) => objectKey(delta.object), { duration: (group) => group.pipe(debounceTime(quietMs, scheduler)) }),
      mergeMap((group) => group.pipe(last())),
    );
}

/** Options of {@link main}. */
export interface BecameReadyOptions {
  /** Watch one namespace. Default: all namespaces. */
  readonly namespace?: string;
  /** Stop after this many pods became Ready. Default 5. */
  readonly count?: number;
  /** Where lines go. Default `console.log`. */
  readonly log?: (line: string) => void;
}

/** Prints pods as they become Ready; resolves with their keys after `count` of them. */
export async function main(kubeConfig: KubeConfig, options: BecameReadyOptions = {}): Promise<string[]> {
  const log = options.log ?? ((line: string) => console.log(line));
  const podInformer = informer(kubeConfig, pods, { namespace: options.namespace });
  // Both subscriptions ride one list+watch: the informer's streams are shared.
  const announce = podInformer.synced$.subscribe((snapshot) => log(`synced: ${snapshot.size} pods`));
  try {
    return await lastValueFrom(
      podInformer.changes$.pipe(
        becameReady(),
        map((pod) => objectKey(pod)),
        tap((key) => log(`ready: ${key}`)),
        take(options.count ?? 5),
        toArray(),
      ),
    );
  } finally {
    announce.unsubscribe();
  }
}
