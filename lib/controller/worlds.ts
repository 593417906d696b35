import { defer, map, merge, mergeMap, type Observable } from 'rxjs';
import type { KubeObject } from '../base/object';
import type { Informer } from '../informer/informer';
import type { Snapshot } from '../store/snapshot';
import { settledSnapshot } from '../store/indexedSnapshot';

/**
 * One moment of a controller's caches: the latest snapshot of each of its informers (in the
 * order given), once every one has synced; then one world per snapshot any of them emits.
 */
export interface World {
  readonly snapshots: readonly Snapshot<KubeObject>[];
  /** The informer whose snapshot changed since the world before; undefined for the first world. */
  readonly changed: number | undefined;
}

/**
 * The worlds of some informers: nothing until each has emitted a synced snapshot, then the first
 * world (every snapshot at once), then a world per snapshot of any informer, in the order they
 * arrive. Subscribing subscribes to every informer's `informer$`; it completes when they all have.
 * O(informers) per snapshot.
 *
 * ```
 * a.informer$:  -a1------a2-----     (a1, b1 synced)
 * b.informer$:  ----b1-------b2-
 * worlds:       ----W----A----B-     W: [a1, b1], first; A: [a2, b1], changed 0; B: [a2, b2], changed 1
 * ```
 */
export function worlds(informers: readonly Informer<KubeObject>[]): Observable<World> {
  return defer(() => {
    const latest: (Snapshot<KubeObject> | undefined)[] = informers.map(() => undefined);
    let started = false;
    return merge(...informers.map((informer, index) => informer.informer$.pipe(map((snapshot) => ({ index, snapshot }))))).pipe(
      mergeMap(({ index, snapshot }): World[] => {
        // Kept settled: a world hands the new snapshot's changes on once, and holds none after.
        latest[index] = settledSnapshot(snapshot);
        if (started) {
          const snapshots = [...(latest as Snapshot<KubeObject>[])];
          snapshots[index] = snapshot;
          return [{ snapshots, changed: index }];
        }
        if (!latest.every((entry) => entry?.synced === true)) return [];
        started = true;
        return [{ snapshots: [...(latest as Snapshot<KubeObject>[])], changed: undefined }];
      }),
    );
  });
}
