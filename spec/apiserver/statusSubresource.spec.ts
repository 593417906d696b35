import type { KubeObject } from '../../lib/base/object';
import type { Resource } from '../../lib/resources/resource';
import { configMaps, deployments, namespaces, pods, services } from '../../lib/resources/builtins';
import { widgets } from '../../apiserver/src/builtinResources';
import { startApiServer, type ApiServer } from '../../apiserver/src/server';
import { call, type Reply } from './httpHelpers';

/**
 * The status subresource as the API server's registry strategies shape writes
 * (kubernetes `pkg/registry/apps/deployment/strategy.go`, `pkg/registry/core/pod/strategy.go`,
 * apiextensions-apiserver `pkg/registry/customresource/strategy.go`, `status_strategy.go`):
 * writes to an object leave its status alone, writes to `/status` change only the status (and the
 * metadata each kind lets through), and `metadata.generation` follows the spec.
 */

let server: ApiServer;

beforeEach(async () => {
  server = await startApiServer();
});

afterEach(() => server.close());

const MERGE = { 'Content-Type': 'application/merge-patch+json' };

interface Kind {
  readonly resource: Resource<KubeObject>;
  readonly path: string;
  readonly seed: object;
  /** A spec different from the seed's. */
  readonly spec: object;
}

const kinds: readonly (readonly [string, Kind])[] = [
  ['pods', { resource: pods, path: '/api/v1/namespaces/ns/pods/o', seed: { spec: { containers: [{ name: 'c', image: 'c:1' }] } }, spec: { containers: [{ name: 'c', image: 'c:2' }] } }],
  [
    'deployments',
    {
      resource: deployments,
      path: '/apis/apps/v1/namespaces/ns/deployments/o',
      seed: { spec: { replicas: 1, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } } } } },
      spec: { replicas: 2, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } } } },
    },
  ],
  ['services', { resource: services, path: '/api/v1/namespaces/ns/services/o', seed: { spec: { type: 'ClusterIP' } }, spec: { type: 'NodePort' } }],
  ['namespaces', { resource: namespaces, path: '/api/v1/namespaces/o', seed: { spec: { finalizers: ['kubernetes'] } }, spec: { finalizers: [] } }],
  ['widgets (a custom resource)', { resource: widgets, path: '/apis/example.com/v1/namespaces/ns/widgets/o', seed: { spec: { size: 1 } }, spec: { size: 2 } }],
];

function seed(kind: Kind): KubeObject {
  return server.store.create(kind.resource, { metadata: { name: 'o', ...(kind.resource.namespaced ? { namespace: 'ns' } : {}) }, ...kind.seed, status: { phase: 'Before' } } as KubeObject);
}

const stored = (kind: Kind): KubeObject & { spec?: unknown; status?: unknown } => server.store.get(kind.resource, kind.resource.namespaced ? 'ns' : undefined, 'o')!;

describe.each(kinds)('%s', (_name, kind) => {
  it('a PUT or PATCH of the object changes its spec (generation + 1) and leaves its status', async () => {
    const before = seed(kind);
    const put = await call(server, 'PUT', kind.path, { body: { ...before, spec: kind.spec, status: { phase: 'Put' } } });
    expect(put.status).toBe(200);
    expect([stored(kind).spec, stored(kind).status, stored(kind).metadata.generation]).toEqual([kind.spec, { phase: 'Before' }, 2]);
    const patch = await call(server, 'PATCH', kind.path, { body: { status: { phase: 'Patched' } }, headers: MERGE });
    expect(patch.status).toBe(200);
    expect([stored(kind).status, stored(kind).metadata.generation]).toEqual([{ phase: 'Before' }, 2]);
  });

  it('a PUT or PATCH of /status changes the status, not the spec, and not the generation', async () => {
    const before = seed(kind);
    const put = await call(server, 'PUT', `${kind.path}/status`, { body: { ...before, spec: kind.spec, status: { phase: 'Put' } } });
    expect([put.status, put.json.status]).toEqual([200, { phase: 'Put' }]);
    expect([stored(kind).spec, stored(kind).metadata.generation]).toEqual([(kind.seed as { spec: unknown }).spec, 1]);
    const patch = await call(server, 'PATCH', `${kind.path}/status`, { body: { spec: kind.spec, status: { phase: 'Patched' } }, headers: MERGE });
    expect([patch.status, stored(kind).status, stored(kind).spec, stored(kind).metadata.generation]).toEqual([200, { phase: 'Patched' }, (kind.seed as { spec: unknown }).spec, 1]);
  });

  it('an apply to the object owns no status field and changes none; an apply to /status owns only status fields', async () => {
    seed(kind);
    const apiVersion = kind.resource.group === '' ? 'v1' : `${kind.resource.group}/${kind.resource.version}`;
    const object = (body: object): object => ({ apiVersion, kind: kind.resource.kind, metadata: { name: 'o' }, ...body });
    const main = await call(server, 'PATCH', `${kind.path}?fieldManager=ctl&force=true`, { body: object({ spec: kind.spec, status: { phase: 'Applied' } }), headers: { 'Content-Type': 'application/apply-patch+yaml' } });
    expect([main.status, stored(kind).status]).toEqual([200, { phase: 'Before' }]);
    const ctl = (main.json.metadata.managedFields as { manager: string; fieldsV1: object }[]).find((e) => e.manager === 'ctl')!;
    expect(ctl.fieldsV1).not.toHaveProperty('f:status');
    const status = await call(server, 'PATCH', `${kind.path}/status?fieldManager=reporter&force=true`, {
      body: object({ spec: (kind.seed as { spec: unknown }).spec, status: { phase: 'Reported' } }),
      headers: { 'Content-Type': 'application/apply-patch+yaml' },
    });
    expect([status.status, stored(kind).status, stored(kind).spec]).toEqual([200, { phase: 'Reported' }, kind.spec]);
    const reporter = (status.json.metadata.managedFields as { manager: string; subresource?: string; fieldsV1: object }[]).find((e) => e.manager === 'reporter')!;
    expect([reporter.subresource, reporter.fieldsV1]).toEqual(['status', { 'f:status': { 'f:phase': {} } }]);
  });
});

describe('what each kind lets through /status, and moves the generation', () => {
  const owner = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: 'u-1' };
  it.each([
    ['a pod: labels and annotations, not ownerReferences', pods, '/api/v1/namespaces/ns/pods/o', { labels: { new: 'y' }, annotations: { note: 'y' }, ownerReferences: [owner] }],
    ['a deployment: everything but labels', deployments, '/apis/apps/v1/namespaces/ns/deployments/o', { labels: { old: 'x' }, annotations: { note: 'y' }, ownerReferences: [] }],
    ['a custom resource: no metadata', widgets, '/apis/example.com/v1/namespaces/ns/widgets/o', { labels: { old: 'x' }, ownerReferences: [owner] }],
  ] as const)('%s', async (_case, resource, path, expected) => {
    const before = server.store.create(resource as Resource<KubeObject>, { metadata: { name: 'o', namespace: 'ns', labels: { old: 'x' }, ownerReferences: [owner] } } as KubeObject);
    const reply = await call(server, 'PUT', `${path}/status`, {
      body: { ...before, metadata: { ...before.metadata, labels: { new: 'y' }, annotations: { note: 'y' }, ownerReferences: [] }, status: { phase: 'P' } },
    });
    expect(reply.status).toBe(200);
    const { labels, annotations, ownerReferences } = server.store.get(resource as Resource<KubeObject>, 'ns', 'o')!.metadata;
    expect({ labels, ...(annotations === undefined ? {} : { annotations }), ownerReferences }).toEqual(expected);
  });

  it("an apply to a custom resource's /status drops the labels it sends, yet records them as the applier's: status_strategy.go's reset fields are spec alone", async () => {
    server.store.create(widgets, { metadata: { name: 'o', namespace: 'ns', labels: { old: 'x' } }, spec: { size: 1 } });
    const reply = await call(server, 'PATCH', '/apis/example.com/v1/namespaces/ns/widgets/o/status?fieldManager=reporter', {
      body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'o', labels: { sent: 'y' } }, spec: { size: 9 }, status: { phase: 'P' } },
      headers: { 'Content-Type': 'application/apply-patch+yaml' },
    });
    expect(reply.status).toBe(200);
    const stored = server.store.get(widgets, 'ns', 'o')!;
    expect([stored.metadata.labels, stored.spec, (stored as { status?: unknown }).status]).toEqual([{ old: 'x' }, { size: 1 }, { phase: 'P' }]);
    const reporter = (reply.json.metadata.managedFields as { manager: string; fieldsV1: object }[]).find((e) => e.manager === 'reporter')!;
    expect(reporter.fieldsV1).toEqual({ 'f:metadata': { 'f:labels': { 'f:sent': {} } }, 'f:status': { 'f:phase': {} } });
  });

  it.each([
    ["a deployment's annotations (copied to its ReplicaSets)", 2, deployments, '/apis/apps/v1/namespaces/ns/deployments/o', { metadata: { annotations: { a: 'b' } } }],
    ["a deployment's labels", 1, deployments, '/apis/apps/v1/namespaces/ns/deployments/o', { metadata: { labels: { a: 'b' } } }],
    ["a custom resource's top-level field other than spec", 2, widgets, '/apis/example.com/v1/namespaces/ns/widgets/o', { extra: { a: 'b' } }],
    ["a custom resource's labels", 1, widgets, '/apis/example.com/v1/namespaces/ns/widgets/o', { metadata: { labels: { a: 'b' } } }],
    ["a pod's labels", 1, pods, '/api/v1/namespaces/ns/pods/o', { metadata: { labels: { a: 'b' } } }],
  ] as const)('a change of %s makes generation %d', async (_case, generation, resource, path, patch) => {
    server.store.create(resource as Resource<KubeObject>, { metadata: { name: 'o', namespace: 'ns' }, spec: {} } as KubeObject);
    const reply = await call(server, 'PATCH', path, { body: patch, headers: MERGE });
    expect([reply.status, reply.json.metadata.generation]).toEqual([200, generation]);
  });

  it('answers 404 at /status of a kind that has no status subresource', async () => {
    server.store.create(configMaps, { metadata: { name: 'o', namespace: 'ns' } });
    const replies: Reply[] = [
      await call(server, 'GET', '/api/v1/namespaces/ns/configmaps/o/status'),
      await call(server, 'PUT', '/api/v1/namespaces/ns/configmaps/o/status', { body: { metadata: { name: 'o' } } }),
      await call(server, 'PATCH', '/api/v1/namespaces/ns/configmaps/o/status', { body: {}, headers: MERGE }),
    ];
    expect(replies.map((r) => [r.status, r.json.message])).toEqual(Array(3).fill([404, 'the server could not find the requested resource']));
  });
});
