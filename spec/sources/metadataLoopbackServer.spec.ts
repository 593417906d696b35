import { pods } from '../../lib/resources/builtins';
import { METADATA_ACCEPT, METADATA_LIST_ACCEPT } from '../../lib/sources/partialObjectMetadata';
import { negotiateConversion } from '../../apiserver/src/mediaTypeConversion';
import { ApiStatusError } from '../../apiserver/src/status';
import { startApiServer, type ApiServer, type ApiServerOptions } from '../../apiserver/src/server';
import { get, openWatch, type WatchStream } from '../apiserver/httpHelpers';

/**
 * The loopback API server's PartialObjectMetadata answers, as apiserver's `endpoints/handlers`
 * give them (`negotiation/negotiate.go`, `rest.go` AllowsMediaTypeTransform, `response.go`).
 */

const CLIENT_GO_LIST = 'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
const ONLY = (as: string, g = 'meta.k8s.io', v = 'v1'): string => `application/json;as=${as};g=${g};v=${v}`;
const NOT_ACCEPTABLE = 'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf';

const managedFields = [{ manager: 'kubectl', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': {} } }];
const pod = (name: string) => ({
  metadata: { name, namespace: 'ns', labels: { app: 'web' }, annotations: { note: 'n' }, managedFields },
  spec: { containers: [{ name: 'c', image: 'nginx' }] },
  status: { phase: 'Running' },
});

let server: ApiServer;
const open: WatchStream[] = [];

async function start(options?: ApiServerOptions): Promise<void> {
  await server?.close();
  server = await startApiServer(options);
  server.store.create(pods, pod('a'));
  server.store.create(pods, pod('b'));
}

beforeEach(() => start());
afterEach(async () => {
  for (const stream of open.splice(0)) stream.close();
  await server.close();
});

const accept = (value: string) => ({ headers: { Accept: value } });

describe('negotiateConversion', () => {
  it.each([
    [undefined, { kind: 'none' }],
    ['application/json', { kind: 'none' }],
    [CLIENT_GO_LIST, { kind: 'PartialObjectMetadataList', version: 'v1' }],
    [METADATA_ACCEPT, { kind: 'PartialObjectMetadata', version: 'v1' }],
    [ONLY('PartialObjectMetadata', 'meta.k8s.io', 'v1beta1'), { kind: 'PartialObjectMetadata', version: 'v1beta1' }],
    // a clause for a conversion the server does not know is passed over, for the next one
    [`${ONLY('PartialObjectMetadataList', 'example.com')},application/json`, { kind: 'none' }],
    [`${ONLY('PartialObjectMetadataList', 'meta.k8s.io', 'v2')},application/json`, { kind: 'none' }],
    [`${ONLY('Widget')},application/json`, { kind: 'none' }],
    // quality first, then the order given
    [`application/json;q=0.5,${ONLY('PartialObjectMetadataList')}`, { kind: 'PartialObjectMetadataList', version: 'v1' }],
    [`${ONLY('Table')},${ONLY('PartialObjectMetadataList')}`, { kind: 'Table', version: 'v1' }],
    // Table is JSON and YAML only; PartialObjectMetadata any media type
    [`application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1,${ONLY('PartialObjectMetadata')}`, { kind: 'PartialObjectMetadata', version: 'v1' }],
    ['*/*;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1', { kind: 'PartialObjectMetadataList', version: 'v1' }],
  ])('reads %s as %j', (header, expected) => {
    expect(negotiateConversion(header, true)).toEqual(expected);
  });

  it.each([ONLY('PartialObjectMetadataList', 'example.com'), ONLY('PartialObjectMetadata', 'meta.k8s.io', 'v2'), ONLY('Widget'), 'text/html'])(
    'refuses %s, which leaves no acceptable clause, with 406 NotAcceptable',
    (header) => {
      expect.assertions(2);
      try {
        negotiateConversion(header, true);
      } catch (error) {
        expect(error).toBeInstanceOf(ApiStatusError);
        expect((error as ApiStatusError).status).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: NOT_ACCEPTABLE, reason: 'NotAcceptable', code: 406 });
      }
    },
  );

  it('passes PartialObjectMetadata clauses over on a server that cannot convert', () => {
    expect(negotiateConversion(METADATA_LIST_ACCEPT, false)).toEqual({ kind: 'none' });
    expect(() => negotiateConversion(ONLY('PartialObjectMetadataList'), false)).toThrow(NOT_ACCEPTABLE);
  });
});

describe('lists as PartialObjectMetadataList', () => {
  it('answers a PartialObjectMetadataList whose items keep their whole metadata, managedFields included, and nothing else', async () => {
    const reply = await get(server, '/api/v1/namespaces/ns/pods', accept(CLIENT_GO_LIST));
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('application/json');
    expect(reply.json.kind).toBe('PartialObjectMetadataList');
    expect(reply.json.apiVersion).toBe('meta.k8s.io/v1');
    expect(reply.json.metadata.resourceVersion).toBe(server.store.resourceVersion);
    expect(reply.json.items).toHaveLength(2);
    const stored = server.store.get(pods, 'ns', 'a')!;
    expect(reply.json.items[0]).toEqual({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: stored.metadata });
    expect(reply.json.items[0].metadata.managedFields).toEqual(managedFields);
  });

  it('keeps the continue token and remainingItemCount on pages, and answers v1beta1 as v1beta1', async () => {
    const first = await get(server, '/api/v1/pods?limit=1', accept(ONLY('PartialObjectMetadataList', 'meta.k8s.io', 'v1beta1')));
    expect(first.json.apiVersion).toBe('meta.k8s.io/v1beta1');
    expect(first.json.items.map((item: { apiVersion: string }) => item.apiVersion)).toEqual(['meta.k8s.io/v1beta1']);
    expect(first.json.metadata.remainingItemCount).toBe(1);
    const second = await get(server, `/api/v1/pods?limit=1&continue=${encodeURIComponent(first.json.metadata.continue)}`, accept(METADATA_LIST_ACCEPT));
    expect(second.json.kind).toBe('PartialObjectMetadataList');
    expect(second.json.items.map((item: { metadata: { name: string } }) => item.metadata.name)).toEqual(['b']);
  });

  it('answers an empty list with an empty items array', async () => {
    const reply = await get(server, '/api/v1/namespaces/empty/pods', accept(METADATA_LIST_ACCEPT));
    expect(reply.json).toEqual({ kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', metadata: { resourceVersion: server.store.resourceVersion }, items: [] });
  });

  it('refuses a list asked for as the singular PartialObjectMetadata with 406, as asPartialObjectMetadata does', async () => {
    const reply = await get(server, '/api/v1/pods', accept(METADATA_ACCEPT));
    expect(reply.status).toBe(406);
    expect(reply.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'you requested PartialObjectMetadata, but the requested object is a list (*core.PodList)',
      reason: 'NotAcceptable',
      code: 406,
    });
  });

  it('refuses an Accept with no acceptable clause with 406, before reading the list options', async () => {
    const reply = await get(server, '/api/v1/pods?resourceVersionMatch=Exact', accept(ONLY('PartialObjectMetadataList', 'example.com')));
    expect(reply.status).toBe(406);
    expect(reply.json.message).toBe(NOT_ACCEPTABLE);
  });

  it('serves whole objects when it cannot convert and the Accept falls back to plain JSON', async () => {
    await start({ partialObjectMetadata: false });
    const reply = await get(server, '/api/v1/pods', accept(METADATA_LIST_ACCEPT));
    expect(reply.json.kind).toBe('PodList');
    expect(reply.json.items[0].spec).toBeDefined();
    expect(reply.json.items.map((item: { spec: unknown; status: unknown }) => [item.spec, item.status])).toEqual([
      [pod('a').spec, pod('a').status],
      [pod('b').spec, pod('b').status],
    ]);
  });
});

describe('GETs as PartialObjectMetadata', () => {
  it('answers one object as PartialObjectMetadata', async () => {
    const reply = await get(server, '/api/v1/namespaces/ns/pods/a', accept(METADATA_ACCEPT));
    expect(reply.json).toEqual({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: server.store.get(pods, 'ns', 'a')!.metadata });
  });

  it('refuses a GET asked for as a PartialObjectMetadataList with 406', async () => {
    const reply = await get(server, '/api/v1/namespaces/ns/pods/a', accept(ONLY('PartialObjectMetadataList')));
    expect(reply.status).toBe(406);
    expect(reply.json.message).toBe('you requested PartialObjectMetadataList, but the requested object is not a list (*core.Pod)');
    expect(reply.json.reason).toBe('NotAcceptable');
  });
});

describe('watches as PartialObjectMetadata', () => {
  async function watch(path: string, header: string): Promise<WatchStream> {
    const stream = await openWatch(server, path, accept(header));
    open.push(stream);
    return stream;
  }

  it('converts a streaming list: its initial events and the initial-events-end bookmark, then every event', async () => {
    const stream = await watch('/api/v1/namespaces/ns/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true', METADATA_ACCEPT);
    await stream.untilLines(3);
    const [a, b, end] = stream.events;
    expect(a).toEqual({ type: 'ADDED', object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: server.store.get(pods, 'ns', 'a')!.metadata } });
    expect(b!.object.kind).toBe('PartialObjectMetadata');
    expect(end).toEqual({
      type: 'BOOKMARK',
      object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { resourceVersion: server.store.resourceVersion, annotations: { 'k8s.io/initial-events-end': 'true' } } },
    });

    const updated = server.store.update(pods, { ...server.store.get(pods, 'ns', 'a')!, status: { phase: 'Succeeded' } });
    server.store.delete(pods, 'ns', 'b');
    await stream.untilLines(5);
    expect(stream.events[3]).toEqual({ type: 'MODIFIED', object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: updated.metadata } });
    expect(stream.events[4]!.type).toBe('DELETED');
    expect(Object.keys(stream.events[4]!.object)).toEqual(['kind', 'apiVersion', 'metadata']);
  });

  it('converts a selector exit (DELETED with the previous state) and periodic bookmarks', async () => {
    await start({ bookmarkIntervalMs: 20 });
    const stream = await watch(`/api/v1/namespaces/ns/pods?watch=1&labelSelector=app%3Dweb&allowWatchBookmarks=true&resourceVersion=${server.store.resourceVersion}`, METADATA_ACCEPT);
    const before = server.store.get(pods, 'ns', 'a')!;
    server.store.update(pods, { ...before, metadata: { ...before.metadata, labels: { app: 'db' } } });
    await stream.until((s) => s.events.some((e) => e.type === 'DELETED') && s.events.some((e) => e.type === 'BOOKMARK'), 'a DELETED and a BOOKMARK event');
    const deleted = stream.events.find((e) => e.type === 'DELETED')!;
    expect(deleted.object).toEqual({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { ...before.metadata, resourceVersion: server.store.resourceVersion } });
    const bookmark = stream.events.find((e) => e.type === 'BOOKMARK')!;
    expect(bookmark.object.kind).toBe('PartialObjectMetadata');
  });

  it('sends whole objects to a watch asked for as PartialObjectMetadataList: each conversion fails and the object goes as it is', async () => {
    const stream = await watch('/api/v1/namespaces/ns/pods?watch=1&resourceVersion=0', ONLY('PartialObjectMetadataList'));
    expect(stream.status).toBe(200);
    await stream.untilLines(2);
    expect(stream.events[0]!.object.kind).toBe('Pod');
    expect(stream.events[0]!.object.spec).toBeDefined();
    expect(stream.events.slice(0, 2).map((event) => [event.type, event.object.metadata.name, event.object.spec, event.object.status])).toEqual([
      ['ADDED', 'a', pod('a').spec, pod('a').status],
      ['ADDED', 'b', pod('b').spec, pod('b').status],
    ]);
  });

  it('passes ERROR events through unconverted', async () => {
    server.store.compact();
    const stream = await watch('/api/v1/namespaces/ns/pods?watch=1&resourceVersion=1', METADATA_ACCEPT);
    await stream.untilLines(1);
    expect(stream.events[0]!.type).toBe('ERROR');
    expect(stream.events[0]!.object).toMatchObject({ kind: 'Status', code: 410, reason: 'Expired' });
  });
});
