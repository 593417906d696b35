import type { ServedResource } from './builtinResources';

/**
 * Legacy (unaggregated) discovery documents: enough for kubectl to find kinds, scopes, short names
 * and verbs (PROTOCOL.md appendix). Answered as plain `application/json`, so kubectl falls back
 * from aggregated discovery to `/api/v1` and `/apis/G/V`.
 */

function groupVersion(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`;
}

/** What a status subresource serves. */
const STATUS_VERBS: readonly string[] = ['get', 'patch', 'update'];

/** `/api`: the core group's versions. */
export function coreVersionsDocument(): unknown {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '127.0.0.1' }] };
}

/** `/apis`: every named group with its versions. */
export function groupListDocument(served: readonly ServedResource[]): unknown {
  const versions = new Map<string, Set<string>>();
  for (const { resource } of served) {
    if (resource.group === '') continue;
    let set = versions.get(resource.group);
    if (set === undefined) versions.set(resource.group, (set = new Set()));
    set.add(resource.version);
  }
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: [...versions].map(([name, set]) => groupDocumentOf(name, [...set])),
  };
}

function groupDocumentOf(name: string, versionList: readonly string[]): unknown {
  const entries = versionList.map((version) => ({ groupVersion: groupVersion(name, version), version }));
  return { name, versions: entries, preferredVersion: entries[0] };
}

/** `/apis/G`: one group, or undefined when not served. */
export function groupDocument(served: readonly ServedResource[], group: string): unknown {
  const versionList = [...new Set(served.filter((s) => s.resource.group === group).map((s) => s.resource.version))];
  if (group === '' || versionList.length === 0) return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...(groupDocumentOf(group, versionList) as object) };
}

/** `/api/v1` or `/apis/G/V`: the resources of one group version, or undefined when not served. */
export function resourceListDocument(served: readonly ServedResource[], group: string, version: string): unknown {
  const inVersion = served.filter((s) => s.resource.group === group && s.resource.version === version);
  if (inVersion.length === 0) return undefined;
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: groupVersion(group, version),
    resources: inVersion.flatMap((s) => [
      {
        name: s.resource.plural,
        singularName: s.singularName,
        namespaced: s.resource.namespaced,
        kind: s.resource.kind,
        verbs: s.verbs,
        ...(s.shortNames.length > 0 ? { shortNames: s.shortNames } : {}),
      },
      // A subresource is listed as `<plural>/status`, with the verbs its REST serves.
      ...(s.statusSubresource ? [{ name: `${s.resource.plural}/status`, singularName: '', namespaced: s.resource.namespaced, kind: s.resource.kind, verbs: STATUS_VERBS }] : []),
    ]),
  };
}
