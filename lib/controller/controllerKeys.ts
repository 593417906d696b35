import { mergeMap, Observable, Subscription, type MonoTypeOperatorFunction, type OperatorFunction } from 'rxjs';
import type { KubeObject } from '../base/object';
import type { Change } from '../store/change';
import type { ControllerSnapshots } from './controllerRequest';
import type { World } from './worlds';

/**
 * The keys a controller reconciles, from its worlds: each source (the primary, and each resource
 * it `owns` or `watches`) turns the changes of its informer into changes passed through its
 * predicates, then into primary keys; each world's keys, from every source, are emitted once
 * each, after every source has mapped it, so that a burst of changes that arrived together is one
 * entry in the work queue even when its first key starts a reconcile at once.
 */

/** A predicate: an operator that passes the changes worth reconciling (`changedGeneration()`...). */
export type ChangePredicate<T extends KubeObject = KubeObject> = MonoTypeOperatorFunction<Change<T>>;

/** Where keys come from: one informer's changes, filtered, mapped to primary keys. */
export interface KeySource {
  /** Which informer of the world. */
  readonly index: number;
  readonly predicates: readonly ChangePredicate[];
  /** The primary keys an object stands for; undefined for the primary itself (its own key). */
  readonly keysOf: ((object: KubeObject, snapshots: ControllerSnapshots) => Iterable<string>) | undefined;
}

/**
 * The keys of every world, from every source, each at most once per world.
 *
 * @param world$ the worlds; it must be shared (multicast) and connected only after this is
 *   subscribed, as `connect` does: each source and the flush subscribe to it.
 * @param sources the key sources.
 * @param snapshots the view of the world being mapped, for mappers that read the caches.
 */
export function controllerKeys(world$: Observable<World>, sources: readonly KeySource[], snapshots: () => ControllerSnapshots): Observable<string> {
  return new Observable<string>((subscriber) => {
    const batch = new Set<string>();
    const subscription = new Subscription();
    const fail = (error: unknown): void => subscriber.error(error);
    for (const source of sources) subscription.add(world$.pipe(sourceKeys(source, snapshots)).subscribe({ next: (key) => void batch.add(key), error: fail }));
    // Subscribed last, so told of each world after every source has mapped it.
    subscription.add(
      world$.subscribe({
        next: () => {
          const keys = [...batch];
          batch.clear();
          for (const key of keys) subscriber.next(key);
        },
        error: fail,
        complete: () => subscriber.complete(),
      }),
    );
    return subscription;
  });
}

function sourceKeys(source: KeySource, snapshots: () => ControllerSnapshots): OperatorFunction<World, string> {
  const { index, keysOf } = source;
  const filtered = (changes: Observable<Change<KubeObject>>): Observable<Change<KubeObject>> => source.predicates.reduce((stream, predicate) => predicate(stream), changes);
  return (world$) =>
    world$.pipe(
      mergeMap((world) => changesOf(world, index)),
      filtered,
      mergeMap((change): Iterable<string> => {
        if (keysOf === undefined) return [change.key];
        const view = snapshots();
        if (change.type !== 'update') return keysOf(change.object, view);
        return [...keysOf(change.oldObject, view), ...keysOf(change.object, view)];
      }),
    );
}

/**
 * The changes of one informer in a world: its whole cache as adds in the first world (so that a
 * controller starting late, or a new term of leadership, reconciles everything), then the changes
 * of its new snapshot, leaving out updates that changed nothing (a relist that found an object as
 * it was: resyncs are for that).
 */
function* changesOf(world: World, index: number): Iterable<Change<KubeObject>> {
  const snapshot = world.snapshots[index]!;
  if (world.changed === undefined) {
    for (const key of snapshot.keys()) yield { type: 'add', key, object: snapshot.get(key)!, isInInitialList: false };
    return;
  }
  if (world.changed !== index) return;
  for (const change of snapshot.changes) {
    if (change.type === 'update' && change.object.metadata.resourceVersion === change.oldObject.metadata.resourceVersion) continue;
    yield change;
  }
}
