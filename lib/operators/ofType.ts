import { filter, type OperatorFunction } from 'rxjs';
import type { Change } from '../store/change';
import type { KubeObject } from '../base/object';

/**
 * Keeps the changes of the given types (`'add'`, `'update'`, `'delete'`), narrowing their type.
 *
 * ```
 * changes$:                 --a--u--d--a--|
 * ofType('add', 'delete'): --a-----d--a--|
 * ```
 *
 * ## Example
 * ```ts
 * import { ofType, type Informer, type Pod } from 'rx-informer';
 *
 * declare const podInformer: Informer<Pod>;
 * podInformer.changes$.pipe(ofType('delete')).subscribe((change) => {
 *   console.log('deleted', change.key, change.finalStateUnknown ? '(missed the final state)' : '');
 * });
 * ```
 *
 * @param types the change types to keep; at least one.
 * @returns an operator that passes matching changes, typed as the matching members of `Change`.
 */
export function ofType<T extends KubeObject = KubeObject, K extends Change['type'] = Change['type']>(
  ...types: [K, ...K[]]
): OperatorFunction<Change<T>, Extract<Change<T>, { readonly type: K }>> {
  // Up to three types: a linear scan beats a Set.
  return filter((change: Change<T>): change is Extract<Change<T>, { readonly type: K }> => (types as readonly string[]).includes(change.type));
}
