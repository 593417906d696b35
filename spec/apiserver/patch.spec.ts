import { deployments, pods, type Pod } from '../../lib/resources/builtins';
import { widgets } from '../../apiserver/src/builtinResources';
import { startApiServer, type ApiServer } from '../../apiserver/src/server';
import { call, type Reply } from './httpHelpers';

/**
 * PATCH as the API server answers it (apiserver `endpoints/handlers/patch.go`): JSON Patch with
 * the evanphx/json-patch v4 library's semantics and error answers, merge patches, strategic merge
 * patches, and a 415 for every patch type a resource does not take (server-side apply: apply.spec.ts).
 */

let server: ApiServer;

beforeEach(async () => {
  server = await startApiServer();
  server.store.create(pods, {
    metadata: { name: 'p', namespace: 'ns', labels: { app: 'web', tier: 'front' } },
    spec: { containers: [{ name: 'a', image: 'a:1' }, { name: 'b', image: 'b:1' }], tolerations: [{ key: 'x' }] },
  });
});

afterEach(() => server.close());

const JSON_PATCH = { 'Content-Type': 'application/json-patch+json' };

function patch(body: unknown, headers: Readonly<Record<string, string>> = JSON_PATCH, path = '/api/v1/namespaces/ns/pods/p'): Promise<Reply> {
  return call(server, 'PATCH', path, { body: typeof body === 'string' ? body : JSON.stringify(body), headers });
}

const stored = (): Pod => server.store.get(pods, 'ns', 'p')!;

function expectStatus(reply: Reply, code: number, reason: string | undefined, message: string | RegExp): void {
  expect([reply.status, reply.json?.kind, reply.json?.code, reply.json?.reason]).toEqual([code, 'Status', code, reason]);
  expect(reply.json.message).toMatch(message);
}

describe('JSON Patch (application/json-patch+json)', () => {
  it('applies add, replace, remove, test, move and copy in order, and answers the updated object', async () => {
    const before = stored().metadata.resourceVersion;
    const reply = await patch([
      { op: 'test', path: '/metadata/labels/app', value: 'web' },
      { op: 'add', path: '/metadata/labels/stage', value: 'canary' },
      { op: 'replace', path: '/spec/containers/0/image', value: 'a:2' },
      { op: 'remove', path: '/metadata/labels/tier' },
      { op: 'copy', from: '/metadata/labels/app', path: '/metadata/annotations' },
      { op: 'move', from: '/metadata/annotations', path: '/metadata/labels/copied' },
      { op: 'add', path: '/spec/containers/-', value: { name: 'c', image: 'c:1' } },
    ]);
    expect(reply.status).toBe(200);
    expect(reply.json.metadata.labels).toEqual({ app: 'web', stage: 'canary', copied: 'web' });
    expect(stored().metadata.labels).toEqual({ app: 'web', stage: 'canary', copied: 'web' });
    expect(stored().metadata.annotations).toBeUndefined();
    expect(stored().spec?.containers?.map((c) => `${c.name}=${c.image}`)).toEqual(['a=a:2', 'b=b:1', 'c=c:1']);
    expect(reply.json.metadata.resourceVersion).not.toBe(before);
    expect(reply.json.metadata.resourceVersion).toBe(stored().metadata.resourceVersion);
  });

  it('reads paths as the library does: negative indices, "-", ~0 and ~1 escapes, a missing member replaced into being', async () => {
    // For add, -1 is the end (as "-"), -2 before the last item; for remove, -1 is the last item.
    expect((await patch([{ op: 'add', path: '/spec/containers/-2', value: { name: 'before-last' } }])).status).toBe(200);
    expect(stored().spec?.containers?.map((c) => c.name)).toEqual(['a', 'before-last', 'b']);
    expect((await patch([{ op: 'add', path: '/spec/containers/-1', value: { name: 'last' } }])).status).toBe(200);
    expect((await patch([{ op: 'remove', path: '/spec/containers/-2' }])).status).toBe(200);
    expect(stored().spec?.containers?.map((c) => c.name)).toEqual(['a', 'before-last', 'last']);
    expect((await patch([{ op: 'add', path: '/metadata/labels/example.com~1team', value: 'a~0b' }])).status).toBe(200);
    expect(stored().metadata.labels?.['example.com/team']).toBe('a~0b');
    // Not RFC 6902: the library's replace adds a member that is missing.
    expect((await patch([{ op: 'replace', path: '/metadata/labels/missing', value: 'set' }])).status).toBe(200);
    expect(stored().metadata.labels?.['missing']).toBe('set');
  });

  it.each([
    ['a missing parent', [{ op: 'add', path: '/spec/nothing/here', value: 1 }]],
    ['removing a missing member', [{ op: 'remove', path: '/metadata/labels/absent' }]],
    ['an index past the end', [{ op: 'replace', path: '/spec/containers/5/image', value: 'x' }]],
    ['a failed test', [{ op: 'test', path: '/metadata/labels/app', value: 'api' }]],
    ['an unknown op', [{ op: 'merge', path: '/metadata/labels', value: {} }]],
    ['an op without a path', [{ op: 'add', value: 1 }]],
    ['a root path', [{ op: 'add', path: '', value: {} }]],
    ['a failure after operations that applied', [{ op: 'add', path: '/metadata/labels/x', value: 'y' }, { op: 'remove', path: '/nope' }]],
  ])('answers 422 Invalid, with the API server\'s generic message, for %s, and changes nothing', async (_case, operations) => {
    const before = stored();
    const reply = await patch(operations);
    expectStatus(reply, 422, 'Invalid', /^the server rejected our request due to an error in our request$/);
    expect(reply.json.details).toEqual({});
    expect(stored()).toBe(before);
  });

  it('answers 400 for a body that is not a JSON Patch document, with the API server\'s messages', async () => {
    expectStatus(await patch('[{"op":'), 400, 'BadRequest', /^invalid JSON patch$/);
    expectStatus(await patch({ op: 'add', path: '/a', value: 1 }), 400, 'BadRequest', /^json: cannot unmarshal object into Go value of type jsonpatch\.Patch$/);
    expectStatus(await patch([1]), 400, 'BadRequest', /^json: cannot unmarshal number into Go value of type jsonpatch\.Operation$/);
    expectStatus(await patch('"add"'), 400, 'BadRequest', /^json: cannot unmarshal string into Go value of type jsonpatch\.Patch$/);
  });

  it('answers 413 for more than 10 000 operations', async () => {
    const operations = Array.from({ length: 10_001 }, () => ({ op: 'test', path: '/metadata/name', value: 'p' }));
    expectStatus(await patch(operations), 413, 'RequestEntityTooLarge', /^Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001$/);
  });

  it('answers 404 for a missing object and 400 when the patch renames the object or moves it to another namespace', async () => {
    expectStatus(await patch([], JSON_PATCH, '/api/v1/namespaces/ns/pods/missing'), 404, 'NotFound', /^pods "missing" not found$/);
    expectStatus(await patch([{ op: 'replace', path: '/metadata/name', value: 'q' }]), 400, 'BadRequest', /^the name of the object \(q\) does not match the name on the URL \(p\)$/);
    expectStatus(
      await patch([{ op: 'replace', path: '/metadata/namespace', value: 'other' }]),
      400,
      'BadRequest',
      /^the namespace of the provided object does not match the namespace sent on the request$/,
    );
  });

  it('patches custom resources and the status subresource', async () => {
    server.store.create(widgets, { metadata: { name: 'w', namespace: 'ns' }, spec: { size: 1 } });
    const widget = await patch([{ op: 'replace', path: '/spec/size', value: 2 }], JSON_PATCH, '/apis/example.com/v1/namespaces/ns/widgets/w');
    expect([widget.status, server.store.get(widgets, 'ns', 'w')?.spec?.size]).toEqual([200, 2]);
    const status = await patch([{ op: 'add', path: '/status', value: { phase: 'Running' } }, { op: 'add', path: '/spec/nodeName', value: 'ignored' }], JSON_PATCH, '/api/v1/namespaces/ns/pods/p/status');
    expect(status.status).toBe(200);
    expect(stored().status).toEqual({ phase: 'Running' });
    expect(stored().spec?.nodeName).toBeUndefined();
  });
});

describe('strategic merge patch (application/strategic-merge-patch+json)', () => {
  const SMP = { 'Content-Type': 'application/strategic-merge-patch+json' };

  it('merges lists with a patch merge key item by item (what kubectl set image sends), and replaces the others', async () => {
    const before = stored();
    const reply = await patch({ spec: { containers: [{ name: 'b', image: 'b:2' }, { name: 'c', image: 'c:1' }], tolerations: [{ key: 'y' }] } }, SMP);
    expect(reply.status).toBe(200);
    expect(stored().spec?.containers).toEqual([{ name: 'a', image: 'a:1' }, { name: 'b', image: 'b:2' }, { name: 'c', image: 'c:1' }]);
    expect(stored().spec?.['tolerations']).toEqual([{ key: 'y' }]);
    expect(stored().metadata.labels).toEqual(before.metadata.labels);
  });

  it('reads $patch directives in list items and objects, and stores none of them', async () => {
    expect((await patch({ spec: { containers: [{ name: 'a', $patch: 'delete' }] } }, SMP)).status).toBe(200);
    expect(stored().spec?.containers?.map((c) => c.name)).toEqual(['b']);
    expect((await patch({ spec: { containers: [{ $patch: 'replace' }, { name: 'z', image: 'z:1' }] } }, SMP)).status).toBe(200);
    expect(stored().spec?.containers).toEqual([{ name: 'z', image: 'z:1' }]);
    expect((await patch({ metadata: { labels: { $patch: 'replace', only: 'this' } } }, SMP)).status).toBe(200);
    expect(stored().metadata.labels).toEqual({ only: 'this' });
    expect((await patch({ metadata: { labels: { $patch: 'delete' } } }, SMP)).status).toBe(200);
    expect(stored().metadata.labels).toBeUndefined();
    expect(JSON.stringify(stored())).not.toContain('$patch');
  });

  it('keeps the order $setElementOrder gives, unions merged string lists, and removes with $deleteFromPrimitiveList', async () => {
    const reply = await patch(
      {
        metadata: { finalizers: ['example.com/a', 'example.com/b'] },
        spec: { '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }], containers: [{ name: 'a', image: 'a:3' }] },
      },
      SMP,
    );
    expect(reply.status).toBe(200);
    expect(stored().spec?.containers).toEqual([{ name: 'b', image: 'b:1' }, { name: 'a', image: 'a:3' }]);
    expect((await patch({ metadata: { finalizers: ['example.com/b', 'example.com/c'] } }, SMP)).status).toBe(200);
    expect(stored().metadata.finalizers).toEqual(['example.com/a', 'example.com/b', 'example.com/c']);
    expect((await patch({ metadata: { '$deleteFromPrimitiveList/finalizers': ['example.com/a'] } }, SMP)).status).toBe(200);
    expect(stored().metadata.finalizers).toEqual(['example.com/b', 'example.com/c']);
    expect(JSON.stringify(stored())).not.toMatch(/\$setElementOrder|\$deleteFromPrimitiveList/);
  });

  it('drops the members $retainKeys does not list', async () => {
    expect((await patch({ spec: { $retainKeys: ['containers'], containers: [{ name: 'a', image: 'a:4' }] } }, SMP)).status).toBe(200);
    expect(Object.keys(stored().spec ?? {})).toEqual(['containers']);
    expect(stored().spec?.containers?.map((c) => `${c.name}=${c.image}`)).toEqual(['a=a:4', 'b=b:1']);
  });

  it("merges a deployment's pod template containers by name", async () => {
    server.store.create(deployments, {
      metadata: { name: 'd', namespace: 'ns' },
      spec: { selector: { matchLabels: { app: 'd' } }, template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'app', image: 'app:1' }, { name: 'proxy', image: 'proxy:1' }] } } },
    });
    const reply = await patch({ spec: { template: { spec: { containers: [{ name: 'app', image: 'app:2' }] } } } }, SMP, '/apis/apps/v1/namespaces/ns/deployments/d');
    expect(reply.status).toBe(200);
    const template = server.store.get(deployments, 'ns', 'd')?.spec?.template?.spec as { containers: { name: string; image: string }[] };
    expect(template.containers.map((c) => `${c.name}=${c.image}`)).toEqual(['app=app:2', 'proxy=proxy:1']);
  });

  it('answers the API server\'s errors: 400 for a patch that is not an object or an unknown $patch, 500 for an item without its merge key', async () => {
    expectStatus(await patch([{ op: 'add' }], SMP), 400, 'BadRequest', /^json: cannot unmarshal array into Go value of type map\[string\]interface \{\}$/);
    expectStatus(await patch({ metadata: { labels: { $patch: 'merge-deep' } } }, SMP), 400, 'BadRequest', /^unknown patch type: merge-deep in map: /);
    const noKey = await patch({ spec: { containers: [{ image: 'x:1' }] } }, SMP);
    expect([noKey.status, noKey.json.reason, noKey.json.message]).toEqual([500, undefined, 'map: map[image:x:1] does not contain declared merge key: name']);
    expectStatus(await patch({ spec: { $retainKeys: ['containers'], nodeName: 'n' } }, SMP), 422, 'Invalid', /^the server rejected our request due to an error in our request$/);
  });
});

describe('other patch types', () => {
  it('answers 400 "invalid JSON patch" to a merge patch that is not JSON, and "Invalid JSON Patch" to one that is not an object', async () => {
    const merge = { 'Content-Type': 'application/merge-patch+json' };
    expectStatus(await patch('{"metadata":', merge), 400, 'BadRequest', /^invalid JSON patch$/);
    expectStatus(await patch('null', merge), 400, 'BadRequest', /^Invalid JSON Patch$/);
    expectStatus(await patch('3', merge), 400, 'BadRequest', /^Invalid JSON Patch$/);
  });

  it('answers 415 to a strategic merge patch of a custom resource, listing what custom resources accept (as the API server does)', async () => {
    server.store.create(widgets, { metadata: { name: 'w', namespace: 'ns' }, spec: { size: 1 } });
    const reply = await patch({ spec: { size: 2 } }, { 'Content-Type': 'application/strategic-merge-patch+json' }, '/apis/example.com/v1/namespaces/ns/widgets/w');
    expectStatus(
      reply,
      415,
      'UnsupportedMediaType',
      /^the body of the request was in an unknown format - accepted media types include: application\/json-patch\+json, application\/merge-patch\+json, application\/apply-patch\+yaml$/,
    );
    expect(server.store.get(widgets, 'ns', 'w')?.spec?.size).toBe(1);
  });

  it('answers a patch type no resource accepts as the API server\'s router does: 415 with no reason', async () => {
    // CBOR apply is behind the CBORServingAndStorage gate, off: the routes do not list it.
    for (const contentType of ['application/json', 'text/plain', 'application/vnd.kubernetes.protobuf', 'application/apply-patch+cbor']) {
      const reply = await patch({ metadata: {} }, { 'Content-Type': contentType });
      expectStatus(reply, 415, undefined, /^the server responded with the status code 415 but did not return more information$/);
      expect(reply.json.details).toEqual({});
    }
  });
});
