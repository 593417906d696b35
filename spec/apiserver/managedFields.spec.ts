import { configMaps, pods } from '../../lib/resources/builtins';
import { startApiServer, type ApiServer } from '../../apiserver/src/server';
import { call, type Reply } from './httpHelpers';

/**
 * The `Update` entries of `metadata.managedFields`: what the API server's field manager records for
 * a POST, PUT or non-apply PATCH (apiserver `endpoints/handlers/create.go`, `update.go`,
 * `patch.go` call `UpdateNoErrors`; apimachinery `util/managedfields/internal`).
 */

let server: ApiServer;

beforeEach(async () => {
  server = await startApiServer();
});

afterEach(() => server.close());

interface Entry {
  readonly manager: string;
  readonly operation: string;
  readonly apiVersion: string;
  readonly time?: string;
  readonly fieldsV1: unknown;
  readonly subresource?: string;
}

function entries(reply: Reply): Entry[] {
  return reply.json.metadata.managedFields ?? [];
}

const PODS = '/api/v1/namespaces/default/pods';
const CONFIG_MAPS = '/api/v1/namespaces/default/configmaps';

describe('who the entry names', () => {
  it.each([
    ['the fieldManager parameter', '?fieldManager=deployer', { 'User-Agent': 'kubectl/v1.32.4 (linux/amd64) kubernetes/abc' }, 'deployer'],
    ['the User-Agent up to its first slash', '', { 'User-Agent': 'kubectl/v1.32.4 (linux/amd64) kubernetes/abc' }, 'kubectl'],
    ['unknown, without either', '', {}, 'unknown'],
  ])('names %s', async (_case, query, headers, manager) => {
    const created = await call(server, 'POST', `${CONFIG_MAPS}${query}`, { body: { metadata: { name: 'c' }, data: { k: 'v' } }, headers: { 'Content-Type': 'application/json', ...headers } });
    expect(created.status).toBe(201);
    expect(entries(created).map((e) => [e.manager, e.operation, e.apiVersion])).toEqual([[manager, 'Update', 'v1']]);
  });

  it.each([
    ['longer than 128 bytes', 'm'.repeat(129), 'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes'],
    ['unprintable', 'a\u0007b', 'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Invalid value: "a\\u0007b": invalid character U+0007 (at position 1)'],
  ])('refuses a field manager %s (422)', async (_case, manager, message) => {
    const reply = await call(server, 'POST', `${CONFIG_MAPS}?fieldManager=${encodeURIComponent(manager)}`, { body: { metadata: { name: 'c' } } });
    expect([reply.status, reply.json.reason, reply.json.message]).toEqual([422, 'Invalid', message]);
    expect(server.store.get(configMaps, 'default', 'c')).toBeUndefined();
  });
});

describe('what an entry owns', () => {
  it('records the fields a create sets; "." marks a map or list item the write brought into being, never a member of the empty object', async () => {
    const created = await call(server, 'POST', `${PODS}?fieldManager=creator`, {
      body: { metadata: { name: 'p', labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'app:1' }], nodeSelector: { disk: 'ssd' } } },
    });
    expect(entries(created)).toEqual([
      {
        manager: 'creator',
        operation: 'Update',
        apiVersion: 'v1',
        time: expect.stringMatching(/Z$/),
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
          'f:spec': { 'f:containers': { 'k:{"name":"app"}': { '.': {}, 'f:image': {}, 'f:name': {} } }, 'f:nodeSelector': { '.': {}, 'f:disk': {} } },
        },
      },
    ]);
  });

  it('moves the fields an update changes to its manager; the first manager keeps the rest, and each manager keeps one entry', async () => {
    const created = await call(server, 'POST', `${CONFIG_MAPS}?fieldManager=creator`, { body: { metadata: { name: 'c' }, data: { a: '1', b: '1' } } });
    const edited = await call(server, 'PUT', `${CONFIG_MAPS}/c?fieldManager=editor`, { body: { ...created.json, data: { a: '2', b: '1' } } });
    const again = await call(server, 'PATCH', `${CONFIG_MAPS}/c?fieldManager=editor`, { body: { data: { c: '1' } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(entries(edited).map((e) => [e.manager, e.fieldsV1])).toEqual([
      ['creator', { 'f:data': { '.': {}, 'f:b': {} } }],
      ['editor', { 'f:data': { 'f:a': {} } }],
    ]);
    expect(entries(again).map((e) => [e.manager, e.fieldsV1])).toEqual([
      ['creator', { 'f:data': { '.': {}, 'f:b': {} } }],
      ['editor', { 'f:data': { 'f:a': {}, 'f:c': {} } }],
    ]);
  });

  it('records nothing for an object that has no managed fields (made in the store), and an empty list clears them', async () => {
    server.store.create(configMaps, { metadata: { name: 'c', namespace: 'default' }, data: { a: '1' } });
    const patched = await call(server, 'PATCH', `${CONFIG_MAPS}/c?fieldManager=editor`, { body: { data: { a: '2' } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect([patched.status, patched.json.metadata.managedFields]).toEqual([200, undefined]);

    const created = await call(server, 'POST', `${CONFIG_MAPS}?fieldManager=creator`, { body: { metadata: { name: 'd' }, data: { a: '1' } } });
    expect(entries(created)).toHaveLength(1);
    const cleared = await call(server, 'PUT', `${CONFIG_MAPS}/d?fieldManager=editor`, { body: { ...created.json, metadata: { ...created.json.metadata, managedFields: [] }, data: { a: '2' } } });
    expect([cleared.status, cleared.json.metadata.managedFields]).toEqual([200, undefined]);
  });

  it('names a write through /status with its subresource, which never owns what the status endpoint resets', async () => {
    const created = await call(server, 'POST', `${PODS}?fieldManager=creator`, { body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'app' }] } } });
    const status = await call(server, 'PUT', `${PODS}/p/status?fieldManager=kubelet`, {
      body: { ...created.json, spec: { containers: [{ name: 'app', image: 'ignored' }] }, status: { phase: 'Running' } },
    });
    expect(status.status).toBe(200);
    expect(entries(status).map((e) => [e.manager, e.subresource, e.fieldsV1])).toEqual([
      ['creator', undefined, { 'f:spec': { 'f:containers': { 'k:{"name":"app"}': { '.': {}, 'f:name': {} } } } }],
      ['kubelet', 'status', { 'f:status': { 'f:phase': {} } }],
    ]);
    expect(server.store.get(pods, 'default', 'p')?.spec?.containers).toEqual([{ name: 'app' }]);
  });

  it('keeps at most 10 update entries: the two oldest merge into ancient-changes', async () => {
    await call(server, 'POST', `${CONFIG_MAPS}?fieldManager=m00`, { body: { metadata: { name: 'c' }, data: { k00: 'v' } } });
    let reply: Reply | undefined;
    for (let i = 1; i <= 10; i++) {
      const n = String(i).padStart(2, '0');
      reply = await call(server, 'PATCH', `${CONFIG_MAPS}/c?fieldManager=m${n}`, { body: { data: { [`k${n}`]: 'v' } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    }
    const managers = entries(reply!).map((e) => e.manager);
    expect(managers).toHaveLength(10);
    expect(managers).toContain('ancient-changes');
    expect(managers).not.toContain('m00');
    expect(managers).not.toContain('m01');
    expect(entries(reply!).find((e) => e.manager === 'ancient-changes')!.fieldsV1).toEqual({ 'f:data': { '.': {}, 'f:k00': {}, 'f:k01': {} } });
  });
});
