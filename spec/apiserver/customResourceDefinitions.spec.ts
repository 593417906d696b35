import { customResourceDefinitions, defineResource, type CustomResourceDefinition, type KubeObject } from 'rx-informer';
import { startApiServer, type ApiServer } from '../../apiserver/src/server';
import { eventually } from '../support/eventually';
import { call, get, openWatch, type WatchStream } from './httpHelpers';

/**
 * CustomResourceDefinitions created and deleted at run time, as apiextensions-apiserver gives them
 * their life: names accepted and established by its controllers (`naming_controller.go`,
 * `establishing_controller.go`), its resource served and discovered only then
 * (`customresource_discovery_controller.go`), and on delete a finalizer that deletes its objects
 * before the CRD goes (`registry/customresourcedefinition/etcd.go`, `crd_finalizer.go`), after
 * which its URLs answer the NotFound handler's 404 (`customresource_handler.go` delegates to
 * `notfoundhandler`).
 */

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const GIZMOS = '/apis/example.org/v1/namespaces/default/gizmos';

/** Any object goes. kubernetes-types' JSONSchemaProps has no `x-kubernetes-*` fields: a variable, not a literal, so the extension passes its excess-property check. */
const anyObject = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };

function gizmoCrd(name = 'gizmos.example.org'): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name },
    spec: {
      group: 'example.org',
      names: { plural: 'gizmos', kind: 'Gizmo', shortNames: ['gz'], categories: ['all'] },
      scope: 'Namespaced',
      versions: [
        { name: 'v1beta1', served: true, storage: false, schema: { openAPIV3Schema: anyObject } },
        { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: anyObject }, subresources: { status: {} } },
      ],
    },
  };
}

const gizmosV1 = defineResource({ group: 'example.org', version: 'v1', plural: 'gizmos', kind: 'Gizmo', namespaced: true });
const gizmo = (name: string, finalizers?: string[]): KubeObject => ({ metadata: { name, namespace: 'default', ...(finalizers === undefined ? {} : { finalizers }) }, spec: { size: 1 } } as KubeObject);

const condition = (crd: CustomResourceDefinition, type: string) => crd.status?.conditions?.find((c) => c.type === type);
const conditionsOf = (crd: CustomResourceDefinition) => (crd.status?.conditions ?? []).map((c) => `${c.type}=${c.status}/${c.reason}`);

let server: ApiServer;
const watches: WatchStream[] = [];
beforeEach(async () => {
  server = await startApiServer();
});
afterEach(async () => {
  watches.splice(0).forEach((watch) => watch.close());
  await server.close();
});

async function established(): Promise<void> {
  await eventually(async () => expect((await get(server, '/apis/example.org/v1')).status).toBe(200));
}

describe('a CustomResourceDefinition created at run time', () => {
  it('is stored defaulted, then has its names accepted and is established; only then is its resource served and discovered', async () => {
    const from = server.store.resourceVersion;
    const created = await call(server, 'POST', CRDS, { body: gizmoCrd() });
    expect(created.status).toBe(201);
    expect(created.json.spec.names).toEqual({ plural: 'gizmos', kind: 'Gizmo', shortNames: ['gz'], categories: ['all'], singular: 'gizmo', listKind: 'GizmoList' });
    expect(created.json.status).toEqual({ acceptedNames: { plural: '', kind: '' }, storedVersions: ['v1'] });

    const watch = await openWatch(server, `${CRDS}?watch=1&resourceVersion=${from}`);
    watches.push(watch);
    await watch.untilLines(3);
    const [added, named, establishedEvent] = watch.events;
    expect([added!.type, named!.type, establishedEvent!.type]).toEqual(['ADDED', 'MODIFIED', 'MODIFIED']);
    expect(conditionsOf(named!.object)).toEqual(['NamesAccepted=True/NoConflicts', 'Established=False/Installing']);
    expect(named!.object.status.acceptedNames).toEqual(created.json.spec.names);
    expect(conditionsOf(establishedEvent!.object)).toEqual(['NamesAccepted=True/NoConflicts', 'Established=True/InitialNamesAccepted']);
    expect(condition(establishedEvent!.object, 'Established')?.message).toBe('the initial names have been accepted');

    await established();
    const v1 = (await get(server, '/apis/example.org/v1')).json;
    expect(v1.resources).toEqual([
      { name: 'gizmos', singularName: 'gizmo', namespaced: true, kind: 'Gizmo', verbs: ['delete', 'get', 'list', 'patch', 'create', 'update', 'watch'], shortNames: ['gz'], categories: ['all'] },
      { name: 'gizmos/status', singularName: '', namespaced: true, kind: 'Gizmo', verbs: ['get', 'patch', 'update'] },
    ]);
    expect((await get(server, '/apis/example.org')).json.preferredVersion).toEqual({ groupVersion: 'example.org/v1', version: 'v1' });
    const aggregated = await get(server, '/apis', { headers: { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' } });
    const group = aggregated.json.items.find((item: { metadata: { name: string } }) => item.metadata.name === 'example.org');
    expect(group.versions.map((version: { version: string }) => version.version)).toEqual(['v1', 'v1beta1']);
    expect(group.versions[0].resources[0]).toMatchObject({ resource: 'gizmos', responseKind: { group: 'example.org', version: 'v1', kind: 'Gizmo' }, scope: 'Namespaced' });

    expect((await call(server, 'POST', GIZMOS, { body: gizmo('g1') })).status).toBe(201);
    const listed = await get(server, GIZMOS);
    expect([listed.json.kind, listed.json.items.map((item: KubeObject) => item.metadata.name)]).toEqual(['GizmoList', ['g1']]);
    expect((await get(server, '/apis/example.org/v1beta1/namespaces/default/gizmos')).status).toBe(200);
  });

  it('is refused when its name is not <plural>.<group>, with the 422 of the API server', async () => {
    const reply = await call(server, 'POST', CRDS, { body: gizmoCrd('gizmo.example.org') });
    expect([reply.status, reply.json.reason, reply.json.message]).toEqual([
      422,
      'Invalid',
      'CustomResourceDefinition.apiextensions.k8s.io "gizmo.example.org" is invalid: metadata.name: Invalid value: "gizmo.example.org": must be spec.names.plural+"."+spec.group',
    ]);
  });
});

describe('a CustomResourceDefinition deleted at run time', () => {
  it("gets its finalizer, deletes its objects (their watch sees each go, then ends), goes itself; then its URLs answer the NotFound handler's 404 and discovery has it no more", async () => {
    server.store.create(customResourceDefinitions, gizmoCrd());
    await established();
    for (const name of ['a', 'b']) await call(server, 'POST', GIZMOS, { body: gizmo(name) });
    const from = server.store.resourceVersion;
    const crdWatch = await openWatch(server, `${CRDS}?watch=1&resourceVersion=${from}`);
    const gizmoWatch = await openWatch(server, `/apis/example.org/v1/gizmos?watch=1&resourceVersion=${from}`);
    watches.push(crdWatch, gizmoWatch);

    const deleted = await call(server, 'DELETE', `${CRDS}/gizmos.example.org`);
    expect(deleted.status).toBe(200);
    expect(deleted.json.metadata).toMatchObject({ finalizers: ['customresourcecleanup.apiextensions.k8s.io'], deletionTimestamp: expect.any(String) });

    await gizmoWatch.untilClosed();
    expect(gizmoWatch.outcome).toBe('end');
    expect(gizmoWatch.events.map((event) => `${event.type} ${event.object.metadata.name}`)).toEqual(['DELETED a', 'DELETED b']);
    await crdWatch.until((stream) => stream.events.some((event) => event.type === 'DELETED'), 'the CRD deleted');
    const modified = crdWatch.events.filter((event) => event.type === 'MODIFIED');
    expect(modified.map((event) => `${conditionsOf(event.object).at(-1)}${event.object.metadata.deletionTimestamp ? ' marked' : ''}`)).toEqual([
      'Terminating=True/InstanceDeletionPending',
      'Terminating=True/InstanceDeletionPending marked',
      'Terminating=True/InstanceDeletionInProgress marked',
    ]);
    expect(crdWatch.events.map((event) => event.type)).toEqual(['MODIFIED', 'MODIFIED', 'MODIFIED', 'DELETED']);
    // The objects went before the CRD did.
    const gizmosGoneAt = Math.max(...gizmoWatch.events.map((event) => Number(event.object.metadata.resourceVersion)));
    expect(Number(crdWatch.events.at(-1)!.object.metadata.resourceVersion)).toBeGreaterThan(gizmosGoneAt);

    const afterwards = await get(server, GIZMOS);
    expect(afterwards.status).toBe(404);
    expect(afterwards.json).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'NotFound', message: 'the server could not find the requested resource', code: 404 });
    expect((await get(server, '/apis/example.org/v1')).status).toBe(404);
    expect((await get(server, '/apis')).json.groups.map((g: { name: string }) => g.name)).not.toContain('example.org');
    expect(server.store.list(gizmosV1)).toEqual([]);
  });

  it('waits for an object held by a finalizer of its own; discovery lists only the verbs that read or delete meanwhile', async () => {
    server.store.create(customResourceDefinitions, gizmoCrd());
    await established();
    await call(server, 'POST', GIZMOS, { body: gizmo('held', ['example.org/hold']) });
    await call(server, 'DELETE', `${CRDS}/gizmos.example.org`);
    await eventually(() => expect(server.store.get(gizmosV1, 'default', 'held')?.metadata.deletionTimestamp).toBeDefined());
    const terminating = server.store.get(customResourceDefinitions, undefined, 'gizmos.example.org')!;
    expect(condition(terminating, 'Terminating')?.reason).toBe('InstanceDeletionInProgress');
    const verbs = (await get(server, '/apis/example.org/v1')).json.resources[0].verbs;
    expect(verbs).toEqual(['delete', 'get', 'list', 'watch']);

    const held = server.store.get(gizmosV1, 'default', 'held')!;
    server.store.update(gizmosV1, { ...held, metadata: { ...held.metadata, finalizers: [] } });
    await eventually(() => expect(server.store.get(customResourceDefinitions, undefined, 'gizmos.example.org')).toBeUndefined());
    expect((await get(server, GIZMOS)).status).toBe(404);
  });

  it('created again, is served again from nothing', async () => {
    server.store.create(customResourceDefinitions, gizmoCrd());
    await established();
    await call(server, 'POST', GIZMOS, { body: gizmo('old') });
    await call(server, 'DELETE', `${CRDS}/gizmos.example.org`);
    await eventually(async () => expect((await get(server, GIZMOS)).status).toBe(404));
    await call(server, 'POST', CRDS, { body: gizmoCrd() });
    await established();
    expect((await get(server, GIZMOS)).json.items).toEqual([]);
  });
});
