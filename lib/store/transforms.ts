/**
 * Transforms for `indexer({ transform })`: they run once per object before it is stored, never on
 * delete tombstones, and must not mutate their input (return a new object instead).
 */
import type { KubeObject } from '../base/object';

/**
 * Drops `metadata.managedFields`, the server-side-apply bookkeeping that is often a third or more
 * of an object's JSON and that informers rarely read. Returns the object itself when there is
 * nothing to drop, so unchanged objects are not copied.
 */
export function dropManagedFields<T extends KubeObject>(object: T): T {
  if (object.metadata === undefined || !Object.hasOwn(object.metadata, 'managedFields')) return object;
  const { managedFields: _dropped, ...metadata } = object.metadata;
  return { ...object, metadata };
}
