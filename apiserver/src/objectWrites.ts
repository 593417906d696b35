import type { KubeObject, Resource } from 'rx-informer';
import type { ServedResource } from './builtinResources';
import type { ClusterStoreImpl } from './clusterStore';
import { coreEventOf } from './eventConversion';
import { validateEventCreate, validateEventUpdate, type EventsVersion } from './eventValidation';
import type { StoredObject } from './history';
import { updateFields } from './managedFields';
import { fieldManagerScope, generationChanged, prepareForUpdate } from './registryStrategy';
import { ApiStatusError, badRequest, forbiddenField, invalid, invalidField, requiredField, tooLongField, type FieldError } from './status';

/**
 * The last steps every write takes, whichever verb made the object: who the field manager records
 * (the `fieldManager` query parameter, or the client's User-Agent), the checks of the request's
 * options, the name and namespace checks, the kind's strategy (`registryStrategy.ts`) and
 * validation, then the store.
 */

/** `validation.FieldManagerMaxLength`. */
const FIELD_MANAGER_MAX_LENGTH = 128;

/** Whether a character is printable, as Go's `unicode.IsPrint` decides (letters, marks, numbers, punctuation, symbols, and the ASCII space). */
function isPrint(char: string): boolean {
  return char === ' ' || /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(char);
}

/**
 * `managerOrUserAgent`: the `fieldManager` parameter, else the User-Agent up to its first `/`
 * without unprintable characters, cut to the longest field manager allowed (`kubectl/v1.32.4 (linux/amd64)` is `kubectl`).
 */
export function managerOf(fieldManager: string | undefined, userAgent: string | undefined): string {
  if (fieldManager !== undefined && fieldManager !== '') return fieldManager;
  let out = '';
  for (const char of (userAgent ?? '').split('/')[0]!) {
    if (!isPrint(char)) continue;
    if (Buffer.byteLength(out + char) > FIELD_MANAGER_MAX_LENGTH) break;
    out += char;
  }
  return out;
}

/** Which options a write was given, named as the Status names them. */
export type OptionsKind = 'CreateOptions' | 'UpdateOptions' | 'PatchOptions';

/**
 * `ValidateCreateOptions`, `ValidateUpdateOptions`, `ValidatePatchOptions`: the field manager's
 * length and characters; for a patch, `force` only with apply, and apply only with a field manager.
 * @throws ApiStatusError 422 `<kind>.meta.k8s.io "" is invalid`
 */
export function checkWriteOptions(kind: OptionsKind, query: Readonly<Record<string, string>>, apply = false): void {
  const errors: FieldError[] = [];
  const manager = query['fieldManager'] ?? '';
  if (kind === 'PatchOptions') {
    if (!apply && query['force'] !== undefined) errors.push(forbiddenField('force', 'may not be specified for non-apply patch'));
    // This field is defaulted to "kubectl" by kubectl, but HAS TO be explicitly set by controllers.
    if (apply && manager === '') errors.push(requiredField('fieldManager', 'is required for apply patch'));
  }
  if (Buffer.byteLength(manager) > FIELD_MANAGER_MAX_LENGTH) errors.push(tooLongField('fieldManager', FIELD_MANAGER_MAX_LENGTH));
  [...manager].forEach((char, index) => {
    if (!isPrint(char)) {
      const code = `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
      errors.push(invalidField('fieldManager', JSON.stringify(manager), `invalid character ${code} (at position ${index})`));
    }
  });
  if (errors.length > 0) throw new ApiStatusError(invalid(kind, 'meta.k8s.io', '', errors));
}

/**
 * The namespace and name checks of a patched or applied object (`EnsureObjectNamespaceMatchesRequestNamespace`,
 * then `checkName`): a missing namespace becomes the request's, another one or another name is refused.
 * @throws ApiStatusError 400
 */
export function checkWrite(resource: Resource<KubeObject>, namespace: string | undefined, name: string, object: KubeObject): KubeObject {
  const metadata: unknown = object.metadata;
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) throw new ApiStatusError(badRequest('metadata must be an object'));
  const meta = metadata as Record<string, unknown>;
  let checked = object;
  if (resource.namespaced) {
    const objectNamespace = meta['namespace'];
    if (objectNamespace !== undefined && objectNamespace !== '' && objectNamespace !== namespace) {
      throw new ApiStatusError(badRequest('the namespace of the provided object does not match the namespace sent on the request'));
    }
    checked = { ...object, metadata: { ...object.metadata, namespace } };
  }
  if (meta['name'] !== name) {
    throw new ApiStatusError(badRequest(`the name of the object (${String(meta['name'] ?? '')}) does not match the name on the URL (${name})`));
  }
  return checked;
}

/** The version an Event is written through, or undefined for another kind. */
function eventsVersionOf(resource: Resource<KubeObject>): EventsVersion | undefined {
  if (resource.plural !== 'events') return undefined;
  if (resource.group === '') return 'v1';
  return resource.group === 'events.k8s.io' ? 'events.k8s.io/v1' : undefined;
}

/** Throws the kind's validation errors as the API server's 422. */
function throwInvalid(resource: Resource<KubeObject>, name: string, errors: readonly FieldError[]): void {
  if (errors.length > 0) throw new ApiStatusError(invalid(resource.kind, resource.group, name, errors));
}

/** The core form of an Event of either version. */
function coreForm(version: EventsVersion, object: KubeObject): KubeObject {
  return version === 'v1' ? object : coreEventOf(object);
}

/**
 * Stores a new object, after the kind's validation (the object is namespaced and managed already).
 * @throws ApiStatusError 409 AlreadyExists, 422
 */
export function storeCreate(store: ClusterStoreImpl, served: ServedResource, object: KubeObject): StoredObject {
  const version = eventsVersionOf(served.resource);
  if (version !== undefined) throwInvalid(served.resource, object.metadata.name, validateEventCreate(coreForm(version, object), object.metadata.namespace ?? '', version));
  return store.createEntry(served.resource, object);
}

/**
 * Stores an update of `existing` to `next` (managed already) through the object or its status:
 * the kind's `PrepareForUpdate`, validation and generation rule.
 * @throws ApiStatusError 404, 409 for a stale resourceVersion, 422
 */
export function storeUpdate(store: ClusterStoreImpl, served: ServedResource, subresource: 'status' | undefined, existing: KubeObject, next: KubeObject): StoredObject {
  const prepared = prepareForUpdate(served, next, existing, subresource);
  const version = eventsVersionOf(served.resource);
  if (version !== undefined) {
    throwInvalid(served.resource, prepared.metadata.name, validateEventUpdate(coreForm(version, prepared), coreForm(version, existing), existing.metadata.namespace ?? '', version));
  }
  return store.updateEntry(served.resource, prepared, subresource === undefined ? generationChanged(served.resource, prepared, existing) : undefined);
}

/** A create (POST, or a PUT that creates) by `manager`: its managed fields, then {@link storeCreate}. */
export function createWithManager(store: ClusterStoreImpl, served: ServedResource, object: KubeObject, manager: string): StoredObject {
  return storeCreate(store, served, updateFields(fieldManagerScope(served, undefined), undefined, object, manager));
}

/** An update (PUT, or a non-apply PATCH) by `manager`: its managed fields, then {@link storeUpdate}. */
export function updateWithManager(store: ClusterStoreImpl, served: ServedResource, subresource: 'status' | undefined, existing: KubeObject, next: KubeObject, manager: string): StoredObject {
  return storeUpdate(store, served, subresource, existing, updateFields(fieldManagerScope(served, subresource), existing, next, manager));
}
