import type { KubeObject, Resource } from 'rx-informer';
import { apiVersionOf } from 'rx-informer';
import { isCustomResource, resourceId, type ServedResource } from './builtinResources';
import { field, FieldSet } from './fieldPath';
import { rootTypeOf } from './fieldTypes';
import type { FieldManagerScope } from './managedFields';
import { jsonEqual } from './typedValue';

/**
 * What the API server's registry strategies do to a write, per kind (kubernetes
 * `pkg/registry/<group>/<kind>/strategy.go`, apiextensions-apiserver
 * `pkg/registry/customresource/strategy.go` and `status_strategy.go`):
 *
 * - `PrepareForUpdate` of a resource with a status subresource keeps the stored `status`: a PUT or
 *   PATCH of the object cannot change it, and writes through `/status` change only it (with the
 *   metadata each kind lets through: a pod's labels and annotations, not its ownerReferences);
 * - `metadata.generation` moves on a change of the spec (a Deployment's annotations too, a custom
 *   resource's anything but metadata and status);
 * - `GetResetFields`: what each endpoint resets, which nobody owns through it (`managedFields.ts`);
 * - the object an empty `New()` of the kind serializes to, what the field manager compares a
 *   create against.
 *
 * Creates keep the status they are given (the API server's `PrepareForCreate` resets most kinds'),
 * so that a test can create an object in the state it needs over HTTP as through the store.
 */

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const SPEC = [field('spec')];
const STATUS = [field('status')];

/** The reset fields of the status endpoint, per kind (`statusStrategy.GetResetFields`). */
const STATUS_RESET_FIELDS: Readonly<Record<string, FieldSet>> = {
  '/pods': FieldSet.of(SPEC, [field('metadata'), field('deletionTimestamp')], [field('metadata'), field('ownerReferences')]),
  'apps/deployments': FieldSet.of(SPEC, [field('metadata'), field('labels')]),
};

/** What `/status` keeps of the stored metadata, per kind (`PrepareForUpdate` of the status strategies). */
const STATUS_KEEPS_METADATA: Readonly<Record<string, readonly string[]>> = {
  '/pods': ['ownerReferences'],
  'apps/deployments': ['labels'],
};

/** Empty `New()` objects of the kinds served, as the field manager sees them (non-pointer structs are `{}`, nil slices null). */
const EMPTY_OBJECTS: Readonly<Record<string, () => Json>> = {
  '/pods': () => ({ metadata: { creationTimestamp: null }, spec: { containers: null }, status: {} }),
  'apps/deployments': () => ({
    metadata: { creationTimestamp: null },
    spec: { selector: null, template: { metadata: { creationTimestamp: null }, spec: { containers: null } }, strategy: {} },
    status: {},
  }),
  '/services': () => ({ metadata: { creationTimestamp: null }, spec: {}, status: { loadBalancer: {} } }),
  'coordination.k8s.io/leases': () => ({ metadata: { creationTimestamp: null }, spec: {} }),
  '/events': () => ({ metadata: { creationTimestamp: null }, involvedObject: {}, source: {}, firstTimestamp: null, lastTimestamp: null, eventTime: null, reportingComponent: '', reportingInstance: '' }),
  'events.k8s.io/events': () => ({ metadata: { creationTimestamp: null }, eventTime: null, regarding: {}, deprecatedSource: {}, deprecatedFirstTimestamp: null, deprecatedLastTimestamp: null }),
};

/** The empty object of a kind: an unstructured one for custom resources (only apiVersion and kind). */
function emptyObjectOf(served: ServedResource): () => Json {
  const resource = served.resource;
  const typeMeta = { apiVersion: apiVersionOf(resource), kind: resource.kind };
  if (isCustomResource(resource)) return () => ({ ...typeMeta });
  const known = EMPTY_OBJECTS[resourceId(resource)];
  if (known !== undefined) return () => ({ ...typeMeta, ...known() });
  return () => ({ ...typeMeta, metadata: { creationTimestamp: null }, ...(served.statusSubresource ? { spec: {}, status: {} } : {}) });
}

/** The fields an endpoint resets, which no manager owns through it (`GetResetFields`). */
export function resetFieldsOf(served: ServedResource, subresource: 'status' | undefined): FieldSet {
  if (!served.statusSubresource) return new FieldSet();
  if (subresource === undefined) return FieldSet.of(STATUS);
  // status_strategy.go resets only spec: the metadata its PrepareForUpdate drops is not in the set,
  // so an applier through /status is recorded owning the labels it sent though none is stored.
  if (isCustomResource(served.resource)) return FieldSet.of(SPEC);
  return STATUS_RESET_FIELDS[resourceId(served.resource)] ?? FieldSet.of(SPEC);
}

function now(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Everything the field manager needs for writes to `served` through the object or its `/status`. */
export function fieldManagerScope(served: ServedResource, subresource: 'status' | undefined): FieldManagerScope {
  const resource = served.resource;
  return {
    type: rootTypeOf(resource),
    apiVersion: apiVersionOf(resource),
    kind: resource.kind,
    subresource,
    resetFields: resetFieldsOf(served, subresource),
    emptyObject: emptyObjectOf(served),
    now,
  };
}

function withMember(object: Json, name: string, value: unknown): Json {
  const { [name]: _old, ...rest } = object;
  return value === undefined ? rest : { ...rest, [name]: value };
}

/**
 * `PrepareForUpdate`: the object an update stores, from what the request asked for (`next`, its
 * managed fields already computed) and the stored object. The resourceVersion is always the
 * request's: it is the precondition the store checks.
 */
export function prepareForUpdate(served: ServedResource, next: KubeObject, old: KubeObject, subresource: 'status' | undefined): KubeObject {
  const request = next as unknown as Json;
  const stored = old as unknown as Json;
  if (!served.statusSubresource) return next;
  if (subresource === undefined) return withMember(request, 'status', stored['status']) as unknown as KubeObject;
  const resource = served.resource;
  const requestMeta = isObject(request['metadata']) ? request['metadata'] : {};
  const storedMeta = isObject(stored['metadata']) ? stored['metadata'] : {};
  let metadata: Json;
  if (isCustomResource(resource)) {
    // status_strategy.go: the stored object with the request's status (and managed fields).
    metadata = withMember(withMember(storedMeta, 'managedFields', requestMeta['managedFields']), 'resourceVersion', requestMeta['resourceVersion']);
  } else {
    metadata = requestMeta;
    for (const name of STATUS_KEEPS_METADATA[resourceId(resource)] ?? []) metadata = withMember(metadata, name, storedMeta[name]);
  }
  let out: Json = { ...stored, metadata };
  out = withMember(out, 'status', request['status']);
  return out as unknown as KubeObject;
}

function withoutMetadata(object: KubeObject): Json {
  const { metadata: _metadata, apiVersion: _apiVersion, kind: _kind, ...rest } = object as unknown as Json;
  return rest;
}

/**
 * Whether a main-resource update moves `metadata.generation`, when the kind's rule is not the
 * store's own (a change of spec): Deployments count their annotations too (they are copied to
 * ReplicaSets), custom resources anything but metadata. Undefined leaves it to the store.
 */
export function generationChanged(resource: Resource<KubeObject>, next: KubeObject, old: KubeObject): boolean | undefined {
  if (isCustomResource(resource)) return !jsonEqual(withoutMetadata(next), withoutMetadata(old));
  if (resourceId(resource) === 'apps/deployments') {
    const spec = (o: KubeObject): unknown => (o as unknown as Json)['spec'];
    return !jsonEqual(spec(next), spec(old)) || !jsonEqual(next.metadata.annotations ?? {}, old.metadata.annotations ?? {});
  }
  return undefined;
}
