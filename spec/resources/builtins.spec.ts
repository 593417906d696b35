import { silentLogger } from '../../lib/base/logger';
import type { V1ConfigMap, V1Pod } from '@kubernetes/client-node';
import * as builtins from '../../lib/resources/builtins';
import { deployments, pods, type Deployment, type Pod } from '../../lib/resources/builtins';
import { apiVersionOf, defineResource, resourcePath, type Resource } from '../../lib/resources/resource';
import { informer, type Informer } from '../../lib/informer/informer';
import { waitForSync } from '../../lib/informer/waitForSync';
import type { KubeObject } from '../../lib/base/object';
import type { Snapshot } from '../../lib/store/snapshot';
import { startApiServer, type ApiServer } from '../../apiserver/src';
import { describeEachServerVersion } from '../support/serverVersions';

/**
 * Every resource of the Kubernetes 1.30 API (kubernetes-types 1.30) that can be listed and watched,
 * at its stable version, with its scope: client-go's generated informers (`informers/generic.go`;
 * a namespaced resource's `NewFiltered...Informer` takes a namespace), less what became GA after
 * 1.30 and `componentstatuses`, which cannot be watched.
 */
const EXPECTED: readonly (readonly [apiVersion: string, plural: string, scope: 'Namespaced' | 'Cluster'])[] = [
  ['v1', 'configmaps', 'Namespaced'],
  ['v1', 'endpoints', 'Namespaced'],
  ['v1', 'events', 'Namespaced'],
  ['v1', 'limitranges', 'Namespaced'],
  ['v1', 'namespaces', 'Cluster'],
  ['v1', 'nodes', 'Cluster'],
  ['v1', 'persistentvolumes', 'Cluster'],
  ['v1', 'persistentvolumeclaims', 'Namespaced'],
  ['v1', 'pods', 'Namespaced'],
  ['v1', 'podtemplates', 'Namespaced'],
  ['v1', 'replicationcontrollers', 'Namespaced'],
  ['v1', 'resourcequotas', 'Namespaced'],
  ['v1', 'secrets', 'Namespaced'],
  ['v1', 'services', 'Namespaced'],
  ['v1', 'serviceaccounts', 'Namespaced'],
  ['admissionregistration.k8s.io/v1', 'mutatingwebhookconfigurations', 'Cluster'],
  ['admissionregistration.k8s.io/v1', 'validatingadmissionpolicies', 'Cluster'],
  ['admissionregistration.k8s.io/v1', 'validatingadmissionpolicybindings', 'Cluster'],
  ['admissionregistration.k8s.io/v1', 'validatingwebhookconfigurations', 'Cluster'],
  ['apiextensions.k8s.io/v1', 'customresourcedefinitions', 'Cluster'],
  ['apps/v1', 'controllerrevisions', 'Namespaced'],
  ['apps/v1', 'daemonsets', 'Namespaced'],
  ['apps/v1', 'deployments', 'Namespaced'],
  ['apps/v1', 'replicasets', 'Namespaced'],
  ['apps/v1', 'statefulsets', 'Namespaced'],
  ['autoscaling/v2', 'horizontalpodautoscalers', 'Namespaced'],
  ['batch/v1', 'cronjobs', 'Namespaced'],
  ['batch/v1', 'jobs', 'Namespaced'],
  ['certificates.k8s.io/v1', 'certificatesigningrequests', 'Cluster'],
  ['coordination.k8s.io/v1', 'leases', 'Namespaced'],
  ['discovery.k8s.io/v1', 'endpointslices', 'Namespaced'],
  ['events.k8s.io/v1', 'events', 'Namespaced'],
  ['flowcontrol.apiserver.k8s.io/v1', 'flowschemas', 'Cluster'],
  ['flowcontrol.apiserver.k8s.io/v1', 'prioritylevelconfigurations', 'Cluster'],
  ['networking.k8s.io/v1', 'ingresses', 'Namespaced'],
  ['networking.k8s.io/v1', 'ingressclasses', 'Cluster'],
  ['networking.k8s.io/v1', 'networkpolicies', 'Namespaced'],
  ['node.k8s.io/v1', 'runtimeclasses', 'Cluster'],
  ['policy/v1', 'poddisruptionbudgets', 'Namespaced'],
  ['rbac.authorization.k8s.io/v1', 'clusterroles', 'Cluster'],
  ['rbac.authorization.k8s.io/v1', 'clusterrolebindings', 'Cluster'],
  ['rbac.authorization.k8s.io/v1', 'roles', 'Namespaced'],
  ['rbac.authorization.k8s.io/v1', 'rolebindings', 'Namespaced'],
  ['scheduling.k8s.io/v1', 'priorityclasses', 'Cluster'],
  ['storage.k8s.io/v1', 'csidrivers', 'Cluster'],
  ['storage.k8s.io/v1', 'csinodes', 'Cluster'],
  ['storage.k8s.io/v1', 'csistoragecapacities', 'Namespaced'],
  ['storage.k8s.io/v1', 'storageclasses', 'Cluster'],
  ['storage.k8s.io/v1', 'volumeattachments', 'Cluster'],
];

const descriptors: readonly Resource<KubeObject>[] = Object.values(builtins as Record<string, unknown>).filter(
  (value): value is Resource<KubeObject> => typeof value === 'object' && value !== null && 'plural' in value,
);

/**
 * The API server's own guess of a resource from its kind (apimachinery `meta.UnsafeGuessKindToResource`:
 * lower case, `s` → `ses`, `y` → `ies`, else `+s`), with the one built-in it gets wrong.
 */
function guessPlural(kind: string): string {
  if (kind === 'Endpoints') return 'endpoints';
  const lower = kind.toLowerCase();
  if (lower.endsWith('s')) return `${lower}es`;
  if (lower.endsWith('y')) return `${lower.slice(0, -1)}ies`;
  return `${lower}s`;
}

describe('the built-in resource descriptors', () => {
  it('cover every listable, watchable resource of the stable API, each once, with its scope', () => {
    const actual = descriptors.map((d) => [apiVersionOf(d), d.plural, d.namespaced ? 'Namespaced' : 'Cluster']);
    expect(actual.map((entry) => entry.join(' ')).sort()).toEqual(EXPECTED.map((entry) => entry.join(' ')).sort());
  });

  it('name each plural as the API server derives it from the kind', () => {
    const mismatched = descriptors.filter((d) => guessPlural(d.kind) !== d.plural).map((d) => `${d.kind} → ${d.plural}`);
    expect(mismatched).toEqual([]);
  });

  it('are frozen, so a shared descriptor cannot be changed under another informer', () => {
    expect(descriptors.every((d) => Object.isFrozen(d))).toBe(true);
  });

  it('build the URLs of the core group and of named groups, by scope', () => {
    expect(resourcePath(pods, { namespace: 'web' })).toBe('/api/v1/namespaces/web/pods');
    expect(resourcePath(deployments, { namespace: 'web', name: 'shop' })).toBe('/apis/apps/v1/namespaces/web/deployments/shop');
    expect(resourcePath(builtins.clusterRoles)).toBe('/apis/rbac.authorization.k8s.io/v1/clusterroles');
    expect(resourcePath(builtins.nodes, { namespace: 'ignored' })).toBe('/api/v1/nodes');
    expect(apiVersionOf(builtins.eventsV1)).toBe('events.k8s.io/v1');
  });
});

describe('the wire types (checked by the type-check of npm test)', () => {
  it('type a pod exactly: status fields, string timestamps, required name', () => {
    const pod: Pod = {
      metadata: { name: 'web-1', namespace: 'shop', creationTimestamp: '2024-05-01T10:00:00Z' },
      spec: { containers: [{ name: 'web', image: 'nginx' }] },
      status: { phase: 'Running', containerStatuses: [{ name: 'web', image: 'nginx', imageID: '', ready: true, restartCount: 2 }] },
    };
    const restarts: number[] = pod.status?.containerStatuses?.map((status) => status.restartCount) ?? [];
    const created: string | undefined = pod.metadata.creationTimestamp;
    const name: string = pod.metadata.name;
    // @ts-expect-error: a served object always has a name.
    const nameless: Pod = { metadata: {} };
    // @ts-expect-error: timestamps are strings on the wire, not Date.
    const asDate: Date | undefined = pod.metadata.creationTimestamp;
    // @ts-expect-error: an unknown status field is an error, not unknown.
    void pod.status?.containerStatus;
    expect([restarts, created, name, nameless, asDate]).toEqual([[2], '2024-05-01T10:00:00Z', 'web-1', { metadata: {} }, '2024-05-01T10:00:00Z']);
  });

  it('type informer(kc, pods) as an informer of Pod, and fit KubeObject', () => {
    const typed = (kubeConfig: Parameters<typeof informer>[0]): Informer<Pod> => informer(kubeConfig, pods);
    const generic: Resource<KubeObject> = deployments;
    const replicas = (snapshot: Snapshot<Deployment>): number[] => snapshot.list().map((d) => d.spec?.replicas ?? 1);
    expect([typeof typed, generic.kind, typeof replicas]).toEqual(['function', 'Deployment', 'function']);
  });

  it('defineResource takes client-node model types, typed as the wire JSON', () => {
    const configMaps = defineResource<V1ConfigMap>({ group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true });
    const clientNodePods = defineResource<V1Pod>({ group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true });
    const stamp = (snapshot: Snapshot<NonNullable<(typeof clientNodePods)['__object']>>): (string | undefined)[] =>
      snapshot.list().map((pod) => pod.metadata.creationTimestamp ?? pod.status?.startTime);
    const data = (snapshot: Snapshot<NonNullable<(typeof configMaps)['__object']>>): string | undefined => snapshot.get('ns/name')?.data?.['key'];
    expect([configMaps.plural, clientNodePods.kind, typeof stamp, typeof data]).toEqual(['configmaps', 'Pod', 'function', 'function']);
  });
});

describeEachServerVersion('every built-in descriptor against the loopback API server', (serverVersion) => {
  let server: ApiServer;
  beforeAll(async () => {
    server = await startApiServer({ serverVersion, resources: descriptors });
  });
  afterAll(() => server.close());

  it('lists and watches each resource at its URL: the informer syncs with the object created there', async () => {
    // Names carry the group: a kind served in two groups (core and events.k8s.io Events) is one object in the server's store.
    const nameOf = (resource: Resource<KubeObject>): string => (resource.group === '' ? `one-${resource.plural}` : `one-${resource.plural}.${resource.group}`);
    for (const resource of descriptors) {
      server.store.create(resource, {
        apiVersion: apiVersionOf(resource),
        kind: resource.kind,
        metadata: { name: nameOf(resource), ...(resource.namespaced ? { namespace: 'default' } : {}) },
      });
    }
    // Sixty-odd watches end together at teardown, against a server about to close: a reset one is retried, not a finding here.
    const informers = descriptors.map((resource) => informer(server.kubeConfig, resource, { logger: silentLogger }));
    const running = informers.map((each) => each.informer$.subscribe());
    try {
      const snapshots = await waitForSync(informers, { timeout: 10_000 });
      const keyOf = (resource: Resource<KubeObject>): string => `${resource.namespaced ? 'default/' : ''}${nameOf(resource)}`;
      const seen = snapshots.map((snapshot, i) => {
        const resource = descriptors[i] as Resource<KubeObject>;
        return `${resource.plural}: ${snapshot.get(keyOf(resource))?.kind}`;
      });
      expect(seen).toEqual(descriptors.map((d) => `${d.plural}: ${d.kind}`));
    } finally {
      for (const subscription of running) subscription.unsubscribe();
    }
  });
});
