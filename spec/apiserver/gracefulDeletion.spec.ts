import { configMaps, type ConfigMap } from '../../lib/resources/builtins';
import { widgets } from '../../apiserver/src/builtinResources';
import { startApiServer, type ApiServer } from '../../apiserver/src/server';
import { call, openWatch, type Reply, type WatchStream } from './httpHelpers';

/**
 * Deletion of an object with finalizers, as the API server does it (apiserver
 * `registry/generic/registry/store.go` `Delete`, `updateForGracefulDeletionAndFinalizers`,
 * `markAsDeleting`, `ShouldDeleteDuringUpdate`; `registry/rest/update.go` `BeforeUpdate`;
 * apimachinery `api/validation/objectmeta.go` `ValidateObjectMetaAccessorUpdate`): the DELETE
 * marks it (a MODIFIED event) and it stays until an update removes its last finalizer (a DELETED
 * event); while it is being deleted no finalizer can be added.
 */

let server: ApiServer;
let watch: WatchStream | undefined;

beforeEach(async () => {
  server = await startApiServer();
  watch = undefined;
});
afterEach(async () => {
  watch?.close();
  await server.close();
});

const PATH = '/api/v1/namespaces/ns/configmaps';
const MERGE_PATCH = { 'Content-Type': 'application/merge-patch+json' };

function create(finalizers: string[]): ConfigMap {
  return server.store.create(configMaps, { metadata: { name: 'c', namespace: 'ns', finalizers }, data: { a: '1' } });
}

function patch(body: unknown): Promise<Reply> {
  return call(server, 'PATCH', `${PATH}/c`, { body: JSON.stringify(body), headers: MERGE_PATCH });
}

async function watchFrom(resourceVersion: string): Promise<WatchStream> {
  watch = await openWatch(server, `${PATH}?watch=1&resourceVersion=${resourceVersion}`);
  return watch;
}

describe('DELETE of an object with finalizers', () => {
  it('marks it deleted now, with deletionGracePeriodSeconds 0 and its generation bumped, answers it, and sends MODIFIED', async () => {
    const created = create(['example.com/hold']);
    const stream = await watchFrom(created.metadata.resourceVersion!);
    const reply = await call(server, 'DELETE', `${PATH}/c`);

    expect(reply.status).toBe(200);
    expect(reply.json.metadata).toMatchObject({ deletionTimestamp: expect.any(String), deletionGracePeriodSeconds: 0, generation: 2, finalizers: ['example.com/hold'] });
    expect(Date.parse(reply.json.metadata.deletionTimestamp)).toBeGreaterThan(Date.now() - 60_000);
    await stream.untilLines(1);
    expect(stream.events[0]).toMatchObject({ type: 'MODIFIED', object: { metadata: { resourceVersion: reply.json.metadata.resourceVersion, deletionGracePeriodSeconds: 0 } } });
    expect(server.store.get(configMaps, 'ns', 'c')?.metadata.resourceVersion).toBe(reply.json.metadata.resourceVersion);
  });

  it('changes nothing when repeated: no new resourceVersion, no event, the same deletionTimestamp', async () => {
    create(['example.com/hold']);
    const first = await call(server, 'DELETE', `${PATH}/c`);
    const stream = await watchFrom(first.json.metadata.resourceVersion);
    const second = await call(server, 'DELETE', `${PATH}/c`);

    expect(second.status).toBe(200);
    expect(second.json.metadata).toMatchObject({ resourceVersion: first.json.metadata.resourceVersion, deletionTimestamp: first.json.metadata.deletionTimestamp, generation: 2 });
    server.store.create(configMaps, { metadata: { name: 'after', namespace: 'ns' } });
    await stream.untilLines(1);
    expect(stream.events.map((event) => [event.type, event.object.metadata.name])).toEqual([['ADDED', 'after']]);
  });

  it('refuses a new finalizer on it with 422 Invalid, as ValidateNoNewFinalizers words it; removing one is allowed', async () => {
    create(['example.com/a', 'example.com/b']);
    await call(server, 'DELETE', `${PATH}/c`);

    const added = await patch({ metadata: { finalizers: ['example.com/a', 'example.com/b', 'example.com/z', 'example.com/y'] } });
    expect([added.status, added.json.reason]).toEqual([422, 'Invalid']);
    expect(added.json.message).toBe(
      'ConfigMap "c" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/y", "example.com/z"}',
    );
    expect(added.json.details).toEqual({
      name: 'c',
      group: '',
      kind: 'ConfigMap',
      causes: [
        {
          reason: 'FieldValueForbidden',
          message: 'Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/y", "example.com/z"}',
          field: 'metadata.finalizers',
        },
      ],
    });
    expect(server.store.get(configMaps, 'ns', 'c')?.metadata.finalizers).toEqual(['example.com/a', 'example.com/b']);

    const removed = await patch({ metadata: { finalizers: ['example.com/b'] } });
    expect(removed.status).toBe(200);
    expect(server.store.get(configMaps, 'ns', 'c')?.metadata.finalizers).toEqual(['example.com/b']);
  });

  it('names a custom resource by its kind and group in that 422', async () => {
    server.store.create(widgets, { metadata: { name: 'w', namespace: 'ns', finalizers: ['example.com/hold'] } });
    await call(server, 'DELETE', '/apis/example.com/v1/namespaces/ns/widgets/w');
    const reply = await call(server, 'PATCH', '/apis/example.com/v1/namespaces/ns/widgets/w', {
      body: JSON.stringify({ metadata: { finalizers: ['example.com/hold', 'example.com/late'] } }),
      headers: MERGE_PATCH,
    });
    expect([reply.status, reply.json.message]).toEqual([
      422,
      'Widget.example.com "w" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/late"}',
    ]);
  });

  it('keeps deletionTimestamp and deletionGracePeriodSeconds through an update that leaves them out', async () => {
    create(['example.com/a', 'example.com/b']);
    const marked = (await call(server, 'DELETE', `${PATH}/c`)).json as ConfigMap;
    const { deletionTimestamp: _timestamp, ...metadata } = marked.metadata as ConfigMap['metadata'] & { deletionGracePeriodSeconds?: number };
    const { deletionGracePeriodSeconds: _grace, ...bare } = metadata as typeof metadata & { deletionGracePeriodSeconds?: number };
    const reply = await call(server, 'PUT', `${PATH}/c`, { body: { ...marked, metadata: { ...bare, finalizers: ['example.com/a'] }, data: { a: '2' } } });

    expect(reply.status).toBe(200);
    expect(reply.json.metadata).toMatchObject({ deletionTimestamp: marked.metadata.deletionTimestamp, deletionGracePeriodSeconds: 0, finalizers: ['example.com/a'] });
  });

  it('deletes it when an update removes the last finalizer: DELETED carries its last stored state at the deletion resourceVersion', async () => {
    create(['example.com/hold']);
    const marked = await call(server, 'DELETE', `${PATH}/c`);
    const stream = await watchFrom(marked.json.metadata.resourceVersion);
    const reply = await patch({ metadata: { resourceVersion: marked.json.metadata.resourceVersion, finalizers: null } });

    expect(reply.status).toBe(200);
    expect(server.store.get(configMaps, 'ns', 'c')).toBeUndefined();
    await stream.untilLines(1);
    const [deleted] = stream.events;
    expect(deleted?.type).toBe('DELETED');
    expect(deleted?.object.metadata).toMatchObject({ finalizers: ['example.com/hold'], deletionTimestamp: marked.json.metadata.deletionTimestamp });
    expect(Number(deleted?.object.metadata.resourceVersion)).toBeGreaterThan(Number(marked.json.metadata.resourceVersion));
    expect(deleted?.object.metadata.resourceVersion).toBe(server.store.resourceVersion);
  });

  it('deletes an object without finalizers at once, and bumps no generation on the way', async () => {
    const created = create([]);
    const stream = await watchFrom(created.metadata.resourceVersion!);
    const reply = await call(server, 'DELETE', `${PATH}/c`);
    expect(reply.status).toBe(200);
    await stream.untilLines(1);
    expect(stream.events.map((event) => [event.type, event.object.metadata.generation])).toEqual([['DELETED', 1]]);
  });
});
