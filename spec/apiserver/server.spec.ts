import { configMaps, deployments, namespaces, pods } from '../../lib/resources/builtins';
import { startApiServer, type ApiServer } from '../../apiserver/src/server';
import { ApiStatusError } from '../../apiserver/src/status';
import { widgets } from '../../apiserver/src/builtinResources';
import { defineResource } from '../../lib/resources/resource';
import { call, get, openWatch } from './httpHelpers';

/** The loopback server as a whole: CRUD over HTTP, the store's bookkeeping, discovery, lifecycle. */

let server: ApiServer;

beforeEach(async () => {
  server = await startApiServer();
});

afterEach(async () => {
  await server.close();
});

describe('store', () => {
  it('starts with the default, kube-system and kube-public namespaces, as a real cluster does', async () => {
    expect(server.store.list(namespaces).map((ns) => [ns.metadata.name, ns.metadata.labels, ns.status?.phase])).toEqual([
      ['default', { 'kubernetes.io/metadata.name': 'default' }, 'Active'],
      ['kube-public', { 'kubernetes.io/metadata.name': 'kube-public' }, 'Active'],
      ['kube-system', { 'kubernetes.io/metadata.name': 'kube-system' }, 'Active'],
    ]);
    const listed = (await get(server, '/api/v1/namespaces')).json;
    expect(listed.items.map((item: { metadata: { name: string } }) => item.metadata.name)).toEqual(['default', 'kube-public', 'kube-system']);
    expect(listed.metadata.resourceVersion).toBe(server.store.resourceVersion);
  });

  it('sets uid, resourceVersion, creationTimestamp and generation 1 on create, and bumps the counter', () => {
    const before = Number(server.store.resourceVersion);
    const created = server.store.create(pods, { metadata: { name: 'a', namespace: 'ns' } });
    expect(created.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata.resourceVersion).toBe(String(before + 1));
    expect(created.metadata.generation).toBe(1);
    expect(created.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect([created.kind, created.apiVersion]).toEqual(['Pod', 'v1']);
    expect(server.store.resourceVersion).toBe(String(before + 1));
  });

  it('throws 409 AlreadyExists for a duplicate name', () => {
    server.store.create(pods, { metadata: { name: 'a', namespace: 'ns' } });
    expect(() => server.store.create(pods, { metadata: { name: 'a', namespace: 'ns' } })).toThrow(
      expect.objectContaining({ status: expect.objectContaining({ code: 409, reason: 'AlreadyExists', message: 'pods "a" already exists' }) }),
    );
  });

  it('keeps uid and creationTimestamp on update, bumps generation only when spec changed, and 409s on a stale resourceVersion', () => {
    const created = server.store.create(deployments, { metadata: { name: 'd', namespace: 'ns' }, spec: { replicas: 1, selector: {}, template: {} } });
    const relabeled = server.store.update(deployments, { ...created, metadata: { ...created.metadata, labels: { a: 'b' } } });
    expect(relabeled.metadata.generation).toBe(1);
    expect(relabeled.metadata.uid).toBe(created.metadata.uid);
    const scaled = server.store.update(deployments, { ...relabeled, spec: { replicas: 3, selector: {}, template: {} } });
    expect(scaled.metadata.generation).toBe(2);
    expect(() => server.store.update(deployments, { ...created, spec: { replicas: 5, selector: {}, template: {} } })).toThrow(ApiStatusError);
    try {
      server.store.update(deployments, { ...created, spec: { replicas: 5, selector: {}, template: {} } });
    } catch (error) {
      expect((error as ApiStatusError).status).toMatchObject({
        code: 409,
        reason: 'Conflict',
        message:
          'Operation cannot be fulfilled on deployments.apps "d": the object has been modified; please apply your changes to the latest version and try again',
      });
    }
    expect(server.store.get(deployments, 'ns', 'd')!.spec).toEqual({ replicas: 3, selector: {}, template: {} });
  });

  it('throws 404 NotFound on update or delete of a missing object', () => {
    expect(() => server.store.update(pods, { metadata: { name: 'x', namespace: 'ns' } })).toThrow(
      expect.objectContaining({ status: expect.objectContaining({ code: 404, message: 'pods "x" not found' }) }),
    );
    expect(() => server.store.delete(pods, 'ns', 'x')).toThrow(expect.objectContaining({ status: expect.objectContaining({ code: 404 }) }));
  });

  it('holds an object with finalizers until an update removes the last one', () => {
    server.store.create(configMaps, { metadata: { name: 'c', namespace: 'ns', finalizers: ['example.com/hold'] } });
    const marked = server.store.delete(configMaps, 'ns', 'c');
    expect(marked.metadata.deletionTimestamp).toEqual(expect.any(String));
    expect(server.store.get(configMaps, 'ns', 'c')).toBeDefined();
    expect(server.store.get(configMaps, 'ns', 'c')?.metadata).toMatchObject({ deletionTimestamp: marked.metadata.deletionTimestamp, finalizers: ['example.com/hold'] });
    server.store.update(configMaps, { ...marked, metadata: { ...marked.metadata, finalizers: [] } });
    expect(server.store.get(configMaps, 'ns', 'c')).toBeUndefined();
  });

  it('ignores a client-set deletionTimestamp and a namespace on cluster-scoped objects', () => {
    const node = server.store.create(namespaces, { metadata: { name: 'n', namespace: 'x', deletionTimestamp: '2020-01-01T00:00:00Z' } });
    expect([node.metadata.namespace, node.metadata.deletionTimestamp]).toEqual([undefined, undefined]);
    const updated = server.store.update(namespaces, { metadata: { name: 'n', deletionTimestamp: '2020-01-01T00:00:00Z' } });
    expect(updated.metadata.deletionTimestamp).toBeUndefined();
  });

  it('names objects from generateName', () => {
    const created = server.store.create(pods, { metadata: { name: '', generateName: 'web-', namespace: 'ns' } });
    expect(created.metadata.name).toMatch(/^web-[a-z0-9]{5}$/);
  });

  it('lists in key order and by namespace', () => {
    server.store.create(pods, { metadata: { name: 'b', namespace: 'x' } });
    server.store.create(pods, { metadata: { name: 'a', namespace: 'y' } });
    server.store.create(pods, { metadata: { name: 'a', namespace: 'x' } });
    expect(server.store.list(pods).map((p) => `${p.metadata.namespace}/${p.metadata.name}`)).toEqual(['x/a', 'x/b', 'y/a']);
    expect(server.store.list(pods, 'y')).toHaveLength(1);
  });
});

describe('objects over HTTP', () => {
  it('creates with POST (201), reads with GET, replaces with PUT and deletes with DELETE', async () => {
    const created = await call(server, 'POST', '/api/v1/namespaces/ns/configmaps?fieldValidation=Ignore', {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { k: 'v' } },
    });
    expect(created.status).toBe(201);
    expect(created.json.metadata).toMatchObject({ name: 'c', namespace: 'ns', resourceVersion: server.store.resourceVersion });
    const read = await get(server, '/api/v1/namespaces/ns/configmaps/c');
    expect(read.json.data).toEqual({ k: 'v' });
    const replaced = await call(server, 'PUT', '/api/v1/namespaces/ns/configmaps/c', { body: { ...read.json, data: { k: 'w' } } });
    expect(replaced.status).toBe(200);
    expect(server.store.get(configMaps, 'ns', 'c')!.data).toEqual({ k: 'w' });
    const stale = await call(server, 'PUT', '/api/v1/namespaces/ns/configmaps/c', { body: read.json });
    expect([stale.status, stale.json.reason]).toEqual([409, 'Conflict']);
    const deleted = await call(server, 'DELETE', '/api/v1/namespaces/ns/configmaps/c');
    expect([deleted.status, deleted.json.metadata.name]).toEqual([200, 'c']);
    const gone = await get(server, '/api/v1/namespaces/ns/configmaps/c');
    expect(gone.status).toBe(404);
    expect(gone.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'configmaps "c" not found',
      reason: 'NotFound',
      details: { name: 'c', kind: 'configmaps' },
      code: 404,
    });
  });

  it('serves cluster-scoped objects, including a Namespace at /api/v1/namespaces/NAME', async () => {
    expect((await call(server, 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'team' } } })).status).toBe(201);
    const read = await get(server, '/api/v1/namespaces/team');
    expect([read.status, read.json.kind, read.json.metadata.namespace]).toEqual([200, 'Namespace', undefined]);
    expect(server.store.get(namespaces, undefined, 'team')).toBeDefined();
    expect(server.store.get(namespaces, undefined, 'team')?.metadata).toMatchObject({ name: 'team', uid: read.json.metadata.uid });
  });

  it('serves custom resources and extra resources given in options', async () => {
    await call(server, 'POST', '/apis/example.com/v1/namespaces/ns/widgets', { body: { metadata: { name: 'w' }, spec: { size: 3 } } });
    expect(server.store.get(widgets, 'ns', 'w')!.spec).toEqual({ size: 3 });
    await server.close();
    const gadgets = defineResource({ group: 'acme.io', version: 'v2', plural: 'gadgets', kind: 'Gadget', namespaced: false });
    server = await startApiServer({ resources: [gadgets] });
    await call(server, 'POST', '/apis/acme.io/v2/gadgets', { body: { metadata: { name: 'g' } } });
    expect((await get(server, '/apis/acme.io/v2/gadgets')).json.items[0].kind).toBe('Gadget');
  });

  it('applies merge and strategic-merge patches (null deletes), with resourceVersion preconditions', async () => {
    const created = server.store.create(pods, { metadata: { name: 'p', namespace: 'ns', labels: { a: '1', b: '2' } }, spec: { nodeName: 'n1', containers: [] } });
    const patched = await call(server, 'PATCH', '/api/v1/namespaces/ns/pods/p', {
      body: { metadata: { labels: { a: null, c: '3' } }, spec: { containers: [{ name: 'x' }] } },
      headers: { 'Content-Type': 'application/strategic-merge-patch+json' },
    });
    expect(patched.status).toBe(200);
    const stored = server.store.get(pods, 'ns', 'p')!;
    expect(stored.metadata.labels).toEqual({ b: '2', c: '3' });
    expect(stored.spec).toEqual({ nodeName: 'n1', containers: [{ name: 'x' }] });
    expect(stored.metadata.generation).toBe(2);
    const stale = await call(server, 'PATCH', '/api/v1/namespaces/ns/pods/p', {
      body: { metadata: { resourceVersion: created.metadata.resourceVersion, labels: { d: '4' } } },
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    expect([stale.status, stale.json.reason]).toEqual([409, 'Conflict']);
    const status = await call(server, 'PATCH', '/api/v1/namespaces/ns/pods/p/status', {
      body: { status: { phase: 'Running' }, spec: { nodeName: 'ignored' } },
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    expect(status.status).toBe(200);
    expect(server.store.get(pods, 'ns', 'p')!.status).toEqual({ phase: 'Running' });
    expect(server.store.get(pods, 'ns', 'p')!.spec?.nodeName).toBe('n1');
  });

  it('updates only .status through the status subresource', async () => {
    server.store.create(pods, { metadata: { name: 'p', namespace: 'ns' }, spec: { nodeName: 'n1', containers: [] } });
    const reply = await call(server, 'PUT', '/api/v1/namespaces/ns/pods/p/status', {
      body: { metadata: { name: 'p' }, spec: { nodeName: 'ignored' }, status: { phase: 'Running' } },
    });
    expect(reply.status).toBe(200);
    const stored = server.store.get(pods, 'ns', 'p')!;
    expect([stored.spec?.nodeName, stored.status?.phase]).toEqual(['n1', 'Running']);
  });
});

describe('discovery', () => {
  it('answers /version with the newest modelled version by default', async () => {
    expect((await get(server, '/version')).json).toMatchObject({ major: '1', minor: '36' });
  });

  it('lists the core version at /api and the named groups at /apis', async () => {
    expect((await get(server, '/api')).json.versions).toEqual(['v1']);
    const groups = (await get(server, '/apis')).json.groups;
    expect(groups.map((g: { name: string }) => g.name).sort()).toEqual(['apps', 'coordination.k8s.io', 'events.k8s.io', 'example.com']);
    expect(groups.find((g: { name: string }) => g.name === 'apps').versions).toEqual([{ groupVersion: 'apps/v1', version: 'v1' }]);
  });

  it('describes resources with kind, namespaced, verbs, singularName and shortNames', async () => {
    const core = (await get(server, '/api/v1')).json;
    expect(core.groupVersion).toBe('v1');
    expect(core.resources.find((r: { name: string }) => r.name === 'pods')).toEqual({
      name: 'pods',
      singularName: 'pod',
      namespaced: true,
      kind: 'Pod',
      verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
      shortNames: ['po'],
    });
    // A status subresource is listed after its resource, as the API server lists it.
    expect(core.resources.find((r: { name: string }) => r.name === 'pods/status')).toEqual({ name: 'pods/status', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get', 'patch', 'update'] });
    expect(core.resources.find((r: { name: string }) => r.name === 'configmaps/status')).toBeUndefined();
    expect(core.resources.find((r: { name: string }) => r.name === 'nodes')).toMatchObject({ namespaced: false, kind: 'Node' });
    const custom = (await get(server, '/apis/example.com/v1')).json;
    expect(custom.resources).toEqual([
      expect.objectContaining({ name: 'widgets', kind: 'Widget', namespaced: true }),
      expect.objectContaining({ name: 'widgets/status', kind: 'Widget', namespaced: true }),
    ]);
    expect((await get(server, '/apis/apps')).json.preferredVersion).toEqual({ groupVersion: 'apps/v1', version: 'v1' });
  });

  it('answers 404 for /openapi/v2 and unknown group versions', async () => {
    expect((await get(server, '/openapi/v2')).status).toBe(404);
    expect((await get(server, '/apis/nope.io/v1')).status).toBe(404);
  });
});

describe('request log', () => {
  it('records method, path, query, verb, resource, namespace and status of every request', async () => {
    await get(server, '/api/v1/namespaces/ns/pods?limit=5');
    await get(server, '/api/v1/namespaces/ns/pods/missing');
    await get(server, '/version');
    expect(server.requests.entries.map(({ time: _time, ...rest }) => rest)).toEqual([
      { method: 'GET', path: '/api/v1/namespaces/ns/pods', query: { limit: '5' }, verb: 'list', resource: 'pods', namespace: 'ns', status: 200, fault: undefined },
      { method: 'GET', path: '/api/v1/namespaces/ns/pods/missing', query: {}, verb: 'get', resource: 'pods', namespace: 'ns', status: 404, fault: undefined },
      { method: 'GET', path: '/version', query: {}, verb: 'discovery', resource: undefined, namespace: undefined, status: 200, fault: undefined },
    ]);
    server.requests.clear();
    expect(server.requests.entries).toEqual([]);
  });
});

describe('lifecycle', () => {
  it('restart() drops open watches, listens again on the same port, keeps data and etcd history, and restarts the watch cache', async () => {
    server.store.create(pods, { metadata: { name: 'a', namespace: 'ns' } });
    const from = server.store.resourceVersion;
    server.store.create(pods, { metadata: { name: 'b', namespace: 'ns' } });
    const stream = await openWatch(server, `/api/v1/pods?watch=1&resourceVersion=${from}`);
    await stream.untilLines(1);
    const url = server.url;
    const restartedAt = server.store.resourceVersion;
    await server.restart();
    await stream.untilClosed();
    expect(stream.outcome).toBe('aborted');
    expect(server.url).toBe(url);
    expect((await get(server, '/api/v1/pods')).json.items).toHaveLength(2);
    // The new watch cache starts at the restart's revision: older watches get 410 ...
    const tooOld = await openWatch(server, `/api/v1/pods?watch=1&resourceVersion=${from}`);
    await tooOld.untilClosed();
    expect(tooOld.events).toEqual([
      { type: 'ERROR', object: expect.objectContaining({ code: 410, reason: 'Expired', message: `too old resource version: ${from} (${restartedAt})` }) },
    ]);
    // ... while etcd still has the state at that version.
    expect((await get(server, `/api/v1/pods?resourceVersion=${from}&resourceVersionMatch=Exact`)).json.items.map((pod: { metadata: { name: string } }) => pod.metadata.name)).toEqual(['a']);
    const resumed = await openWatch(server, `/api/v1/pods?watch=1&resourceVersion=${restartedAt}`);
    server.store.create(pods, { metadata: { name: 'c', namespace: 'ns' } });
    await resumed.untilLines(1);
    expect(resumed.events[0]!.object.metadata.name).toBe('c');
    resumed.close();
  });

  it('close() ends open watches and refuses new connections', async () => {
    const stream = await openWatch(server, '/api/v1/pods?watch=1&allowWatchBookmarks=true');
    await server.close();
    await stream.untilClosed();
    await expect(get(server, '/version')).rejects.toThrow(/ECONNREFUSED/);
    server = await startApiServer();
  });

  it('stops feeding a watch once its client goes away', async () => {
    const stream = await openWatch(server, '/api/v1/pods?watch=1');
    stream.close();
    await new Promise((resolve) => setImmediate(resolve));
    for (let i = 0; i < 10; i++) server.store.create(pods, { metadata: { name: `p${i}`, namespace: 'ns' } });
    expect((await get(server, '/api/v1/pods')).json.items).toHaveLength(10);
  });

  it('serves HTTPS with the test CA when tls is set', async () => {
    await server.close();
    server = await startApiServer({ tls: true });
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect((await get(server, '/version')).json.minor).toBe('36');
  });
});
