import type { MonoTypeOperatorFunction } from 'rxjs';
import type { Change } from '../store/change';
import type { KubeObject } from '../base/object';
import { changedWhen } from './changedWhen';
import { sameStringMap } from './sameStringMap';

/**
 * Drops updates that left `metadata.annotations` as they were (controller-runtime's
 * AnnotationChangedPredicate). Annotations are compared entry by entry, so the answer is exact
 * whether or not the informer shares unchanged parts; no annotations and empty annotations are
 * alike. Adds and deletes always pass, and so does an object deleted and created again while the
 * informer did not watch (a new uid: kube-rs #1830).
 *
 * ```
 * changes$:              --a--u(status only)--u(note: a→b)--u(new uid)--d--|
 * changedAnnotations(): --a------------------u(note: a→b)--u(new uid)--d--|
 * ```
 *
 * ## Example
 * ```ts
 * import { changedAnnotations, type Informer, type Secret } from 'rx-informer';
 *
 * declare const secretInformer: Informer<Secret>;
 * secretInformer.changes$.pipe(changedAnnotations()).subscribe((change) => console.log('annotations changed:', change.key));
 * ```
 *
 * @returns an operator that passes adds, deletes, recreations and the updates that changed an annotation.
 */
export function changedAnnotations<T extends KubeObject = KubeObject>(): MonoTypeOperatorFunction<Change<T>> {
  return changedWhen<T>((oldObject, object) => !sameStringMap(oldObject.metadata.annotations, object.metadata.annotations));
}
