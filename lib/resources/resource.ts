import type { KubeObject, ObjectMeta } from '../base/object';

/**
 * Names a Kubernetes resource type: enough to build its URLs. `T` is the object type it yields,
 * carried for type inference only.
 */
export interface Resource<T extends KubeObject = KubeObject> {
  /** API group; '' for the core group. */
  readonly group: string;
  readonly version: string;
  /** The plural, lower-case resource name used in URLs (`pods`). */
  readonly plural: string;
  readonly kind: string;
  readonly namespaced: boolean;
  /** Phantom field: never set at run time; lets `informer(kc, pods)` infer `Pod`. */
  readonly __object?: T;
}

/** Where `resourcePath` points: all namespaces (no `namespace`) or one, the collection (no `name`) or one object. */
export interface ResourcePathOptions {
  readonly namespace?: string;
  readonly name?: string;
}

/**
 * The URL path of a resource collection or object, as in PROTOCOL.md B.1.
 * Namespace and name are percent-encoded, so hostile names cannot change the path.
 */
export function resourcePath(resource: Resource<KubeObject>, scope: ResourcePathOptions = {}): string {
  const prefix = resource.group === '' ? `/api/${resource.version}` : `/apis/${resource.group}/${resource.version}`;
  const ns =
    resource.namespaced && scope.namespace !== undefined && scope.namespace !== ''
      ? `/namespaces/${encodeURIComponent(scope.namespace)}`
      : '';
  const name = scope.name !== undefined ? `/${encodeURIComponent(scope.name)}` : '';
  return `${prefix}${ns}/${resource.plural}${name}`;
}

/** The apiVersion string of a resource (`v1`, `apps/v1`). */
export function apiVersionOf(resource: Resource<KubeObject>): string {
  return resource.group === '' ? resource.version : `${resource.group}/${resource.version}`;
}

/**
 * A JSON value as `JSON.parse` gives it for a declared type `T`: what a model class types as `Date`
 * (client-node's timestamps) is a string on the wire. Everything else keeps its type.
 */
export type WireJson<T> = T extends Date
  ? string
  : T extends readonly (infer Item)[]
    ? WireJson<Item>[]
    : T extends object
      ? { [K in keyof T]: WireJson<T[K]> }
      : T;

/**
 * An object of type `T` as the API server sends it and the cache holds it: plain JSON
 * ({@link WireJson}: timestamps are strings), with `metadata` and its `name`, which every served
 * object has, present. A type that already extends {@link KubeObject} is kept as it is; any other
 * object type with an optional `metadata` (client-node's `V1Pod`, kubernetes-types' `Pod`) is
 * made to fit.
 */
export type WireObject<T extends { readonly metadata?: object }> = T extends KubeObject
  ? T
  : Omit<WireJson<T>, 'metadata'> & {
      readonly apiVersion?: string;
      readonly kind?: string;
      readonly metadata: ObjectMeta & WireJson<NonNullable<T['metadata']>>;
    };

/**
 * Describes a resource not built in, typically a custom resource. `T` is the object type: your
 * own (`interface Widget extends KubeObject { ... }`), or any type with an optional `metadata`
 * (client-node's `V1Pod`, a kubernetes-types type), which the cache types as {@link WireObject}.
 *
 * ## Example
 * ```ts
 * import type { V1ConfigMap } from '@kubernetes/client-node';
 * import { defineResource, type KubeObject } from 'rx-informer';
 *
 * interface Widget extends KubeObject {
 *   readonly spec?: { readonly size?: number };
 * }
 * const widgets = defineResource<Widget>({ group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget', namespaced: true });
 * // client-node's model types work too; timestamps become strings, as on the wire.
 * const configMaps = defineResource<V1ConfigMap>({ group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true });
 * ```
 */
export function defineResource<T extends { readonly metadata?: object } = KubeObject>(descriptor: Omit<Resource, '__object'>): Resource<WireObject<T>> {
  return Object.freeze({ ...descriptor });
}
