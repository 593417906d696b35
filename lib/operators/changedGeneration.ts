import { filter, type MonoTypeOperatorFunction } from 'rxjs';
import type { Change } from '../store/change';
import type { KubeObject } from '../base/object';

/**
 * Drops updates that left `metadata.generation` unchanged: for most resources, status-only and
 * metadata-only writes, which a controller reconciling the spec does not need (controller-runtime's
 * GenerationChangedPredicate). Adds and deletes always pass. An update where either state has no
 * generation passes too: resources without one (ConfigMaps, Secrets) would otherwise never update.
 *
 * ```
 * changes$:             --a--u(gen 1→1)--u(gen 1→2)--d--|
 * changedGeneration(): --a--------------u(gen 1→2)--d--|
 * ```
 *
 * ## Example
 * ```ts
 * import { changedGeneration, type Deployment, type Informer } from 'rx-informer';
 *
 * declare const deploymentInformer: Informer<Deployment>;
 * deploymentInformer.changes$.pipe(changedGeneration()).subscribe((change) => console.log('spec changed:', change.key));
 * ```
 *
 * @returns an operator that passes adds, deletes and spec-changing updates.
 */
export function changedGeneration<T extends KubeObject = KubeObject>(): MonoTypeOperatorFunction<Change<T>> {
  return filter((change: Change<T>) => {
    if (change.type !== 'update') return true;
    const before = change.oldObject.metadata.generation;
    const after = change.object.metadata.generation;
    return before === undefined || after === undefined || before !== after;
  });
}
