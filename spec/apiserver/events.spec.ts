import { events, eventsV1 } from '../../lib/resources/builtins';
import { startApiServer, type ApiServer } from '../../apiserver/src/server';
import { call, get, openWatch, type Reply } from './httpHelpers';

/**
 * Events, one kind served in two versions as the API server serves them: core `v1` Events and
 * `events.k8s.io/v1` Events are the same stored objects (kubernetes `pkg/registry/events`,
 * conversions of `pkg/apis/events/v1/conversion.go`), validated as
 * `pkg/apis/core/validation/events.go` validates them, selected by the fields of
 * `pkg/registry/core/event/strategy.go`, printed by `printEvent`.
 */

let server: ApiServer;

beforeEach(async () => {
  server = await startApiServer();
});

afterEach(() => server.close());

const CORE = '/api/v1/namespaces/ns/events';
const V1 = '/apis/events.k8s.io/v1/namespaces/ns/events';
const MERGE = { 'Content-Type': 'application/merge-patch+json' };
const TABLE = { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' };

/** What client-go's events recorder writes for a first occurrence. */
function recorded(name: string, overrides: object = {}): object {
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name, namespace: 'ns' },
    eventTime: '2026-01-02T03:04:05.123456Z',
    reportingController: 'example.com/widget-controller',
    reportingInstance: 'widget-controller-7d9f',
    action: 'Reconcile',
    reason: 'Started',
    regarding: { apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: 'web', uid: 'uid-web' },
    note: 'started the web pod',
    type: 'Normal',
    ...overrides,
  };
}

describe('one kind, two versions', () => {
  it('shows an Event written through events.k8s.io as the core Event it is, with the same name, uid and resourceVersion', async () => {
    const created = await call(server, 'POST', V1, { body: recorded('web.1') });
    expect(created.status).toBe(201);
    const core = await get(server, `${CORE}/web.1`);
    expect(core.json).toEqual({
      kind: 'Event',
      apiVersion: 'v1',
      metadata: created.json.metadata,
      involvedObject: { apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: 'web', uid: 'uid-web' },
      reason: 'Started',
      message: 'started the web pod',
      source: {},
      firstTimestamp: null,
      lastTimestamp: null,
      type: 'Normal',
      eventTime: '2026-01-02T03:04:05.123456Z',
      action: 'Reconcile',
      reportingComponent: 'example.com/widget-controller',
      reportingInstance: 'widget-controller-7d9f',
    });
    expect(server.store.get(events, 'ns', 'web.1')?.metadata.uid).toBe(created.json.metadata.uid);
    expect(server.store.get(eventsV1, 'ns', 'web.1')).toMatchObject({ note: 'started the web pod', deprecatedSource: {}, deprecatedFirstTimestamp: null });
  });

  it('shows a core Event (old style) through events.k8s.io with its deprecated fields', async () => {
    const created = await call(server, 'POST', CORE, {
      body: {
        metadata: { name: 'old.1' },
        involvedObject: { kind: 'Pod', namespace: 'ns', name: 'web' },
        reason: 'Pulled',
        message: 'pulled the image',
        source: { component: 'kubelet', host: 'node-1' },
        firstTimestamp: '2026-01-02T03:04:05Z',
        lastTimestamp: '2026-01-02T03:05:05Z',
        count: 3,
        type: 'Normal',
      },
    });
    expect(created.status).toBe(201);
    const v1 = await get(server, `${V1}/old.1`);
    expect(v1.json).toEqual({
      kind: 'Event',
      apiVersion: 'events.k8s.io/v1',
      metadata: created.json.metadata,
      eventTime: null,
      reason: 'Pulled',
      regarding: { kind: 'Pod', namespace: 'ns', name: 'web' },
      note: 'pulled the image',
      type: 'Normal',
      deprecatedSource: { component: 'kubelet', host: 'node-1' },
      deprecatedFirstTimestamp: '2026-01-02T03:04:05Z',
      deprecatedLastTimestamp: '2026-01-02T03:05:05Z',
      deprecatedCount: 3,
    });
  });

  it('updates a series through events.k8s.io and deletes through core v1, and watches of either version see each change at the same resourceVersion', async () => {
    await call(server, 'POST', V1, { body: recorded('web.1') });
    const coreWatch = await openWatch(server, `${CORE}?watch=1&resourceVersion=${server.store.resourceVersion}`);
    const v1Watch = await openWatch(server, `${V1}?watch=1&resourceVersion=${server.store.resourceVersion}`);
    try {
      const series = await call(server, 'PATCH', `${V1}/web.1`, { body: { series: { count: 2, lastObservedTime: '2026-01-02T03:09:05.000001Z' } }, headers: MERGE });
      expect([series.status, series.json.series]).toEqual([200, { count: 2, lastObservedTime: '2026-01-02T03:09:05.000001Z' }]);
      expect((await call(server, 'DELETE', `${CORE}/web.1`)).status).toBe(200);
      await coreWatch.untilLines(2);
      await v1Watch.untilLines(2);
      const seen = (stream: typeof coreWatch): unknown[] => stream.events.map((e) => [e.type, e.object.apiVersion, e.object.metadata.resourceVersion]);
      const rvs = coreWatch.events.map((e) => e.object.metadata.resourceVersion);
      expect(seen(coreWatch)).toEqual([
        ['MODIFIED', 'v1', rvs[0]],
        ['DELETED', 'v1', rvs[1]],
      ]);
      expect(seen(v1Watch)).toEqual([
        ['MODIFIED', 'events.k8s.io/v1', rvs[0]],
        ['DELETED', 'events.k8s.io/v1', rvs[1]],
      ]);
      expect(coreWatch.events[0]!.object.series).toEqual({ count: 2, lastObservedTime: '2026-01-02T03:09:05.000001Z' });
      expect((await get(server, `${V1}/web.1`)).status).toBe(404);
    } finally {
      coreWatch.close();
      v1Watch.close();
    }
  });

  it('applies through events.k8s.io, its fields owned in that version', async () => {
    const reply = await call(server, 'PATCH', `${V1}/web.1?fieldManager=recorder`, { body: JSON.stringify(recorded('web.1')), headers: { 'Content-Type': 'application/apply-patch+yaml' } });
    expect([reply.status, reply.json.metadata.managedFields.map((e: { manager: string; apiVersion: string }) => [e.manager, e.apiVersion])]).toEqual([201, [['recorder', 'events.k8s.io/v1']]]);
    expect(reply.json.metadata.managedFields[0].fieldsV1).toMatchObject({ 'f:regarding': {}, 'f:note': {}, 'f:eventTime': {} });
  });
});

describe('field selectors', () => {
  beforeEach(async () => {
    await call(server, 'POST', V1, { body: recorded('web.1') });
    await call(server, 'POST', V1, { body: recorded('db.1', { regarding: { apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: 'db', uid: 'uid-db' } }) });
    // An Event about a cluster-scoped object lives in default (legacy validation).
    await call(server, 'POST', '/api/v1/namespaces/default/events', { body: { metadata: { name: 'node.1' }, involvedObject: { kind: 'Node', name: 'node-1' }, reason: 'Ready', source: { component: 'kubelet' }, type: 'Normal' } });
  });

  const ALL_CORE = '/api/v1/events';
  const ALL_V1 = '/apis/events.k8s.io/v1/events';

  const names = (reply: Reply): string[] => reply.json.items.map((item: { metadata: { name: string } }) => item.metadata.name);

  it.each([
    ['what kubectl describe pod asks', CORE, 'involvedObject.kind=Pod,involvedObject.name=web,involvedObject.namespace=ns,involvedObject.uid=uid-web', ['web.1']],
    ['the source component', ALL_CORE, 'source=kubelet', ['node.1']],
    ['the reporting component', ALL_CORE, 'reportingComponent=example.com/widget-controller', ['db.1', 'web.1']],
    ['an empty namespace of the involved object', ALL_CORE, 'involvedObject.namespace=', ['node.1']],
    ['regarding, in events.k8s.io', ALL_V1, 'regarding.name=db,type=Normal', ['db.1']],
    ['the reporting controller, in events.k8s.io', ALL_V1, 'reportingController=example.com/widget-controller', ['db.1', 'web.1']],
  ])('selects by %s', async (_case, path, selector, expected) => {
    const reply = await get(server, `${path}?fieldSelector=${encodeURIComponent(selector)}`);
    expect([reply.status, names(reply)]).toEqual([200, expected]);
  });

  it("refuses another version's field names", async () => {
    const reply = await get(server, `${V1}?fieldSelector=involvedObject.name%3Dweb`);
    expect([reply.status, reply.json.message]).toEqual([400, 'field label not supported: involvedObject.name']);
  });
});

describe('validation', () => {
  const invalid = (message: string): string => `Event.events.k8s.io "e" is invalid: ${message}`;

  it.each([
    ['no eventTime', recorded('e', { eventTime: undefined }), invalid('eventTime: Required value')],
    ['another type', recorded('e', { type: 'Fatal' }), invalid('type: Invalid value: "": has invalid value: Fatal')],
    ['a series of one', recorded('e', { series: { count: 1, lastObservedTime: '2026-01-02T03:04:05.000000Z' } }), invalid('series.count: Invalid value: "": should be at least 2')],
    ['a deprecated count', recorded('e', { deprecatedCount: 2 }), invalid('count: Invalid value: "": needs to be unset')],
    [
      'no reporting controller, instance or action',
      recorded('e', { reportingController: undefined, reportingInstance: undefined, action: undefined }),
      invalid('[reportingController: Required value, reportingController: Invalid value: "": name part must be non-empty, ' +
        "reportingController: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), " +
        'reportingInstance: Required value, action: Required value]'),
    ],
  ])('refuses an events.k8s.io Event with %s (422)', async (_case, body, message) => {
    const reply = await call(server, 'POST', V1, { body });
    expect([reply.status, reply.json.reason, reply.json.message]).toEqual([422, 'Invalid', message]);
    expect(server.store.list(events)).toEqual([]);
  });

  it('refuses a change of anything but the series through events.k8s.io, and takes it through core v1', async () => {
    await call(server, 'POST', V1, { body: recorded('e') });
    const refused = await call(server, 'PATCH', `${V1}/e`, { body: { note: 'another note' }, headers: MERGE });
    expect([refused.status, refused.json.message]).toEqual([422, invalid('message: Invalid value: "another note": field is immutable')]);
    const taken = await call(server, 'PATCH', `${CORE}/e`, { body: { message: 'another note' }, headers: MERGE });
    expect([taken.status, taken.json.message]).toEqual([200, 'another note']);
  });

  it('refuses a core Event whose namespace is not its involved object\'s (old style)', async () => {
    const reply = await call(server, 'POST', CORE, { body: { metadata: { name: 'e' }, involvedObject: { kind: 'Pod', namespace: 'other', name: 'web' }, reason: 'R' } });
    expect([reply.status, reply.json.message]).toEqual([422, 'Event "e" is invalid: involvedObject.namespace: Invalid value: "other": does not match event.namespace']);
  });
});

describe('printing (kubectl get events)', () => {
  it('prints last seen, type, reason, object and message, and with -o wide the sub-object, source, first seen, count and name', async () => {
    const now = Date.now();
    const at = (ago: number): string => new Date(now - ago).toISOString().replace('Z', '000Z');
    // Ages of ten minutes and more print in whole minutes: a slow run does not change them.
    await call(server, 'POST', V1, { body: recorded('web.1', { eventTime: at(40 * 60_000), series: { count: 4, lastObservedTime: at(15 * 60_000) } }) });
    await call(server, 'POST', '/api/v1/namespaces/default/events', {
      body: { metadata: { name: 'node.1' }, involvedObject: { kind: 'Node', name: 'node-1', fieldPath: 'spec' }, reason: 'Ready', message: ' ready \n', source: { component: 'kubelet', host: 'node-1' }, firstTimestamp: at(20 * 60_000).replace(/\.\d+Z$/, 'Z'), type: 'Warning' },
    });
    for (const path of ['/api/v1/events', '/apis/events.k8s.io/v1/events']) {
      const table = (await get(server, path, { headers: TABLE })).json;
      expect(table.columnDefinitions.map((c: { name: string; priority: number }) => `${c.name}${c.priority === 1 ? '*' : ''}`)).toEqual([
        'Last Seen',
        'Type',
        'Reason',
        'Object',
        'Subobject*',
        'Source*',
        'Message',
        'First Seen*',
        'Count*',
        'Name*',
      ]);
      expect(table.rows.map((row: { cells: unknown[] }) => row.cells)).toEqual([
        ['20m', 'Warning', 'Ready', 'node/node-1', 'spec', 'kubelet, node-1', 'ready', '20m', 1, 'node.1'],
        ['15m', 'Normal', 'Started', 'pod/web', '', 'example.com/widget-controller, widget-controller-7d9f', 'started the web pod', '40m', 4, 'web.1'],
      ]);
    }
  });
});
