import type { KubeObject, ObjectMeta } from '../base/object';

/**
 * Metadata-only objects: what `informer(kubeConfig, resource, { metadataOnly: true })` caches.
 *
 * The API server converts any object to a `meta.k8s.io/v1` `PartialObjectMetadata` when the
 * request's Accept asks for it (`;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`): the object keeps
 * its whole `metadata` (labels, annotations, ownerReferences, finalizers, managedFields ...) and
 * loses `spec`, `status` and every other field, and its own `kind` and `apiVersion` (apimachinery
 * `meta.AsPartialObjectMetadata`; apiserver `endpoints/handlers/response.go`).
 */

/** The apiVersion of every metadata-only object. */
export const PARTIAL_OBJECT_METADATA_API_VERSION = 'meta.k8s.io/v1';

/**
 * An object reduced to its metadata, as `metadataOnly` informers cache it:
 *
 * ```json
 * { "apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata",
 *   "metadata": { "name": "web-1", "namespace": "default", "uid": "…", "resourceVersion": "…",
 *                 "labels": { … }, "annotations": { … }, "ownerReferences": [ … ], … } }
 * ```
 *
 * `kind` and `apiVersion` name the metadata type, not the resource: the resource is the one the
 * informer was made for (its descriptor's `kind`). `metadata` is the object's whole `ObjectMeta`
 * as the server sent it, without `managedFields` unless the informer keeps them. Nothing else is
 * there: no `spec`, no `status`.
 */
export interface PartialObjectMetadata extends KubeObject {
  readonly apiVersion: 'meta.k8s.io/v1';
  readonly kind: 'PartialObjectMetadata';
  readonly metadata: ObjectMeta;
}

/**
 * What a metadata-only informer keeps of each object's metadata. All optional.
 *
 * ## Example
 * ```ts
 * import type { KubeConfig } from '@kubernetes/client-node';
 * import { informer, pods, type MetadataOnlyOptions } from 'rx-informer';
 *
 * declare const kubeConfig: KubeConfig;
 * const lean: MetadataOnlyOptions = { dropAnnotations: ['kubectl.kubernetes.io/last-applied-configuration'] };
 * const podMetadata = informer(kubeConfig, pods, { metadataOnly: lean });
 * ```
 */
export interface MetadataOnlyOptions {
  /**
   * Keep `metadata.managedFields`. Default false: the server-side-apply bookkeeping is often half
   * of an object's metadata, informers rarely read it, and the API server sends it even in
   * metadata-only answers (client-go users drop it with a transform).
   */
  readonly keepManagedFields?: boolean;
  /**
   * Annotations to leave out of the cache, such as `kubectl.kubernetes.io/last-applied-configuration`
   * (a copy of the whole object as last applied, kilobytes each). Default none. Never write a cached
   * object back whole when you drop annotations: the write would delete them on the server.
   */
  readonly dropAnnotations?: readonly string[];
}

/**
 * The `Accept` header of a metadata-only list: client-go's metadata client's
 * (`metadata/metadata.go`) without its protobuf clause, since rx-informer decodes JSON only. The
 * last clause, plain JSON, is the fallback of a server that cannot convert (before 1.15 for
 * `meta.k8s.io/v1`, or an aggregated API server that does not): it answers whole objects, and
 * the informer reduces them to metadata itself.
 */
export const METADATA_LIST_ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';

/**
 * The `Accept` header of a metadata-only watch (and GET): the singular kind, since each watch event
 * carries one object. A list asked for with it, or a GET asked for with the list's, is a 406.
 */
export const METADATA_ACCEPT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

/**
 * Reduces an object to its metadata, as the API server's conversion does, whether the server sent
 * a PartialObjectMetadata or, falling back, the whole object: the cache holds the same either way.
 * `managedFields` and the annotations `options` names are left out. The result is a new object;
 * its `metadata` is shared with the input when nothing is left out of it.
 *
 * ## Example
 * ```ts
 * toPartialObjectMetadata({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a', managedFields: [] }, spec: {} });
 * // { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: { name: 'a' } }
 * ```
 * @param object an object as the server sent it: converted or whole.
 * @param options what to leave out of its metadata; default: managedFields only.
 */
export function toPartialObjectMetadata(object: KubeObject, options: MetadataOnlyOptions = {}): PartialObjectMetadata {
  return { apiVersion: PARTIAL_OBJECT_METADATA_API_VERSION, kind: 'PartialObjectMetadata', metadata: leanMetadata(object.metadata, options) };
}

function leanMetadata(metadata: ObjectMeta, options: MetadataOnlyOptions): ObjectMeta {
  const dropManaged = options.keepManagedFields !== true && metadata.managedFields !== undefined;
  const dropped = options.dropAnnotations;
  const annotations = metadata.annotations;
  const dropAnnotations = dropped !== undefined && annotations !== undefined && dropped.some((key) => Object.hasOwn(annotations, key));
  if (!dropManaged && !dropAnnotations) return metadata;
  // A rest copy, not `delete`: deleting a property would turn the object into a slow, larger dictionary.
  const { managedFields, ...rest } = metadata;
  const lean: { -readonly [K in keyof ObjectMeta]: ObjectMeta[K] } = rest;
  if (!dropManaged && managedFields !== undefined) lean.managedFields = managedFields;
  if (dropAnnotations) lean.annotations = withoutKeys(annotations, dropped);
  return lean;
}

function withoutKeys(record: Readonly<Record<string, string>>, keys: readonly string[]): Readonly<Record<string, string>> {
  const kept: Record<string, string> = {};
  for (const key of Object.keys(record)) if (!keys.includes(key)) kept[key] = record[key]!;
  return kept;
}
