import { leases, type Lease } from '../../lib/resources/builtins';
import { startApiServer, type ApiServer } from '../../apiserver/src';
import { call } from './httpHelpers';

/**
 * The loopback server's Leases, on the wire: what kubernetes' Lease registry strategy
 * (`AllowCreateOnUpdate` true, `AllowUnconditionalUpdate` false) and apiserver's
 * registry/generic/registry/store.go make of each request.
 */
const PATH = '/apis/coordination.k8s.io/v1/namespaces/default/leases';

function lease(name: string, spec: Lease['spec'] = { holderIdentity: 'a', leaseDurationSeconds: 15 }, extra: Partial<Lease['metadata']> = {}): Lease {
  return { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, ...extra }, spec };
}

describe('the loopback server’s Leases', () => {
  let server: ApiServer;
  beforeEach(async () => {
    server = await startApiServer();
  });
  afterEach(() => server.close());

  it('creates with 201, and answers 409 AlreadyExists for a taken name and 404 for a missing one', async () => {
    const created = await call(server, 'POST', PATH, { body: lease('lock', { holderIdentity: 'a', leaseDurationSeconds: 15, renewTime: '2026-01-02T03:04:05.123456Z' }) });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ kind: 'Lease', apiVersion: 'coordination.k8s.io/v1', metadata: { name: 'lock', namespace: 'default' }, spec: { renewTime: '2026-01-02T03:04:05.123456Z' } });
    const again = await call(server, 'POST', PATH, { body: lease('lock') });
    expect(again.status).toBe(409);
    expect(again.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'leases.coordination.k8s.io "lock" already exists',
      reason: 'AlreadyExists',
      details: { name: 'lock', group: 'coordination.k8s.io', kind: 'leases' },
      code: 409,
    });
    expect((await call(server, 'GET', `${PATH}/missing`)).json).toMatchObject({ code: 404, reason: 'NotFound', message: 'leases.coordination.k8s.io "missing" not found' });
  });

  it('updates with the resourceVersion read (a new one each write), and answers a stale one with the API server’s exact 409 Conflict', async () => {
    const created = (await call(server, 'POST', PATH, { body: lease('lock') })).json as Lease;
    const renewed = await call(server, 'PUT', `${PATH}/lock`, { body: { ...created, spec: { ...created.spec, holderIdentity: 'b' } } });
    expect(renewed.status).toBe(200);
    expect(renewed.json.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion);
    const stale = await call(server, 'PUT', `${PATH}/lock`, { body: { ...created, spec: { holderIdentity: 'c' } } });
    expect(stale.status).toBe(409);
    expect(stale.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Operation cannot be fulfilled on leases.coordination.k8s.io "lock": the object has been modified; please apply your changes to the latest version and try again',
      reason: 'Conflict',
      details: { name: 'lock', group: 'coordination.k8s.io', kind: 'leases' },
      code: 409,
    });
    expect(server.store.get(leases, 'default', 'lock')?.spec?.holderIdentity).toBe('b');
  });

  it('refuses an update without a resourceVersion with 422, as Leases allow no unconditional update', async () => {
    await call(server, 'POST', PATH, { body: lease('lock') });
    const blind = await call(server, 'PUT', `${PATH}/lock`, { body: lease('lock', { holderIdentity: 'z' }) });
    expect(blind.status).toBe(422);
    expect(blind.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'leases.coordination.k8s.io "lock" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update',
      reason: 'Invalid',
      details: {
        name: 'lock',
        group: 'coordination.k8s.io',
        kind: 'leases',
        causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: 0: must be specified for an update', field: 'metadata.resourceVersion' }],
      },
      code: 422,
    });
    expect(server.store.get(leases, 'default', 'lock')?.spec?.holderIdentity).toBe('a');
  });

  it('creates on a PUT to a missing name (201), whatever resourceVersion it carries', async () => {
    const put = await call(server, 'PUT', `${PATH}/fresh`, { body: lease('fresh', { holderIdentity: 'a' }, { resourceVersion: '12345' }) });
    expect(put.status).toBe(201);
    expect(put.json.metadata.resourceVersion).toBe(server.store.resourceVersion);
    expect(put.json.metadata.uid).toEqual(expect.any(String));
    expect((await call(server, 'PUT', `${PATH}/other`, { body: lease('fresh') })).status).toBe(400);
  });

  it('applies a merge patch only at the resourceVersion it names, and lists by label', async () => {
    const created = (await call(server, 'POST', PATH, { body: lease('lock', { holderIdentity: 'a' }, { labels: { ring: 'r1' } }) })).json as Lease;
    await call(server, 'POST', PATH, { body: lease('other', { holderIdentity: 'b' }, { labels: { ring: 'r2' } }) });
    const patch = (resourceVersion: string) =>
      call(server, 'PATCH', `${PATH}/lock`, { body: { metadata: { resourceVersion }, spec: { holderIdentity: 'p' } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect((await patch(created.metadata.resourceVersion!)).status).toBe(200);
    expect((await patch(created.metadata.resourceVersion!)).json).toMatchObject({ code: 409, reason: 'Conflict' });
    const listed = await call(server, 'GET', `${PATH}?labelSelector=ring%3Dr1`);
    expect(listed.json.items.map((item: Lease) => item.metadata.name)).toEqual(['lock']);
  });

  it('serves Leases in discovery', async () => {
    const resources = (await call(server, 'GET', '/apis/coordination.k8s.io/v1')).json.resources;
    expect(resources).toEqual([expect.objectContaining({ name: 'leases', kind: 'Lease', namespaced: true })]);
  });
});
