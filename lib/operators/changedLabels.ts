import type { MonoTypeOperatorFunction } from 'rxjs';
import type { Change } from '../store/change';
import type { KubeObject } from '../base/object';
import { changedWhen } from './changedWhen';
import { sameStringMap } from './sameStringMap';

/**
 * Drops updates that left `metadata.labels` as they were (controller-runtime's
 * LabelChangedPredicate). Labels are compared entry by entry, so the answer is exact whether or
 * not the informer shares unchanged parts; no labels and empty labels are alike. Adds and deletes
 * always pass, and so does an object deleted and created again while the informer did not watch
 * (a new uid: kube-rs #1830).
 *
 * ```
 * changes$:         --a--u(status only)--u(app: web→api)--u(new uid)--d--|
 * changedLabels(): --a------------------u(app: web→api)--u(new uid)--d--|
 * ```
 *
 * ## Example
 * ```ts
 * import { changedLabels, type Informer, type Namespace } from 'rx-informer';
 *
 * declare const namespaceInformer: Informer<Namespace>;
 * namespaceInformer.changes$.pipe(changedLabels()).subscribe((change) => console.log('labels changed:', change.key));
 * ```
 *
 * @returns an operator that passes adds, deletes, recreations and the updates that changed a label.
 */
export function changedLabels<T extends KubeObject = KubeObject>(): MonoTypeOperatorFunction<Change<T>> {
  return changedWhen<T>((oldObject, object) => !sameStringMap(oldObject.metadata.labels, object.metadata.labels));
}
