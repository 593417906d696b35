import { concat, defer, filter, from, isObservable, map, mergeMap, of, Subject, takeUntil, type Observable } from 'rxjs';
import type { KubeObject } from '../base/object';
import type { NamespaceScope, ReplaceDelta } from '../reflector/delta';
import { reflectorEvents } from '../reflector/reflect';
import type { ReflectConfig } from '../reflector/reflectConfig';
import type { ReflectorEvent } from '../reflector/reflectorEvent';
import type { ListerWatcher } from '../sources/listerWatcher';

/**
 * The namespaces an informer watches together: a fixed list, or a stream of lists, each of which
 * replaces the set (namespaces added start their watch, namespaces removed stop theirs).
 */
export type NamespaceSet = readonly string[] | Observable<readonly string[]>;

/**
 * The reflector runs of an informer over a set of namespaces, to run side by side: one per
 * namespace, since the API server has no selector for a set of namespaces. Each namespace's run is
 * its own reflector (own list, watch, backoff and relists) over `listerWatcherOf(namespace)`,
 * named `<name>:<namespace>` in log lines, and its Replaces carry a {@link NamespaceScope}, so
 * that a relist of one namespace replaces only that namespace's objects in the cache.
 *
 * 1. The first set's namespaces list with cause `listed`; the cache is synced once each has
 *    listed (`unsyncedNamespaces` counts those still to). A first set that is empty makes one
 *    empty Replace: a synced, empty cache.
 * 2. A namespace added later starts a run whose first Replace has cause `added`: its objects
 *    arrive as adds marked so. It does not unsync the cache.
 * 3. A namespace removed stops its run (its request aborted), then makes a Replace with cause
 *    `removed` and no items: its objects leave as deletes marked so.
 * 4. Duplicates in a set count once. A stream that completes leaves the last set running.
 *
 * @param listerWatcherOf where one namespace's lists and watches come from.
 * @param namespaces the set, fixed or changing.
 * @param config the reflector config every run shares.
 * @returns the runs, to merge (`informerOfRuns(..., 'merge')`). Errors with a TypeError when a
 * set holds something other than non-empty strings.
 */
export function namespaceRuns<T extends KubeObject>(listerWatcherOf: (namespace: string) => ListerWatcher<T>, namespaces: NamespaceSet, config: ReflectConfig): Observable<Observable<ReflectorEvent<T>>> {
  return defer(() => {
    const watched = new Set<string>();
    // Namespaces of the set whose first list has not ended.
    const unsynced = new Set<string>();
    const left$ = new Subject<string>();
    let first = true;

    const run = (namespace: string, cause: 'listed' | 'added'): Observable<ReflectorEvent<T>> => {
      let listCause = cause;
      const scoped = (event: ReflectorEvent<T>): ReflectorEvent<T> => {
        if (event.type !== 'Replace') return event;
        if (event.last) unsynced.delete(namespace);
        const scope: NamespaceScope = { namespace, cause: listCause, unsyncedNamespaces: unsynced.size };
        if (event.last) listCause = 'listed';
        return { ...event, scope };
      };
      const events = reflectorEvents(listerWatcherOf(namespace), { ...config, name: `${config.name ?? 'informer'}:${namespace}` });
      const removal = defer(() => of<ReplaceDelta<T>>({ type: 'Replace', items: [], first: true, last: true, resourceVersion: '', scope: { namespace, cause: 'removed', unsyncedNamespaces: unsynced.size } }));
      return concat(events.pipe(map(scoped), takeUntil(left$.pipe(filter((left) => left === namespace)))), removal);
    };

    const sets$ = isObservable(namespaces) ? namespaces : of(namespaces);
    return sets$.pipe(
      map(checkNamespaces),
      mergeMap((next) => {
        const runs: Observable<ReflectorEvent<T>>[] = [];
        if (first && next.size === 0) runs.push(of<ReflectorEvent<T>>({ type: 'Replace', items: [], first: true, last: true, resourceVersion: '' }));
        for (const namespace of watched) {
          if (next.has(namespace)) continue;
          watched.delete(namespace);
          unsynced.delete(namespace);
          // Ends that namespace's run at once, which then makes its removal Replace.
          left$.next(namespace);
        }
        for (const namespace of next) {
          if (watched.has(namespace)) continue;
          watched.add(namespace);
          unsynced.add(namespace);
          runs.push(run(namespace, first ? 'listed' : 'added'));
        }
        first = false;
        return from(runs);
      }),
    );
  });
}

/**
 * A set of namespaces, checked: the distinct names in the order given.
 * @throws TypeError when an entry is not a non-empty string, or the set is not an array.
 */
export function checkNamespaces(namespaces: readonly string[]): ReadonlySet<string> {
  if (!Array.isArray(namespaces)) throw new TypeError(`namespaces must be an array of namespace names, got ${typeof namespaces}`);
  for (const namespace of namespaces as readonly unknown[]) {
    if (typeof namespace !== 'string' || namespace === '') throw new TypeError(`namespaces must be non-empty namespace names, got ${JSON.stringify(namespace)}`);
  }
  return new Set(namespaces);
}
