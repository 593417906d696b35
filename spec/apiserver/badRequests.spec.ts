import { pods } from '../../lib/resources/builtins';
import { startApiServer, type ApiServer } from '../../apiserver/src/server';
import { call, get, type Reply } from './httpHelpers';

/** Bad requests get the API server's error Status, never crash the server, never touch the store. */

let server: ApiServer;
let rvBefore: string;

beforeEach(async () => {
  server = await startApiServer();
  server.store.create(pods, { metadata: { name: 'a', namespace: 'ns' } });
  server.store.create(pods, { metadata: { name: 'b', namespace: 'ns' } });
  rvBefore = server.store.resourceVersion;
});

afterEach(async () => {
  // Whatever the test sent, the server still answers and the data is as it was.
  expect(server.store.resourceVersion).toBe(rvBefore);
  expect((await get(server, '/api/v1/pods')).json.items).toHaveLength(2);
  await server.close();
});

function expectStatus(reply: Reply, code: number, reason: string, message?: string | RegExp): void {
  expect([reply.status, reply.json?.kind, reply.json?.code, reply.json?.reason]).toEqual([code, 'Status', code, reason]);
  if (message !== undefined) expect(reply.json.message).toMatch(message);
}

describe('unknown paths', () => {
  it('answers 404 NotFound Status for an unknown resource, group, or path', async () => {
    for (const path of ['/api/v1/foos', '/api/v1/namespaces/ns/foos', '/apis/nope.io/v1/things', '/api/v2/pods', '/whatever', '/api/v1/namespaces/ns/nodes']) {
      expectStatus(await get(server, path), 404, 'NotFound', 'the server could not find the requested resource');
    }
  });

  it('answers 404 for a path with broken percent-encoding', async () => {
    expectStatus(await get(server, '/api/v1/namespaces/%E0%A4%A/pods'), 404, 'NotFound');
  });

  it('answers 405 for verbs the server does not implement', async () => {
    expectStatus(await call(server, 'POST', '/api/v1/namespaces/ns/pods/a', { body: {} }), 405, 'MethodNotAllowed');
    expectStatus(await call(server, 'DELETE', '/api/v1/namespaces/ns/pods'), 405, 'MethodNotAllowed');
  });
});

describe('selectors', () => {
  it('answers 400 BadRequest for a malformed label selector, on lists and watches', async () => {
    expectStatus(await get(server, '/api/v1/pods?labelSelector=app%20in%20(a'), 400, 'BadRequest', /^unable to parse requirement/);
    expectStatus(await get(server, '/api/v1/pods?watch=1&labelSelector=%3D%3Dx'), 400, 'BadRequest');
  });

  it('answers 400 for an unsupported field label and a malformed field selector', async () => {
    expectStatus(await get(server, '/api/v1/pods?fieldSelector=spec.foo%3Dbar'), 400, 'BadRequest', 'field label not supported: spec.foo');
    expectStatus(await get(server, '/api/v1/configmaps?fieldSelector=status.phase%3DRunning'), 400, 'BadRequest', 'field label not supported: status.phase');
    expectStatus(await get(server, '/api/v1/pods?fieldSelector=metadata.name'), 400, 'BadRequest');
  });

  it('supports the pod field labels the API server supports (spec.nodeName, status.phase)', async () => {
    expect((await get(server, '/api/v1/pods?fieldSelector=spec.nodeName%3D')).json.items).toHaveLength(2);
  });
});

describe('continue tokens', () => {
  it('answers 400 "continue key is not valid" for forged tokens', async () => {
    const forged = [
      'not*base64',
      Buffer.from('not json').toString('base64url'),
      Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v2', rv: 1, start: 'x' })).toString('base64url'),
      Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: 0, start: 'x', iat: 0, gen: 0 })).toString('base64url'),
      Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: 2, start: '', iat: 0, gen: 0 })).toString('base64url'),
      Buffer.from('[1,2]').toString('base64url'),
    ];
    for (const token of forged) {
      expectStatus(await get(server, `/api/v1/pods?limit=1&continue=${encodeURIComponent(token)}`), 400, 'BadRequest', /^continue key is not valid/);
    }
  });

  it('answers 400 for continue with a non-zero resourceVersion', async () => {
    const first = await get(server, '/api/v1/pods?limit=1');
    expectStatus(
      await get(server, `/api/v1/pods?limit=1&resourceVersion=2&continue=${first.json.metadata.continue}`),
      400,
      'BadRequest',
      'specifying resource version is not allowed when using continue',
    );
  });
});

describe('invalid list options', () => {
  it('answers 422 Invalid for resourceVersionMatch without resourceVersion', async () => {
    const reply = await get(server, '/api/v1/pods?resourceVersionMatch=NotOlderThan');
    expectStatus(reply, 422, 'Invalid');
    expect(reply.json.details).toEqual({
      group: 'meta.k8s.io',
      kind: 'ListOptions',
      causes: [{ reason: 'FieldValueForbidden', message: 'Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided', field: 'resourceVersionMatch' }],
    });
  });

  it('answers 422 for Exact with resourceVersion "0", an unknown match, sendInitialEvents on a list, and match with continue', async () => {
    expectStatus(
      await get(server, '/api/v1/pods?resourceVersion=0&resourceVersionMatch=Exact'),
      422,
      'Invalid',
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
    );
    expectStatus(
      await get(server, '/api/v1/pods?resourceVersion=1&resourceVersionMatch=Newest'),
      422,
      'Invalid',
      'resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""',
    );
    expectStatus(await get(server, '/api/v1/pods?sendInitialEvents=true'), 422, 'Invalid', 'sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list');
    const both = await get(server, '/api/v1/pods?resourceVersionMatch=Exact&continue=x');
    expectStatus(both, 422, 'Invalid', /is invalid: \[resourceVersionMatch: Forbidden: .*unless resourceVersion.*, resourceVersionMatch: Forbidden: .*continue/);
    expect(both.json.details.causes).toHaveLength(2);
  });

  it('answers 422 for resourceVersionMatch on a watch without sendInitialEvents', async () => {
    expectStatus(
      await get(server, '/api/v1/pods?watch=1&resourceVersion=1&resourceVersionMatch=NotOlderThan'),
      422,
      'Invalid',
      'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
    );
  });

  it('answers 400 for an unparsable resourceVersion and limit', async () => {
    expectStatus(await get(server, '/api/v1/pods?resourceVersion=abc'), 400, 'BadRequest', /resourceVersion/);
    expectStatus(await get(server, '/api/v1/pods?watch=1&resourceVersion=-3'), 400, 'BadRequest');
    expectStatus(await get(server, '/api/v1/pods?limit=many'), 400, 'BadRequest', 'strconv.ParseInt: parsing "many": invalid syntax');
  });
});

describe('bodies', () => {
  it('answers 400 for malformed JSON and for JSON that is not an object', async () => {
    expectStatus(await call(server, 'POST', '/api/v1/namespaces/ns/pods', { body: '{"metadata": {"name": "x"' }), 400, 'BadRequest', /json parse error/);
    expectStatus(await call(server, 'POST', '/api/v1/namespaces/ns/pods', { body: '[1]' }), 400, 'BadRequest');
    expectStatus(await call(server, 'POST', '/api/v1/namespaces/ns/pods', { body: { metadata: 'x' } }), 400, 'BadRequest');
    expectStatus(await call(server, 'POST', '/api/v1/namespaces/ns/pods', { body: { metadata: { name: 'x', labels: { a: 1 } } } }), 400, 'BadRequest');
    expectStatus(await call(server, 'PUT', '/api/v1/namespaces/ns/pods/a', { body: 'nope' }), 400, 'BadRequest');
  });

  it('answers 422 for an object without name or generateName', async () => {
    expectStatus(
      await call(server, 'POST', '/api/v1/namespaces/ns/pods', { body: { metadata: {} } }),
      422,
      'Invalid',
      'Pod "" is invalid: metadata.name: Required value: name or generateName is required',
    );
  });

  it('answers 400 when the body disagrees with the URL (kind, name, namespace)', async () => {
    expectStatus(await call(server, 'POST', '/api/v1/namespaces/ns/pods', { body: { kind: 'Service', metadata: { name: 'x' } } }), 400, 'BadRequest');
    expectStatus(
      await call(server, 'PUT', '/api/v1/namespaces/ns/pods/a', { body: { metadata: { name: 'b' } } }),
      400,
      'BadRequest',
      'the name of the object (b) does not match the name on the URL (a)',
    );
    expectStatus(
      await call(server, 'POST', '/api/v1/namespaces/ns/pods', { body: { metadata: { name: 'x', namespace: 'other' } } }),
      400,
      'BadRequest',
      'the namespace of the provided object does not match the namespace sent on the request',
    );
  });

  it('answers 400 for a malformed merge patch (more in patch.spec.ts)', async () => {
    const merge = { 'Content-Type': 'application/merge-patch+json' };
    expectStatus(await call(server, 'PATCH', '/api/v1/namespaces/ns/pods/a', { body: '{"metadata":', headers: merge }), 400, 'BadRequest', /^invalid JSON patch$/);
    expectStatus(await call(server, 'PATCH', '/api/v1/namespaces/ns/pods/a', { body: '[1]', headers: merge }), 400, 'BadRequest');
    expectStatus(await call(server, 'PATCH', '/api/v1/namespaces/ns/pods/a', { body: { metadata: { name: 'z' } }, headers: merge }), 400, 'BadRequest');
    expectStatus(await call(server, 'PATCH', '/api/v1/namespaces/ns/pods/zz', { body: {}, headers: merge }), 404, 'NotFound');
  });

  it('answers 415 to a protobuf body, saying how to send JSON instead (kubectl create -f FILE.json, or a generator piped as JSON)', async () => {
    const reply = await call(server, 'POST', '/api/v1/namespaces/ns/configmaps', {
      body: 'k8s\u0000binary',
      headers: { 'Content-Type': 'application/vnd.kubernetes.protobuf' },
    });
    expectStatus(reply, 415, 'UnsupportedMediaType', /^the body of the request was in an unknown format - accepted media types include: application\/json \(the loopback API server reads JSON only, not application\/vnd\.kubernetes\.protobuf; /);
    expect(reply.json.message).toContain('kubectl create -f FILE.json --validate=false');
    expect(reply.json.message).toContain('--dry-run=client -o json | kubectl create -f - --validate=false');
    const yaml = await call(server, 'PUT', '/api/v1/namespaces/ns/pods/a', { body: 'metadata: {name: a}', headers: { 'Content-Type': 'application/yaml' } });
    expectStatus(yaml, 415, 'UnsupportedMediaType', /^the body of the request was in an unknown format - accepted media types include: application\/json \(the loopback API server reads JSON only, not application\/yaml\)$/);
  });

  it('answers 409 AlreadyExists to a duplicate POST', async () => {
    expectStatus(await call(server, 'POST', '/api/v1/namespaces/ns/pods', { body: { metadata: { name: 'a' } } }), 409, 'AlreadyExists', 'pods "a" already exists');
  });
});
