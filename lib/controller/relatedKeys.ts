import type { KubeObject, OwnerReference } from '../base/object';
import type { Resource } from '../resources/resource';

/**
 * Mappers from a related object to the keys of the primaries it stands for, for the controller
 * builder's `watches` (and behind its `owns`): by owner reference, or by a label that names the
 * primary. Each is O(references) or O(1) per object and never throws on malformed metadata.
 */

/** Options of {@link ownerKeys}. */
export interface OwnerKeysOptions {
  /**
   * Only the reference marked `controller: true` (at most one per object), as controller-runtime's
   * `Owns` (`OnlyControllerOwner`) does. Default true; false takes every reference to the owner's
   * kind, as kube-runtime's `owns` does.
   */
  readonly onlyController?: boolean;
}

/**
 * The keys of an object's owners of one kind: the owner references whose `apiVersion` names the
 * owner resource's group (any version of it: a reference written as `example.com/v1beta1` names
 * the same Widget) and whose `kind` is its kind. A namespaced owner lives in its child's namespace
 * (`namespace/name`: Kubernetes allows no owner in another namespace), a cluster-scoped one is
 * keyed by its name alone, whatever the child's namespace (kube-rs #293); a cluster-scoped child
 * has no namespaced owner.
 *
 * ## Example
 * ```ts
 * import { configMaps, deployments, type ConfigMap } from 'rx-informer';
 * import { ownerKeys } from 'rx-informer/controller';
 *
 * declare const configMap: ConfigMap;
 * const deploymentKeys = [...ownerKeys(deployments)(configMap)]; // ['shop/web'] for a ConfigMap a Deployment controls
 * ```
 *
 * @param owner the owners' resource.
 * @param options whether only the controller reference counts.
 * @returns a mapper from an object to its owners' keys.
 */
export function ownerKeys(owner: Resource<KubeObject>, options: OwnerKeysOptions = {}): (object: KubeObject) => Iterable<string> {
  const onlyController = options.onlyController ?? true;
  return (object) => {
    const references: unknown = object.metadata.ownerReferences;
    if (!Array.isArray(references)) return [];
    const namespace = object.metadata.namespace;
    if (owner.namespaced && (namespace === undefined || namespace === '')) return [];
    const keys: string[] = [];
    for (const reference of references as readonly unknown[]) {
      if (!isReference(reference) || !names(reference, owner)) continue;
      if (onlyController && reference.controller !== true) continue;
      keys.push(owner.namespaced ? `${namespace}/${reference.name}` : reference.name);
    }
    return keys;
  };
}

/**
 * The key of the primary a label names: an object labelled `example.com/widget: a` stands for
 * the Widget `a`, in the object's namespace when Widgets are namespaced. Objects without the
 * label, or with an empty value, stand for none.
 *
 * ## Example
 * ```ts
 * import { defineResource, pods, type Pod } from 'rx-informer';
 * import { labelKeys } from 'rx-informer/controller';
 *
 * const widgets = defineResource({ group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget', namespaced: true });
 * declare const pod: Pod;
 * const widgetKeys = [...labelKeys(widgets, 'example.com/widget')(pod)]; // ['shop/a'] for a pod labelled example.com/widget=a in shop
 * ```
 *
 * @param primary the resource the label names objects of.
 * @param label the label key whose value is the primary's name.
 * @returns a mapper from an object to at most one key.
 */
export function labelKeys(primary: Resource<KubeObject>, label: string): (object: KubeObject) => Iterable<string> {
  return (object) => {
    const labels = object.metadata.labels;
    const name: unknown = labels !== undefined && labels !== null && Object.prototype.hasOwnProperty.call(labels, label) ? labels[label] : undefined;
    if (typeof name !== 'string' || name === '') return [];
    if (!primary.namespaced) return [name];
    const namespace = object.metadata.namespace;
    return namespace === undefined || namespace === '' ? [] : [`${namespace}/${name}`];
  };
}

function isReference(value: unknown): value is OwnerReference {
  if (typeof value !== 'object' || value === null) return false;
  const { apiVersion, kind, name } = value as Partial<Record<keyof OwnerReference, unknown>>;
  return typeof apiVersion === 'string' && typeof kind === 'string' && typeof name === 'string' && name !== '';
}

/** Whether a reference names an object of `owner`'s group and kind (`v1` is the core group; `apps/v1` the group `apps`). */
function names(reference: OwnerReference, owner: Resource<KubeObject>): boolean {
  if (reference.kind !== owner.kind) return false;
  const slash = reference.apiVersion.indexOf('/');
  const group = slash < 0 ? '' : reference.apiVersion.slice(0, slash);
  // A version with a second '/' is malformed: it names nothing.
  return group === owner.group && reference.apiVersion.indexOf('/', slash + 1) < 0;
}
