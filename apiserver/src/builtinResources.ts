import type { KubeObject } from 'rx-informer';
import { defineResource, type Resource } from 'rx-informer';
import { configMaps, deployments, events, eventsV1, leases, namespaces, nodes, pods, secrets, services } from 'rx-informer';

/** The custom resource the loopback server serves beside the built-ins: `example.com/v1` Widget. */
export interface Widget extends KubeObject {
  readonly spec?: { readonly size?: number; readonly color?: string };
}

/** `example.com/v1 widgets`, namespaced: a stand-in for any custom resource. */
export const widgets: Resource<Widget> = defineResource<Widget>({
  group: 'example.com',
  version: 'v1',
  plural: 'widgets',
  kind: 'Widget',
  namespaced: true,
});

/**
 * Whether the API server would serve `resource` from a CustomResourceDefinition (apiextensions)
 * rather than built in: by its group, since the built-in kinds live in the core group, the few
 * unsuffixed groups below, and groups ending in `.k8s.io`, which custom resources do not use.
 * It decides what custom resources answer differently (patch types, table columns).
 */
export function isCustomResource(resource: Resource<KubeObject>): boolean {
  const group = resource.group;
  return group !== '' && !BUILTIN_GROUPS.has(group) && !group.endsWith('.k8s.io');
}

const BUILTIN_GROUPS: ReadonlySet<string> = new Set(['apps', 'batch', 'autoscaling', 'policy', 'extensions']);

/** The store's bucket id of a resource: one version per group and plural, as the API server stores it. */
export function resourceId(resource: Resource<KubeObject>): string {
  return `${resource.group}/${resource.plural}`;
}

/**
 * How a PUT behaves for a resource whose registry strategy differs from the loopback server's
 * default (unconditional updates allowed, no create on update): the two switches of apiserver's
 * `rest.RESTUpdateStrategy`, applied as `registry/generic/registry/store.go`'s `Update` does.
 */
export interface UpdateStrategy {
  /**
   * A PUT to a missing name creates the object, whatever resourceVersion it carries; it is
   * answered 201 (apiserver `endpoints/handlers/update.go`: `wasCreated`).
   */
  readonly allowCreateOnUpdate: boolean;
  /** A PUT without `metadata.resourceVersion` overwrites; when false it is answered 422. */
  readonly allowUnconditionalUpdate: boolean;
}

/**
 * Leases (kubernetes `pkg/registry/coordination/lease/strategy.go`): a PUT may create, and must
 * carry the resourceVersion it read, which is what makes leader election safe.
 */
export const LEASE_UPDATE_STRATEGY: UpdateStrategy = Object.freeze({ allowCreateOnUpdate: true, allowUnconditionalUpdate: false });

/** What the server knows about a resource it serves, beyond the URL parts: what discovery shows. */
export interface ServedResource {
  readonly resource: Resource<KubeObject>;
  readonly singularName: string;
  readonly shortNames: readonly string[];
  readonly verbs: readonly string[];
  /** Field selector labels besides metadata.name and metadata.namespace, read by dotted path. */
  readonly extraFieldLabels: readonly string[];
  /** Field selector labels read at another dotted path than their name (core Events' `source` is `source.component`). */
  readonly fieldLabelPaths?: Readonly<Record<string, string>>;
  /** How a PUT behaves when it differs from the default (unconditional updates, no create): Leases. */
  readonly updateStrategy?: UpdateStrategy;
  /**
   * Whether `.../status` is served: writes there change only the status, and writes to the object
   * leave its status alone (`registryStrategy.ts`). A resource without one answers 404 there.
   */
  readonly statusSubresource: boolean;
}

const ALL_VERBS = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] as const;

/** Built-in kinds the API server serves with a status subresource (their registries install a StatusREST). */
const BUILTINS_WITH_STATUS: ReadonlySet<string> = new Set([
  '/pods',
  '/services',
  '/nodes',
  '/namespaces',
  '/persistentvolumes',
  '/persistentvolumeclaims',
  '/replicationcontrollers',
  '/resourcequotas',
  'apps/deployments',
  'apps/replicasets',
  'apps/statefulsets',
  'apps/daemonsets',
  'batch/jobs',
  'batch/cronjobs',
  'autoscaling/horizontalpodautoscalers',
  'policy/poddisruptionbudgets',
  'networking.k8s.io/ingresses',
  'certificates.k8s.io/certificatesigningrequests',
  'apiextensions.k8s.io/customresourcedefinitions',
]);

/**
 * Whether `resource` has a status subresource: built-ins as the API server installs them, custom
 * resources always (as a CRD that declares `subresources.status`, as most do).
 */
function hasStatusSubresource(resource: Resource<KubeObject>): boolean {
  return isCustomResource(resource) || BUILTINS_WITH_STATUS.has(resourceId(resource));
}

function served(resource: Resource<KubeObject>, shortNames: readonly string[] = [], extraFieldLabels: readonly string[] = []): ServedResource {
  return { resource, singularName: resource.kind.toLowerCase(), shortNames, verbs: ALL_VERBS, extraFieldLabels, statusSubresource: hasStatusSubresource(resource) };
}

/** `ToSelectableFields` of events (`pkg/registry/core/event/strategy.go`): the involved object, reason, source, type. */
const CORE_EVENT_FIELD_LABELS = [
  'involvedObject.kind',
  'involvedObject.namespace',
  'involvedObject.name',
  'involvedObject.uid',
  'involvedObject.apiVersion',
  'involvedObject.resourceVersion',
  'involvedObject.fieldPath',
  'reason',
  'reportingComponent',
  'source',
  'type',
];

/** events.k8s.io/v1's field labels (`pkg/apis/events/v1/conversion.go`): `regarding.*` for `involvedObject.*`. */
const EVENTS_V1_FIELD_LABELS = [
  'regarding.kind',
  'regarding.namespace',
  'regarding.name',
  'regarding.uid',
  'regarding.apiVersion',
  'regarding.resourceVersion',
  'regarding.fieldPath',
  'reason',
  'reportingController',
  'type',
];

/** The resources every loopback server serves. */
export const builtinResources: readonly ServedResource[] = [
  served(pods, ['po'], ['spec.nodeName', 'status.phase']),
  served(configMaps, ['cm']),
  served(secrets, [], ['type']),
  served(services, ['svc']),
  served(namespaces, ['ns'], ['status.phase']),
  served(nodes, ['no'], ['spec.unschedulable']),
  served(deployments, ['deploy']),
  served(widgets, ['wd']),
  { ...served(leases), updateStrategy: LEASE_UPDATE_STRATEGY },
  { ...served(events, ['ev'], CORE_EVENT_FIELD_LABELS), fieldLabelPaths: { source: 'source.component' } },
  { ...served(eventsV1, ['ev'], EVENTS_V1_FIELD_LABELS) },
];

/** The served entry for a resource given in options: custom resources get no short names. */
export function servedResourceOf(resource: Resource<KubeObject>): ServedResource {
  return served(resource);
}
