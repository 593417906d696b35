import { BehaviorSubject, defer, EMPTY, of, switchMap, type Observable, type SchedulerLike } from 'rxjs';
import { idleHealth } from '../informer/informerHealth';
import type { Informer } from '../informer/informer';
import { NAMESPACE_INDEX, namespaceIndex, type IndexFunc } from '../store/indexers';
import type { KubeObject } from '../base/object';

/** An index was requested that the shared informer cannot take: it already runs, or the name is taken. */
export class IndexerConflictError extends Error {
  constructor(
    readonly informerName: string,
    readonly indexName: string,
    why: string,
  ) {
    super(`cannot add index ${JSON.stringify(indexName)} to informer ${informerName}: ${why}`);
    this.name = 'IndexerConflictError';
  }
}

type Indexers = Readonly<Record<string, IndexFunc<KubeObject>>>;

/** A factory's shared informer, and the way to add index functions to it before it is built. */
export interface LazyInformer {
  readonly informer: Informer<KubeObject>;
  /** Merges index functions in; throws {@link IndexerConflictError} once built or on a name clash. */
  addIndexers(indexers: Readonly<Record<string, IndexFunc<never>>>): void;
  /** The real informer, once something has run it; undefined before. */
  built(): Informer<KubeObject> | undefined;
}

/**
 * An informer whose indexers can still grow: the real one is built, with the namespace index and
 * the indexers gathered until then, when `gate` first lets a stream through. Every stream but
 * `health$` goes through `gate` (the factory's: nothing before `start()`, everything completes at
 * `shutdown()`); `health$` is idle until the real informer exists and never builds it.
 *
 * @param name the informer's name.
 * @param build makes the real informer with the gathered indexers.
 * @param gate wraps each stream; it subscribes to its argument only when the stream may run.
 * @param scheduler the clock of the idle health reported before the informer is built.
 */
export function lazyInformer(
  name: string,
  build: (indexers: Indexers) => Informer<KubeObject>,
  gate: <V>(source: Observable<V>) => Observable<V>,
  scheduler: SchedulerLike,
): LazyInformer {
  let indexers: Indexers = { [NAMESPACE_INDEX]: namespaceIndex };
  const built$ = new BehaviorSubject<Informer<KubeObject> | undefined>(undefined);
  const real = (): Informer<KubeObject> => {
    if (built$.value === undefined) built$.next(build(indexers));
    return built$.value!;
  };
  const lazy = <V>(pick: (informer: Informer<KubeObject>) => Observable<V>): Observable<V> => gate(defer(() => pick(real())));
  const idle = idleHealth(scheduler.now());
  return {
    informer: {
      name,
      informer$: lazy((i) => i.informer$),
      deltas$: lazy((i) => i.deltas$),
      changes$: lazy((i) => i.changes$),
      synced$: lazy((i) => i.synced$),
      health$: built$.pipe(switchMap((informer) => informer?.health$ ?? of(idle))),
      metrics$: built$.pipe(switchMap((informer) => informer?.metrics$ ?? EMPTY)),
      handle: (handlers, handleOptions) => lazy((i) => i.handle(handlers, handleOptions)),
    },
    addIndexers(add) {
      for (const [indexName, indexFunc] of Object.entries(add) as [string, IndexFunc<KubeObject>][]) {
        const existing = indexers[indexName];
        if (existing === indexFunc) continue;
        if (existing !== undefined) throw new IndexerConflictError(name, indexName, 'another index function already has that name');
        if (built$.value !== undefined) throw new IndexerConflictError(name, indexName, 'the informer already runs; pass indexers on its first informerFor');
        indexers = { ...indexers, [indexName]: indexFunc };
      }
    },
    built: () => built$.value,
  };
}
