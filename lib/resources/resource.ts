import type { KubeObject } from '../store/object';

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

/** Where a request goes: all namespaces (undefined), or one. */
export interface ResourceScope {
  readonly namespace?: string;
  readonly name?: string;
}

/**
 * The URL path of a resource collection or object, as in PROTOCOL.md B.1.
 * Namespace and name are percent-encoded, so hostile names cannot change the path.
 */
export function resourcePath(resource: Resource<KubeObject>, scope: ResourceScope = {}): string {
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

/** Describes a resource not built in, typically a custom resource. */
export function defineResource<T extends KubeObject = KubeObject>(descriptor: Omit<Resource<T>, '__object'>): Resource<T> {
  return Object.freeze({ ...descriptor });
}
