import { ProtocolError } from '../base/errors';
import { defineResource, type Resource } from '../resources/resource';
import type { KubeObject } from '../base/object';

/**
 * What the API server's discovery documents say of the resources it serves, read into one table,
 * and the two look-ups done on it (apimachinery's RESTMapper rules, as named beside each):
 *
 * - aggregated discovery (KEP-3352): `/api` and `/apis` as one `APIGroupDiscoveryList` each,
 *   `apidiscovery.k8s.io/v2` or `v2beta1` (same shape), every version of every group with its
 *   resources, versions in preference order; a `Stale` version (an aggregated API server that did
 *   not answer) is left out, as client-go records it as failed;
 * - unaggregated: `/api` (`APIVersions`), `/apis` (`APIGroupList`, with each group's preferred
 *   version), then one `APIResourceList` per group version.
 *
 * Subresources (`pods/status`, or the `subresources` of an aggregated resource) are not resources
 * one lists or watches: they are left out.
 */

/** A resource the API server serves, as discovery describes it. */
export interface DiscoveredResource {
  /** The descriptor to list and watch it with. */
  readonly resource: Resource<KubeObject>;
  /** The singular name (`deployment`); the lower-case kind when the server leaves it empty. */
  readonly singular: string;
  /** Short names (`deploy`). */
  readonly shortNames: readonly string[];
  /** Verbs the server allows on it (`list`, `watch`, ...). */
  readonly verbs: readonly string[];
  /** Categories (`all`). */
  readonly categories: readonly string[];
  /** True for the version the server prefers in its group. */
  readonly preferred: boolean;
}

type Json = Readonly<Record<string, unknown>>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const strings = (value: unknown): readonly string[] => (Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : []);
const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const objects = (value: unknown): readonly Json[] => (Array.isArray(value) ? value.filter(isObject) : []);

function malformed(path: string, what: string): ProtocolError {
  return new ProtocolError('malformed-json', `GET ${path}: the discovery document is not ${what}`);
}

function discovered(group: string, version: string, preferred: boolean, fields: { plural: string; kind: string; namespaced: boolean; singular: string; shortNames: readonly string[]; verbs: readonly string[]; categories: readonly string[] }): DiscoveredResource {
  return {
    resource: defineResource({ group, version, plural: fields.plural, kind: fields.kind, namespaced: fields.namespaced }),
    singular: fields.singular === '' ? fields.kind.toLowerCase() : fields.singular,
    shortNames: fields.shortNames,
    verbs: fields.verbs,
    categories: fields.categories,
    preferred,
  };
}

/**
 * The resources of an aggregated `APIGroupDiscoveryList` (`k8s.io/api/apidiscovery/v2/types.go`):
 * groups in the server's order, versions in preference order (the first preferred).
 *
 * @throws ProtocolError when the body is not an `APIGroupDiscoveryList`.
 */
export function resourcesOfAggregated(document: unknown, path: string): DiscoveredResource[] {
  if (!isObject(document) || document['kind'] !== 'APIGroupDiscoveryList' || !Array.isArray(document['items'])) throw malformed(path, 'an APIGroupDiscoveryList');
  const found: DiscoveredResource[] = [];
  for (const item of objects(document['items'])) {
    const group = isObject(item['metadata']) ? text(item['metadata']['name']) : '';
    const versions = objects(item['versions']).filter((version) => version['freshness'] !== 'Stale');
    versions.forEach((version, index) => {
      for (const entry of objects(version['resources'])) {
        const plural = text(entry['resource']);
        const kind = isObject(entry['responseKind']) ? text(entry['responseKind']['kind']) : '';
        if (plural === '' || plural.includes('/') || kind === '') continue;
        found.push(
          discovered(group, text(version['version']), index === 0, {
            plural,
            kind,
            namespaced: entry['scope'] === 'Namespaced',
            singular: text(entry['singularResource']),
            shortNames: strings(entry['shortNames']),
            verbs: strings(entry['verbs']),
            categories: strings(entry['categories']),
          }),
        );
      }
    });
  }
  return found;
}

/** A group version to read an `APIResourceList` of, from the unaggregated `/api` or `/apis`. */
export interface GroupVersionToRead {
  readonly group: string;
  readonly version: string;
  readonly preferred: boolean;
  /** Where its `APIResourceList` is (`/api/v1`, `/apis/apps/v1`). */
  readonly path: string;
}

/**
 * The group versions of the unaggregated `/api` (`APIVersions`: the core group, the first version
 * preferred) or `/apis` (`APIGroupList`: each group with its `preferredVersion`).
 *
 * @throws ProtocolError when the body is neither.
 */
export function groupVersionsOf(document: unknown, path: string): GroupVersionToRead[] {
  if (isObject(document) && document['kind'] === 'APIVersions') {
    return strings(document['versions']).map((version, index) => ({ group: '', version, preferred: index === 0, path: `/api/${version}` }));
  }
  if (isObject(document) && document['kind'] === 'APIGroupList') {
    return objects(document['groups']).flatMap((group) => {
      const name = text(group['name']);
      const preferred = isObject(group['preferredVersion']) ? text(group['preferredVersion']['version']) : '';
      const versions = objects(group['versions']).map((version) => text(version['version']));
      return versions.map((version, index) => ({ group: name, version, preferred: preferred === '' ? index === 0 : version === preferred, path: `/apis/${name}/${version}` }));
    });
  }
  throw malformed(path, 'an APIVersions or an APIGroupList');
}

/**
 * The resources of one unaggregated `APIResourceList` (apiserver `endpoints/discovery/version.go`).
 *
 * @throws ProtocolError when the body is not an `APIResourceList`.
 */
export function resourcesOfList(document: unknown, from: GroupVersionToRead): DiscoveredResource[] {
  if (!isObject(document) || !Array.isArray(document['resources'])) throw malformed(from.path, 'an APIResourceList');
  return objects(document['resources']).flatMap((entry) => {
    const plural = text(entry['name']);
    const kind = text(entry['kind']);
    if (plural === '' || plural.includes('/') || kind === '') return [];
    return [
      discovered(from.group, from.version, from.preferred, {
        plural,
        kind,
        namespaced: entry['namespaced'] === true,
        singular: text(entry['singularName']),
        shortNames: strings(entry['shortNames']),
        verbs: strings(entry['verbs']),
        categories: strings(entry['categories']),
      }),
    ];
  });
}

/**
 * The resource of `kind` in `apiVersion` (`apps/v1`, `v1`), as a RESTMapper's `RESTMapping` finds
 * it: group, version and kind match exactly (kinds are case-sensitive); undefined when none does.
 */
export function findByKind(table: readonly DiscoveredResource[], apiVersion: string, kind: string): DiscoveredResource | undefined {
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  return table.find(({ resource }) => resource.group === group && resource.version === version && resource.kind === kind);
}

/**
 * The resource a kubectl-style name names, as `kubectl get <name>` finds it: `deploy` (a short
 * name), `deployment` (the singular), `deployments` (the plural) or `Deployment` (the kind), any
 * case; qualified as `deployments.apps` (plural or singular, then the group) or
 * `deployments.v1.apps` (then version and group). kubectl reads a name of three parts or more both
 * ways (`ParseResourceArg`: `resource.version.group`, else `resource.group`) and so does this.
 *
 * Among several matches the first wins in discovery order (the core group first, then the groups
 * in the order the server lists them, as the RESTMapper's priority does), and in a group its
 * preferred version unless a version is named. Undefined when none matches.
 */
export function findByName(table: readonly DiscoveredResource[], name: string): DiscoveredResource | undefined {
  const [first = '', ...rest] = name.toLowerCase().split('.');
  const readings: { group: string | undefined; version: string | undefined }[] = [];
  if (rest.length >= 2) readings.push({ version: rest[0], group: rest.slice(1).join('.') });
  readings.push({ version: undefined, group: rest.length === 0 ? undefined : rest.join('.') });
  for (const { group, version } of readings) {
    const matches = table.filter((entry) => {
      const { resource } = entry;
      if (group !== undefined && resource.group !== group) return false;
      if (version !== undefined ? resource.version !== version : !entry.preferred) return false;
      return resource.plural === first || entry.singular === first || resource.kind.toLowerCase() === first || entry.shortNames.includes(first);
    });
    // A full name before a short name: kubectl's shortcut expander does not expand a name that is
    // some resource's plural or singular (`expandResourceShortcut`).
    const exact = matches.find((entry) => entry.resource.plural === first || entry.singular === first || entry.resource.kind.toLowerCase() === first);
    const found = exact ?? matches[0];
    if (found !== undefined) return found;
  }
  return undefined;
}
