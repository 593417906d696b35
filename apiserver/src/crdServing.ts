import { customResourceDefinitions, defineResource, type CustomResourceDefinition, type KubeObject, type Resource } from 'rx-informer';
import type { ServedResource } from './builtinResources';
import { ApiStatusError, invalid, type FieldError } from './status';

/**
 * What a CustomResourceDefinition is to the loopback server, as pure functions: how it is checked
 * and defaulted when created, which resources it serves once established, and the conditions its
 * controllers write (apiextensions-apiserver, as named beside each rule).
 */

/** The finalizer the CRD registry adds on the first DELETE (`registry/customresourcedefinition/etcd.go`). */
export const CRD_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

/** A condition of a CRD's status. */
export type CrdCondition = NonNullable<NonNullable<CustomResourceDefinition['status']>['conditions']>[number];

/** The condition types the controllers write. */
export type CrdConditionType = 'NamesAccepted' | 'Established' | 'Terminating';

/**
 * The verbs of a custom resource (apiextensions `customresource_discovery_controller.go`), less
 * `deletecollection`, which the loopback server does not serve; while its CRD is terminating,
 * only those that read or delete.
 */
const CUSTOM_RESOURCE_VERBS = ['delete', 'get', 'list', 'patch', 'create', 'update', 'watch'] as const;
const TERMINATING_VERBS = ['delete', 'get', 'list', 'watch'] as const;

/** How the loopback server serves CustomResourceDefinitions themselves, beside the built-ins. */
export const CUSTOM_RESOURCE_DEFINITIONS_SERVED: ServedResource = Object.freeze({
  resource: customResourceDefinitions,
  singularName: 'customresourcedefinition',
  shortNames: ['crd', 'crds'],
  verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  extraFieldLabels: [],
  categories: ['api-extensions'],
  statusSubresource: true,
});

/** Whether `resource` is `apiextensions.k8s.io` `customresourcedefinitions`. */
export function isCustomResourceDefinitions(resource: Resource<KubeObject>): boolean {
  return resource.group === 'apiextensions.k8s.io' && resource.plural === 'customresourcedefinitions';
}

function requiredField(field: string): FieldError {
  return { type: 'FieldValueRequired', field, body: 'Required value' };
}

function invalidField(field: string, value: string, detail: string): FieldError {
  return { type: 'FieldValueInvalid', field, body: `Invalid value: ${JSON.stringify(value)}: ${detail}` };
}

/**
 * A CRD as the registry stores it on create: checked as far as the loopback server relies on it
 * (`apis/apiextensions/validation/validation.go`: the name is `<plural>.<group>`, group, names and
 * scope are given, one version is the storage version), defaulted (`v1/defaults.go`: the singular
 * is the lower-case kind, the list kind `<Kind>List`), its status replaced by the stored versions
 * (`strategy.go`, `PrepareForCreate`).
 *
 * @throws ApiStatusError 422 Invalid, worded as the API server words it.
 */
export function crdForCreate(object: KubeObject): KubeObject {
  const crd = object as CustomResourceDefinition;
  const spec = crd.spec ?? ({} as Partial<CustomResourceDefinition['spec']>);
  const names = spec.names ?? ({} as Partial<CustomResourceDefinition['spec']['names']>);
  const name = crd.metadata.name ?? '';
  const errors: FieldError[] = [];
  if (spec.group === undefined || spec.group === '') errors.push(requiredField('spec.group'));
  if (names.plural === undefined || names.plural === '') errors.push(requiredField('spec.names.plural'));
  if (names.kind === undefined || names.kind === '') errors.push(requiredField('spec.names.kind'));
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') {
    errors.push({ type: 'FieldValueNotSupported', field: 'spec.scope', body: `Unsupported value: ${JSON.stringify(spec.scope ?? '')}: supported values: "Cluster", "Namespaced"` });
  }
  const storage = (spec.versions ?? []).filter((version) => version.storage);
  if (storage.length !== 1) errors.push({ type: 'FieldValueInvalid', field: 'spec.versions', body: 'Invalid value: must have exactly one version marked as storage version' });
  if (names.plural && spec.group && name !== `${names.plural}.${spec.group}`) errors.push(invalidField('metadata.name', name, 'must be spec.names.plural+"."+spec.group'));
  if (errors.length > 0) throw new ApiStatusError(invalid('CustomResourceDefinition', 'apiextensions.k8s.io', name, errors));
  const kind = names.kind!;
  const defaulted: CustomResourceDefinition = {
    ...crd,
    spec: { ...crd.spec, names: { ...names, singular: names.singular || kind.toLowerCase(), listKind: names.listKind || `${kind}List`, plural: names.plural!, kind } },
    status: { acceptedNames: { plural: '', kind: '' }, storedVersions: storage.map((version) => version.name) },
  };
  return defaulted;
}

/** Whether the condition of `type` is true. */
export function isConditionTrue(crd: CustomResourceDefinition, type: CrdConditionType): boolean {
  return (crd.status?.conditions ?? []).some((condition) => condition.type === type && condition.status === 'True');
}

/**
 * The conditions with `condition` set (`apihelpers.SetCRDCondition`): the transition time moves
 * only when the status changes.
 */
export function withCondition(crd: CustomResourceDefinition, condition: Omit<CrdCondition, 'lastTransitionTime'>, now: string): CustomResourceDefinition {
  const conditions = crd.status?.conditions ?? [];
  const existing = conditions.find((c) => c.type === condition.type);
  const next: CrdCondition = { ...condition, lastTransitionTime: existing !== undefined && existing.status === condition.status ? existing.lastTransitionTime : now };
  const updated = existing === undefined ? [...conditions, next] : conditions.map((c) => (c === existing ? next : c));
  return { ...crd, status: { ...(crd.status ?? { acceptedNames: { plural: '', kind: '' } }), conditions: updated } };
}

/**
 * What the naming controller writes (`controller/status/naming_controller.go`): the names taken
 * from the spec (the loopback server accepts every name: it checks no conflicts), `NamesAccepted`
 * true and, until the establishing controller runs, `Established` false "Installing".
 */
export function namesAccepted(crd: CustomResourceDefinition, now: string): CustomResourceDefinition {
  const named = { ...crd, status: { ...crd.status!, acceptedNames: crd.spec.names } };
  const accepted = withCondition(named, { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' }, now);
  if (isConditionTrue(crd, 'Established')) return accepted;
  return withCondition(accepted, { type: 'Established', status: 'False', reason: 'Installing', message: 'the initial names have been accepted' }, now);
}

/** What the establishing controller writes (`controller/establish/establishing_controller.go`). */
export function established(crd: CustomResourceDefinition, now: string): CustomResourceDefinition {
  return withCondition(crd, { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' }, now);
}

/**
 * The resources an established CRD serves: one per served version, named by its accepted names,
 * with its field selectors (`selectableFields`, 1.30+) and the `status` subresource when declared.
 */
export function servedByCrd(crd: CustomResourceDefinition): ServedResource[] {
  const names = crd.status?.acceptedNames;
  if (names === undefined || names.plural === '' || names.kind === '') return [];
  const verbs = isConditionTrue(crd, 'Terminating') ? TERMINATING_VERBS : CUSTOM_RESOURCE_VERBS;
  return crd.spec.versions
    .filter((version) => version.served)
    .map((version): ServedResource => {
      const resource = defineResource({ group: crd.spec.group, version: version.name, plural: names.plural, kind: names.kind, namespaced: crd.spec.scope === 'Namespaced' });
      const selectable = ((version as { selectableFields?: readonly { readonly jsonPath: string }[] }).selectableFields ?? []).map((field) => field.jsonPath.replace(/^\./, ''));
      return {
        resource,
        singularName: names.singular || names.kind.toLowerCase(),
        shortNames: names.shortNames ?? [],
        verbs,
        extraFieldLabels: selectable,
        categories: names.categories ?? [],
        statusSubresource: version.subresources?.status !== undefined,
        crd: crd.metadata.name,
      };
    });
}

/** The descriptor of the version a CRD stores its objects in: the one its cleanup lists and deletes through. */
export function storageResourceOf(crd: CustomResourceDefinition): Resource<KubeObject> {
  const storage = crd.spec.versions.find((version) => version.storage) ?? crd.spec.versions[0]!;
  const names = crd.status?.acceptedNames?.plural ? crd.status.acceptedNames : crd.spec.names;
  return defineResource({ group: crd.spec.group, version: storage.name, plural: names.plural, kind: names.kind, namespaced: crd.spec.scope === 'Namespaced' });
}
