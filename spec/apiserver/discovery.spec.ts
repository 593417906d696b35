import { startApiServer, type ApiServer } from '../../apiserver/src/server';
import { SERVER_VERSIONS, type ServerVersion } from '../../apiserver/src/serverVersion';
import { get } from './httpHelpers';

/**
 * Aggregated discovery (KEP-3352) as the API server serves it at `/api` and `/apis`, negotiated
 * by `Accept` (apiserver `endpoints/discovery/aggregated`: `wrapper.go`, `negotiation.go`,
 * `etag.go`), in the shape of `k8s.io/api/apidiscovery/v2/types.go` and
 * `api/discovery/aggregated_v2.json`; and the unaggregated documents beside it.
 */

/** What kubectl 1.32 and client-go send (`discovery_client.go`, `acceptDiscoveryFormats`). */
const CLIENT_GO_ACCEPT = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';
const V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
const V2BETA1 = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList';

let server: ApiServer;
afterEach(async () => server?.close());

const accept = (value: string) => ({ headers: { Accept: value } });

describe('aggregated discovery', () => {
  beforeEach(async () => {
    server = await startApiServer();
  });

  it('answers /apis with one APIGroupDiscoveryList of every named group, its resources included, and says so in its Content-Type', async () => {
    const reply = await get(server, '/apis', accept(CLIENT_GO_ACCEPT));
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe(V2);
    expect([reply.json.kind, reply.json.apiVersion, reply.json.metadata]).toEqual(['APIGroupDiscoveryList', 'apidiscovery.k8s.io/v2', {}]);
    expect(reply.json.items.map((item: { metadata: { name: string } }) => item.metadata.name)).toEqual(['apps', 'example.com', 'coordination.k8s.io', 'events.k8s.io', 'apiextensions.k8s.io']);
    const apps = reply.json.items[0];
    expect(apps.metadata).toEqual({ name: 'apps', creationTimestamp: null });
    expect(apps.versions).toEqual([
      {
        version: 'v1',
        freshness: 'Current',
        resources: [
          {
            resource: 'deployments',
            responseKind: { group: '', kind: 'Deployment', version: '' },
            scope: 'Namespaced',
            singularResource: 'deployment',
            verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
            shortNames: ['deploy'],
            categories: ['all'],
            subresources: [{ subresource: 'status', responseKind: { group: '', kind: 'Deployment', version: '' }, verbs: ['get', 'patch', 'update'] }],
          },
        ],
      },
    ]);
    const crds = reply.json.items[4].versions[0].resources[0];
    expect(crds).toMatchObject({ resource: 'customresourcedefinitions', scope: 'Cluster', shortNames: ['crd', 'crds'], categories: ['api-extensions'] });
  });

  it('answers /api with the core group alone, whose empty name Go leaves out', async () => {
    const reply = await get(server, '/api', accept(CLIENT_GO_ACCEPT));
    expect(reply.headers['content-type']).toBe(V2);
    expect(reply.json.items).toHaveLength(1);
    const [core] = reply.json.items;
    expect(core.metadata).toEqual({ creationTimestamp: null });
    expect(core.versions.map((version: { version: string }) => version.version)).toEqual(['v1']);
    const resources = core.versions[0].resources;
    expect(resources.map((resource: { resource: string }) => resource.resource)).toEqual(['pods', 'configmaps', 'secrets', 'services', 'namespaces', 'nodes', 'events']);
    expect(resources.find((resource: { resource: string }) => resource.resource === 'nodes')).toMatchObject({ scope: 'Cluster', shortNames: ['no'], responseKind: { kind: 'Node' } });
    expect(resources.find((resource: { resource: string }) => resource.resource === 'configmaps')).not.toHaveProperty('categories');
  });

  it('tags the answer with an ETag, Vary: Accept and Cache-Control: public, and answers 304 to a request that holds that ETag', async () => {
    const first = await get(server, '/apis', accept(CLIENT_GO_ACCEPT));
    const etag = first.headers['etag'] as string;
    expect(etag).toMatch(/^"[0-9A-F]{128}"$/);
    expect([first.headers['vary'], first.headers['cache-control']]).toEqual(['Accept', 'public']);
    const again = await get(server, '/apis', { headers: { Accept: CLIENT_GO_ACCEPT, 'If-None-Match': etag } });
    expect([again.status, again.text]).toEqual([304, '']);
    expect((await get(server, '/apis', accept(V2))).headers['etag']).toBe(etag);
    expect((await get(server, '/api', accept(CLIENT_GO_ACCEPT))).headers['etag']).not.toBe(etag);
  });

  it('prefers the clause of higher quality: a plain one at q=1 before an aggregated one at q=0.5', async () => {
    const reply = await get(server, '/apis', accept(`${V2};q=0.5,application/json`));
    expect([reply.headers['content-type'], reply.json.kind]).toEqual(['application/json', 'APIGroupList']);
  });

  it('keeps the unaggregated documents for a plain Accept, no Accept, and the paths below /api and /apis', async () => {
    for (const headers of [{ Accept: 'application/json' }, {}] as Record<string, string>[]) {
      const reply = await get(server, '/apis', { headers });
      expect([reply.headers['content-type'], reply.json.kind]).toEqual(['application/json', 'APIGroupList']);
    }
    const core = await get(server, '/api/v1', accept(CLIENT_GO_ACCEPT));
    expect([core.headers['content-type'], core.json.kind]).toEqual(['application/json', 'APIResourceList']);
  });
});

describe('aggregated discovery by Kubernetes version', () => {
  const served: Record<ServerVersion, string> = {
    '1.26': 'application/json',
    '1.27': V2BETA1,
    '1.28': V2BETA1,
    '1.29': V2BETA1,
    '1.30': V2,
    '1.31': V2,
    '1.32': V2,
    '1.33': V2,
    '1.34': V2,
    '1.35': V2,
    '1.36': V2,
  };

  it.each(SERVER_VERSIONS)("Kubernetes %s answers client-go's Accept as the versions it serves say", async (serverVersion) => {
    server = await startApiServer({ serverVersion });
    const reply = await get(server, '/apis', accept(CLIENT_GO_ACCEPT));
    expect(reply.headers['content-type']).toBe(served[serverVersion]);
    expect(reply.json.kind).toBe(served[serverVersion] === 'application/json' ? 'APIGroupList' : 'APIGroupDiscoveryList');
    if (reply.json.kind === 'APIGroupDiscoveryList') expect(reply.json.apiVersion).toBe(`apidiscovery.k8s.io/${served[serverVersion] === V2 ? 'v2' : 'v2beta1'}`);
  });

  it('serves v2beta1 to whoever asks for it alone up to 1.32, and from 1.33 falls back to the plain clause, or answers 406 without one', async () => {
    server = await startApiServer({ serverVersion: '1.32' });
    expect((await get(server, '/apis', accept(V2BETA1))).headers['content-type']).toBe(V2BETA1);
    await server.close();
    server = await startApiServer({ serverVersion: '1.33' });
    expect((await get(server, '/apis', accept(`${V2BETA1},application/json`))).headers['content-type']).toBe('application/json');
    const refused = await get(server, '/apis', accept(V2BETA1));
    expect([refused.status, refused.json.reason, refused.json.message]).toEqual([406, 'NotAcceptable', 'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf']);
  });
});
