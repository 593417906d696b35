import type { KubeObject } from 'rx-informer';
import type { ServedResource } from './builtinResources';
import type { ClusterStoreImpl } from './clusterStore';
import type { StoredObject } from './history';
import { createObject, updateObject } from './objectHandlers';
import { ApiStatusError, invalid } from './status';
import type { UpdateStrategy } from './builtinResources';

/**
 * A PUT under `strategy`: creates a missing object when allowed, refuses an update without a
 * resourceVersion when unconditional updates are not allowed, else updates (409 on a stale one).
 *
 * @throws ApiStatusError 404 (missing, no create on update), 422 (no resourceVersion), 409, 400
 */
export function updateWithStrategy(
  store: ClusterStoreImpl,
  served: ServedResource,
  namespace: string | undefined,
  name: string,
  object: KubeObject,
  strategy: UpdateStrategy,
  manager: string,
): { readonly entry: StoredObject; readonly created: boolean } {
  const resource = served.resource;
  const existing = store.get(resource, resource.namespaced ? (namespace ?? object.metadata.namespace) : undefined, name);
  const sameName = object.metadata.name === '' || object.metadata.name === name;
  if (existing === undefined && strategy.allowCreateOnUpdate && sameName) {
    // store.go wipes the system fields of a create-on-update; the stored resourceVersion is new.
    const { resourceVersion: _ignored, uid: _uid, creationTimestamp: _created, ...metadata } = object.metadata;
    return { entry: createObject(store, served, namespace, { ...object, metadata: { ...metadata, name } }, manager), created: true };
  }
  const resourceVersion = object.metadata.resourceVersion;
  if (existing !== undefined && !strategy.allowUnconditionalUpdate && (resourceVersion === undefined || resourceVersion === '' || resourceVersion === '0')) {
    // store.go: field.Invalid(metadata.resourceVersion, 0, "must be specified for an update"), with the resource as the kind.
    throw new ApiStatusError(
      invalid(resource.plural, resource.group, name, [{ type: 'FieldValueInvalid', field: 'metadata.resourceVersion', body: 'Invalid value: 0: must be specified for an update' }]),
    );
  }
  return { entry: updateObject(store, served, namespace, name, object, undefined, manager), created: false };
}
