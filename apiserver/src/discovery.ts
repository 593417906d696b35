import type { AggregatedDiscoveryVersion } from './serverVersion';
import { resourceId, type ServedResource } from './builtinResources';

/**
 * The discovery documents of the loopback server, built from what it serves (built-ins, resources
 * given in options, and those of the CustomResourceDefinitions it holds):
 *
 * - unaggregated (`metav1`): `/api` an `APIVersions`, `/apis` an `APIGroupList`, `/apis/G` an
 *   `APIGroup`, `/api/v1` and `/apis/G/V` an `APIResourceList` (apiserver
 *   `endpoints/discovery/{legacy,root,group,version}.go`);
 * - aggregated (KEP-3352): `/api` and `/apis` as one `APIGroupDiscoveryList` each, the core group
 *   alone at `/api` and the named groups at `/apis`, every version with all its resources
 *   (`k8s.io/api/apidiscovery/v2/types.go`; the shape of `api/discovery/aggregated_v2.json`).
 *
 * Each resource says its kind, scope, singular name, verbs, short names, categories and
 * subresources. Groups keep the order the server serves them in (built-ins first, custom resources
 * after, each group where its first resource is); the versions of a group are sorted as the API
 * server sorts them (`version.CompareKubeAwareVersionStrings`: v1 before v1beta2 before v1alpha1),
 * the first being the preferred one.
 */

function groupVersion(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`;
}

/**
 * The categories of the built-in resources the loopback serves, as the API server lists them
 * (`api/discovery/aggregated_v2.json`).
 */
const BUILTIN_CATEGORIES: ReadonlyMap<string, readonly string[]> = new Map([
  ['/pods', ['all']],
  ['/services', ['all']],
  ['apps/deployments', ['all']],
  ['apiextensions.k8s.io/customresourcedefinitions', ['api-extensions']],
]);

function categoriesOf(served: ServedResource): readonly string[] {
  return served.categories ?? BUILTIN_CATEGORIES.get(resourceId(served.resource)) ?? [];
}

/** The subresources the loopback serves: `status` where the kind has one (no `scale`, `log` or `exec`). */
function subresourcesOf(served: ServedResource): readonly string[] {
  return served.statusSubresource ? ['status'] : [];
}

/** The verbs of a subresource: `status` is read, replaced and patched. */
const SUBRESOURCE_VERBS = ['get', 'patch', 'update'] as const;

/** A parsed `vMAJOR[(alpha|beta)MINOR]` version, or undefined for one that is not Kubernetes-like. */
function kubeVersion(version: string): { readonly major: number; readonly level: number; readonly minor: number } | undefined {
  const match = /^v([1-9][0-9]*)(?:(alpha|beta)([1-9][0-9]*))?$/.exec(version);
  if (match === null) return undefined;
  return { major: Number(match[1]), level: match[2] === undefined ? 2 : match[2] === 'beta' ? 1 : 0, minor: match[3] === undefined ? 0 : Number(match[3]) };
}

/**
 * apimachinery's `version.CompareKubeAwareVersionStrings`, as a sort order (preferred first): GA
 * before beta before alpha, a higher major first, then a higher beta or alpha number; versions that
 * are not Kubernetes-like come last, in string order.
 */
export function compareKubeAwareVersions(a: string, b: string): number {
  const x = kubeVersion(a);
  const y = kubeVersion(b);
  if (x === undefined || y === undefined) {
    if (x !== undefined) return -1;
    if (y !== undefined) return 1;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  return y.level - x.level || y.major - x.major || y.minor - x.minor;
}

/** The served resources by group and version, in the order discovery lists them. */
function byGroup(served: readonly ServedResource[]): Map<string, Map<string, ServedResource[]>> {
  const groups = new Map<string, Map<string, ServedResource[]>>();
  for (const entry of served) {
    const { group, version } = entry.resource;
    let versions = groups.get(group);
    if (versions === undefined) groups.set(group, (versions = new Map()));
    let resources = versions.get(version);
    if (resources === undefined) versions.set(version, (resources = []));
    resources.push(entry);
  }
  return groups;
}

function sortedVersions(versions: ReadonlyMap<string, unknown>): string[] {
  return [...versions.keys()].sort(compareKubeAwareVersions);
}

/** `/api`: the core group's versions. */
export function coreVersionsDocument(): unknown {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '127.0.0.1' }] };
}

function groupDocumentOf(name: string, versionList: readonly string[]): unknown {
  const entries = versionList.map((version) => ({ groupVersion: groupVersion(name, version), version }));
  return { name, versions: entries, preferredVersion: entries[0] };
}

/** `/apis`: every named group with its versions, the preferred first. */
export function groupListDocument(served: readonly ServedResource[]): unknown {
  const groups = [...byGroup(served)].filter(([name]) => name !== '');
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups.map(([name, versions]) => groupDocumentOf(name, sortedVersions(versions))) };
}

/** `/apis/G`: one group, or undefined when not served. */
export function groupDocument(served: readonly ServedResource[], group: string): unknown {
  const versions = byGroup(served).get(group);
  if (group === '' || versions === undefined) return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...(groupDocumentOf(group, sortedVersions(versions)) as object) };
}

/** `/api/v1` or `/apis/G/V`: the resources of one group version (and their subresources), or undefined when not served. */
export function resourceListDocument(served: readonly ServedResource[], group: string, version: string): unknown {
  const inVersion = byGroup(served).get(group)?.get(version);
  if (inVersion === undefined) return undefined;
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: groupVersion(group, version),
    resources: inVersion.flatMap((s) => {
      const categories = categoriesOf(s);
      const resource = {
        name: s.resource.plural,
        singularName: s.singularName,
        namespaced: s.resource.namespaced,
        kind: s.resource.kind,
        verbs: s.verbs,
        ...(s.shortNames.length > 0 ? { shortNames: s.shortNames } : {}),
        ...(categories.length > 0 ? { categories } : {}),
      };
      // A subresource is listed as `plural/sub` with the parent's kind and no singular name (`discovery/version.go`).
      const subresources = subresourcesOf(s).map((sub) => ({ name: `${s.resource.plural}/${sub}`, singularName: '', namespaced: s.resource.namespaced, kind: s.resource.kind, verbs: SUBRESOURCE_VERBS }));
      return [resource, ...subresources];
    }),
  };
}

/**
 * The `responseKind` of a resource: its kind, with group and version empty as the API server
 * writes them for the built-ins (their `APIResource` leaves them unset), and set for the resources
 * of a CustomResourceDefinition (apiextensions `customresource_discovery_controller.go`).
 */
function responseKindOf(served: ServedResource): { readonly group: string; readonly kind: string; readonly version: string } {
  const fromCrd = served.crd !== undefined;
  return { group: fromCrd ? served.resource.group : '', kind: served.resource.kind, version: fromCrd ? served.resource.version : '' };
}

function resourceDiscovery(served: ServedResource): unknown {
  const responseKind = responseKindOf(served);
  const categories = categoriesOf(served);
  const subresources = subresourcesOf(served);
  return {
    resource: served.resource.plural,
    responseKind,
    scope: served.resource.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: served.singularName,
    verbs: served.verbs,
    ...(served.shortNames.length > 0 ? { shortNames: served.shortNames } : {}),
    ...(categories.length > 0 ? { categories } : {}),
    ...(subresources.length > 0 ? { subresources: subresources.map((subresource) => ({ subresource, responseKind, verbs: SUBRESOURCE_VERBS })) } : {}),
  };
}

/**
 * The aggregated discovery document of `/api` (`scope` 'api': the core group) or `/apis` (the
 * named groups), as `apidiscovery.k8s.io/<version>` `APIGroupDiscoveryList`: v2 and v2beta1 have
 * the same shape. Every version is `Current`: the loopback server aggregates no other server.
 */
export function aggregatedDiscoveryDocument(served: readonly ServedResource[], scope: 'api' | 'apis', version: AggregatedDiscoveryVersion): unknown {
  const groups = [...byGroup(served)].filter(([name]) => (scope === 'api' ? name === '' : name !== ''));
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: `apidiscovery.k8s.io/${version}`,
    metadata: {},
    items: groups.map(([name, versions]) => ({
      // An ObjectMeta with only a name, as Go writes it; the core group's name is "" and left out.
      metadata: { ...(name === '' ? {} : { name }), creationTimestamp: null },
      versions: sortedVersions(versions).map((v) => ({ version: v, resources: versions.get(v)!.map(resourceDiscovery), freshness: 'Current' })),
    })),
  };
}
