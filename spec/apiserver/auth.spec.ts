import { pods } from '../../lib/resources/builtins';
import { startApiServer, type ApiServer } from '../../apiserver/src/server';
import { testCertificates } from '../../apiserver/src/tls';
import { call, get, openWatch } from './httpHelpers';

/** Authentication (401) and authorization (403) with the API server's Status bodies (B.7, B.8). */

let server: ApiServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(options: Parameters<typeof startApiServer>[0]): Promise<ApiServer> {
  server = await startApiServer(options);
  return server;
}

describe('bearer token', () => {
  it('answers 401 Unauthorized without the token or with a wrong one', async () => {
    const s = await start({ token: 'sesame' });
    const expected = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 };
    const missing = await get(s, '/api/v1/pods');
    expect([missing.status, missing.json]).toEqual([401, expected]);
    const wrong = await get(s, '/api/v1/pods', { headers: { Authorization: 'Bearer nope' } });
    expect(wrong.status).toBe(401);
    expect(s.requests.entries.map((e) => e.status)).toEqual([401, 401]);
  });

  it('guards discovery too, but lets anyone without credentials read /version and /healthz', async () => {
    const s = await start({ token: 'sesame' });
    expect((await get(s, '/api')).status).toBe(401);
    expect((await get(s, '/apis/apps/v1')).status).toBe(401);
    expect((await get(s, '/api', { headers: { Authorization: 'Bearer sesame' } })).status).toBe(200);
    expect((await get(s, '/version')).status).toBe(200);
    expect((await get(s, '/healthz')).text).toBe('ok');
    expect((await get(s, '/version', { headers: { Authorization: 'Bearer wrong' } })).status).toBe(401);
  });

  it('serves requests carrying the token', async () => {
    const s = await start({ token: 'sesame' });
    expect((await get(s, '/api/v1/pods', { headers: { Authorization: 'Bearer sesame' } })).status).toBe(200);
  });

  it('accepts a client certificate signed by the test CA instead of the token', async () => {
    const s = await start({ tls: true, token: 'sesame' });
    const reply = await get(s, '/api/v1/pods', { tls: { cert: testCertificates.clientCert, key: testCertificates.clientKey } });
    expect(reply.status).toBe(200);
  });
});

describe('deny rules', () => {
  it('answers 403 with the RBAC sentence for a namespaced request', async () => {
    const s = await start({ deny: [{ verb: 'watch', resource: 'pods', namespace: 'test' }], token: 't' });
    const reply = await get(s, '/api/v1/namespaces/test/pods?watch=1', { headers: { Authorization: 'Bearer t' } });
    expect(reply.status).toBe(403);
    expect(reply.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'pods is forbidden: User "system:serviceaccount:default:test" cannot watch resource "pods" in API group "" in the namespace "test"',
      reason: 'Forbidden',
      details: { kind: 'pods' },
      code: 403,
    });
    expect((await get(s, '/api/v1/namespaces/test/pods', { headers: { Authorization: 'Bearer t' } })).status).toBe(200);
    const elsewhere = await openWatch(s, '/api/v1/namespaces/other/pods?watch=1', { headers: { Authorization: 'Bearer t' } });
    expect(elsewhere.status).toBe(200);
    elsewhere.close();
  });

  it('says "at the cluster scope" for all-namespace and cluster-scoped requests, with the group of named groups', async () => {
    const s = await start({ deny: [{ verb: ['list', 'get'] }] });
    expect((await get(s, '/apis/apps/v1/deployments')).json.message).toBe(
      'deployments.apps is forbidden: User "system:anonymous" cannot list resource "deployments" in API group "apps" at the cluster scope',
    );
    expect((await get(s, '/api/v1/nodes/n1')).json.message).toBe(
      'nodes "n1" is forbidden: User "system:anonymous" cannot get resource "nodes" in API group "" at the cluster scope',
    );
  });

  it('names the user from the client certificate CN', async () => {
    const s = await start({ tls: true, deny: [{ resource: 'pods' }] });
    const reply = await get(s, '/api/v1/pods', { tls: { cert: testCertificates.clientCert, key: testCertificates.clientKey } });
    expect(reply.json.message).toMatch(/^pods is forbidden: User "rx-informer-test-user" cannot list/);
  });

  it('denies writes without touching the store', async () => {
    const s = await start({ deny: [{ verb: 'create', resource: 'pods' }] });
    const reply = await call(s, 'POST', '/api/v1/namespaces/ns/pods', { body: { metadata: { name: 'p' } } });
    expect(reply.status).toBe(403);
    expect(s.store.list(pods)).toEqual([]);
  });
});
