import type { KubeObject, ObjectMeta, Resource } from 'rx-informer';
import { ApiStatusError, forbiddenField, invalid } from './status';

/**
 * The rules the API server applies to an object with finalizers between its DELETE and its
 * removal, for the loopback store's delete and update paths:
 *
 * 1. **DELETE marks, it does not remove.** An object with finalizers gets `deletionTimestamp`
 *    (now) and `deletionGracePeriodSeconds: 0`, and its `generation` goes up by one the first
 *    time, so that controllers filtering on generation see it (apiserver
 *    `registry/generic/registry/store.go`: `Delete` → `updateForGracefulDeletionAndFinalizers` →
 *    `markAsDeleting`; resources with a graceful-delete strategy, pods, do the same in
 *    `registry/rest/delete.go` `BeforeDelete` with their own grace period). A second DELETE
 *    changes nothing: `markAsDeleting` keeps an earlier timestamp, and an update that writes the
 *    same bytes writes nothing.
 * 2. **Updates keep the mark.** An update never removes or changes `deletionTimestamp`, nor drops
 *    `deletionGracePeriodSeconds` (`registry/rest/update.go` `BeforeUpdate`: "an update can never
 *    remove/change a deletion timestamp", "... grace period seconds").
 * 3. **No new finalizers while deleting.** An update of an object being deleted that adds a
 *    finalizer is 422 Invalid (apimachinery `api/validation/objectmeta.go`
 *    `ValidateObjectMetaAccessorUpdate` → `ValidateNoNewFinalizers`); removing some is allowed.
 * 4. **The last finalizer removed deletes it.** An update that leaves no finalizer on an object
 *    marked with a grace period of 0 (or none) deletes it instead of storing it
 *    (`ShouldDeleteDuringUpdate`, then `deleteWithoutFinalizers`); the DELETED watch event carries
 *    the last stored state at the deletion's resourceVersion, as every etcd delete event does
 *    (`storage/etcd3/watcher.go`: "this sends the *old* object with the etcd revision for the
 *    time at which it gets deleted").
 */

/** `metadata.deletionGracePeriodSeconds`, which rx-informer's `ObjectMeta` leaves to pass through. */
type DeletionMeta = ObjectMeta & { readonly deletionGracePeriodSeconds?: number };

/**
 * The metadata of an object with finalizers after a DELETE (`markAsDeleting`), or undefined when
 * it is marked already and the DELETE changes nothing (rule 1).
 */
export function markedForDeletion(meta: ObjectMeta, now: string): DeletionMeta | undefined {
  if (meta.deletionTimestamp !== undefined) return undefined;
  const generation = meta.generation ?? 0;
  return { ...meta, deletionTimestamp: now, deletionGracePeriodSeconds: 0, ...(generation > 0 ? { generation: generation + 1 } : {}) };
}

/** The deletion fields an update carries over from the stored object (rule 2). */
export function keptDeletionFields(old: ObjectMeta, updated: ObjectMeta): Partial<DeletionMeta> {
  const oldGrace = (old as DeletionMeta).deletionGracePeriodSeconds;
  return {
    ...(old.deletionTimestamp === undefined ? {} : { deletionTimestamp: old.deletionTimestamp }),
    ...(oldGrace !== undefined && (updated as DeletionMeta).deletionGracePeriodSeconds === undefined ? { deletionGracePeriodSeconds: oldGrace } : {}),
  };
}

/** @throws ApiStatusError 422 when an update adds a finalizer to an object being deleted (rule 3) */
export function checkNoNewFinalizers(resource: Resource<KubeObject>, old: ObjectMeta, updated: ObjectMeta): void {
  if (old.deletionTimestamp === undefined) return;
  const before = new Set(old.finalizers ?? []);
  // Go's sets.NewString(...).List() is sorted, and %#v prints a []string as []string{"a", "b"}.
  const added = [...new Set(updated.finalizers ?? [])].filter((finalizer) => !before.has(finalizer)).sort();
  if (added.length === 0) return;
  const detail = `no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((name) => JSON.stringify(name)).join(', ')}}`;
  throw new ApiStatusError(invalid(resource.kind, resource.group, old.name, [forbiddenField('metadata.finalizers', detail)]));
}

/** Whether an update deletes the object instead of storing it (rule 4, `ShouldDeleteDuringUpdate`). */
export function deletesOnUpdate(old: ObjectMeta, updated: ObjectMeta): boolean {
  if ((updated.finalizers ?? []).length > 0 || old.deletionTimestamp === undefined) return false;
  const grace = (old as DeletionMeta).deletionGracePeriodSeconds;
  return grace === undefined || grace === 0;
}
