import { filter, type MonoTypeOperatorFunction } from 'rxjs';
import type { Change } from '../store/change';
import type { KubeObject } from '../base/object';

/**
 * Keeps the changes of objects in one namespace, or in any of several. Cluster-scoped objects
 * (no namespace) never match.
 *
 * ```
 * changes$:                 --a(ns1)--b(ns2)--c(ns1)--|
 * inNamespace('ns1'):      --a(ns1)----------c(ns1)--|
 * ```
 *
 * ## Example
 * ```ts
 * import { inNamespace, type Informer, type Pod } from 'rx-informer';
 *
 * declare const podInformer: Informer<Pod>;
 * podInformer.changes$.pipe(inNamespace(['team-a', 'team-b'])).subscribe((change) => console.log(change.type, change.key));
 * ```
 *
 * @param namespace a namespace, or a list of them.
 * @returns an operator that passes the changes of objects in those namespaces.
 */
export function inNamespace<T extends KubeObject = KubeObject>(namespace: string | readonly string[]): MonoTypeOperatorFunction<Change<T>> {
  const wanted = new Set(typeof namespace === 'string' ? [namespace] : namespace);
  return filter((change: Change<T>) => {
    const ns = change.object.metadata.namespace;
    return ns !== undefined && wanted.has(ns);
  });
}
