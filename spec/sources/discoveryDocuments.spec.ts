import { ProtocolError } from '../../lib/base/errors';
import { findByKind, findByName, groupVersionsOf, resourcesOfAggregated, resourcesOfList, type DiscoveredResource } from '../../lib/sources/discoveryDocuments';

/**
 * Discovery documents read into one table (apidiscovery v2 `APIGroupDiscoveryList`; metav1
 * `APIVersions`, `APIGroupList`, `APIResourceList`), and the look-ups by kind (RESTMapper's
 * `RESTMapping`) and by kubectl-style name (`ParseResourceArg`, the shortcut expander).
 */

const aggregatedApis = {
  kind: 'APIGroupDiscoveryList',
  apiVersion: 'apidiscovery.k8s.io/v2',
  metadata: {},
  items: [
    {
      metadata: { name: 'apps', creationTimestamp: null },
      versions: [
        {
          version: 'v1',
          freshness: 'Current',
          resources: [
            {
              resource: 'deployments',
              responseKind: { group: '', version: '', kind: 'Deployment' },
              scope: 'Namespaced',
              singularResource: 'deployment',
              verbs: ['get', 'list', 'watch'],
              shortNames: ['deploy'],
              categories: ['all'],
              subresources: [{ subresource: 'status', responseKind: { kind: 'Deployment' }, verbs: ['get'] }],
            },
          ],
        },
      ],
    },
    {
      metadata: { name: 'example.org' },
      versions: [
        { version: 'v2', freshness: 'Current', resources: [{ resource: 'gizmos', responseKind: { group: 'example.org', version: 'v2', kind: 'Gizmo' }, scope: 'Cluster', singularResource: '', verbs: ['list'], shortNames: ['gz'] }] },
        { version: 'v1', freshness: 'Current', resources: [{ resource: 'gizmos', responseKind: { group: 'example.org', version: 'v1', kind: 'Gizmo' }, scope: 'Cluster', singularResource: 'gizmo', verbs: ['list'], shortNames: ['gz'] }] },
      ],
    },
    { metadata: { name: 'metrics.k8s.io' }, versions: [{ version: 'v1beta1', freshness: 'Stale', resources: [{ resource: 'pods', responseKind: { kind: 'PodMetrics' }, scope: 'Namespaced' }] }] },
  ],
};

const describeEntry = (entry: DiscoveredResource | undefined): string | undefined =>
  entry === undefined ? undefined : `${entry.resource.group}/${entry.resource.version}/${entry.resource.plural} ${entry.resource.kind} ${entry.resource.namespaced ? 'ns' : 'cluster'}`;

describe('aggregated discovery', () => {
  const table = resourcesOfAggregated(aggregatedApis, '/apis');

  it('reads every version of every group, the first preferred, and leaves out subresources and stale versions', () => {
    expect(table.map((entry) => `${describeEntry(entry)}${entry.preferred ? ' preferred' : ''}`)).toEqual([
      'apps/v1/deployments Deployment ns preferred',
      'example.org/v2/gizmos Gizmo cluster preferred',
      'example.org/v1/gizmos Gizmo cluster',
    ]);
    expect(table[0]).toMatchObject({ singular: 'deployment', shortNames: ['deploy'], verbs: ['get', 'list', 'watch'], categories: ['all'] });
  });

  it('takes the lower-case kind for a singular the server leaves empty', () => {
    expect(table[1]!.singular).toBe('gizmo');
  });

  it('refuses a document that is not an APIGroupDiscoveryList', () => {
    expect(() => resourcesOfAggregated({ kind: 'APIGroupList', groups: [] }, '/apis')).toThrow(ProtocolError);
  });
});

describe('unaggregated discovery', () => {
  it('lists the group versions of /api and /apis, the preferred one as the server says', () => {
    expect(groupVersionsOf({ kind: 'APIVersions', versions: ['v1'] }, '/api')).toEqual([{ group: '', version: 'v1', preferred: true, path: '/api/v1' }]);
    const groups = {
      kind: 'APIGroupList',
      groups: [{ name: 'example.org', versions: [{ groupVersion: 'example.org/v1', version: 'v1' }, { groupVersion: 'example.org/v2', version: 'v2' }], preferredVersion: { groupVersion: 'example.org/v2', version: 'v2' } }],
    };
    expect(groupVersionsOf(groups, '/apis').map((gv) => [gv.path, gv.preferred])).toEqual([
      ['/apis/example.org/v1', false],
      ['/apis/example.org/v2', true],
    ]);
    expect(() => groupVersionsOf({ kind: 'Status' }, '/apis')).toThrow(ProtocolError);
  });

  it('reads an APIResourceList without its subresources', () => {
    const list = {
      kind: 'APIResourceList',
      groupVersion: 'v1',
      resources: [
        { name: 'pods', singularName: 'pod', namespaced: true, kind: 'Pod', verbs: ['list'], shortNames: ['po'], categories: ['all'] },
        { name: 'pods/status', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get'] },
        { name: 'nodes', singularName: 'node', namespaced: false, kind: 'Node', verbs: ['list'], shortNames: ['no'] },
      ],
    };
    const table = resourcesOfList(list, { group: '', version: 'v1', preferred: true, path: '/api/v1' });
    expect(table.map(describeEntry)).toEqual(['/v1/pods Pod ns', '/v1/nodes Node cluster']);
    expect(table[0]).toMatchObject({ shortNames: ['po'], categories: ['all'], preferred: true });
  });
});

describe('look-ups', () => {
  const core = resourcesOfList(
    {
      resources: [
        { name: 'pods', singularName: 'pod', namespaced: true, kind: 'Pod', shortNames: ['po'] },
        { name: 'componentstatuses', singularName: 'componentstatus', namespaced: false, kind: 'ComponentStatus', shortNames: ['cs'] },
      ],
    },
    { group: '', version: 'v1', preferred: true, path: '/api/v1' },
  );
  const crd = resourcesOfList(
    { resources: [{ name: 'cs', singularName: 'c', namespaced: true, kind: 'C', shortNames: ['po'] }] },
    { group: 'example.org', version: 'v1', preferred: true, path: '/apis/example.org/v1' },
  );
  const table = [...core, ...resourcesOfAggregated(aggregatedApis, '/apis'), ...crd];

  it('finds a kind in a group version, exactly', () => {
    expect(describeEntry(findByKind(table, 'apps/v1', 'Deployment'))).toBe('apps/v1/deployments Deployment ns');
    expect(describeEntry(findByKind(table, 'v1', 'Pod'))).toBe('/v1/pods Pod ns');
    expect(describeEntry(findByKind(table, 'example.org/v1', 'Gizmo'))).toBe('example.org/v1/gizmos Gizmo cluster');
    expect(findByKind(table, 'apps/v1', 'deployment')).toBeUndefined();
    expect(findByKind(table, 'apps/v2', 'Deployment')).toBeUndefined();
  });

  it.each([
    ['deploy', 'apps/v1/deployments Deployment ns'],
    ['deployment', 'apps/v1/deployments Deployment ns'],
    ['Deployments', 'apps/v1/deployments Deployment ns'],
    ['Deployment', 'apps/v1/deployments Deployment ns'],
    ['deployments.apps', 'apps/v1/deployments Deployment ns'],
    ['deployments.v1.apps', 'apps/v1/deployments Deployment ns'],
    ['gz', 'example.org/v2/gizmos Gizmo cluster'],
    ['gizmos.v1.example.org', 'example.org/v1/gizmos Gizmo cluster'],
    ['gizmos.example.org', 'example.org/v2/gizmos Gizmo cluster'],
    ['po', '/v1/pods Pod ns'],
    ['cs', 'example.org/v1/cs C ns'],
  ])('finds %s as %s', (name, expected) => {
    expect(describeEntry(findByName(table, name))).toBe(expected);
  });

  it('takes a full name before a short name, whatever the order (kubectl does not expand a known name)', () => {
    const [componentStatuses] = core.filter((entry) => entry.resource.plural === 'componentstatuses');
    const shortFirst = [...crd.map((entry) => ({ ...entry, shortNames: ['componentstatuses'] })), componentStatuses!];
    expect(describeEntry(findByName(shortFirst, 'componentstatuses'))).toBe('/v1/componentstatuses ComponentStatus cluster');
  });

  it('finds nothing for an unknown name, group or version', () => {
    expect(findByName(table, 'widgets')).toBeUndefined();
    expect(findByName(table, 'deployments.example.org')).toBeUndefined();
    expect(findByName(table, 'deployments.v2.apps')).toBeUndefined();
  });
});
