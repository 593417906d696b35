import type { MonoTypeOperatorFunction } from 'rxjs';
import type { Change } from '../store/change';
import type { KubeObject } from '../base/object';
import { changedWhen } from './changedWhen';

/**
 * Drops updates that left `metadata.generation` unchanged: for most resources, status-only and
 * metadata-only writes, which a controller reconciling the spec does not need (controller-runtime's
 * GenerationChangedPredicate). Adds and deletes always pass, and so does an object deleted and
 * created again while the informer did not watch (a new uid, though at the same generation 1:
 * kube-rs #1830). An update where either state has no generation passes too: resources without
 * one (ConfigMaps, Secrets) would otherwise never update. Marking an object for deletion bumps its
 * generation, so a deletion held by a finalizer passes.
 *
 * ```
 * changes$:             --a--u(gen 1→1)--u(gen 1→2)--u(new uid, gen 1)--d--|
 * changedGeneration(): --a--------------u(gen 1→2)--u(new uid, gen 1)--d--|
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
 * @returns an operator that passes adds, deletes, recreations and spec-changing updates.
 */
export function changedGeneration<T extends KubeObject = KubeObject>(): MonoTypeOperatorFunction<Change<T>> {
  return changedWhen<T>((oldObject, object) => {
    const before = oldObject.metadata.generation;
    const after = object.metadata.generation;
    return before === undefined || after === undefined || before !== after;
  });
}
