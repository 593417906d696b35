import { VirtualAction, VirtualTimeScheduler } from 'rxjs';
import { pods } from '../../lib/resources/builtins';
import type { ClusterStoreImpl } from '../../apiserver/src/clusterStore';
import { startApiServer, type ApiServer, type ApiServerOptions } from '../../apiserver/src/server';
import {
  defaultServerProfile,
  NEWEST_SERVER_VERSION,
  OLDEST_SERVER_VERSION,
  SERVER_VERSIONS,
  isServerVersion,
  serverProfile,
  type ServerVersion,
} from '../../apiserver/src/serverVersion';
import { get, openWatch } from './httpHelpers';

/**
 * The version profiles over real HTTP: what each modelled Kubernetes version answers to the
 * requests whose answers changed between versions (`serverVersion.ts` cites the sources).
 */

let server: ApiServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(version: ServerVersion, options: ApiServerOptions = {}): Promise<ApiServer> {
  server = await startApiServer({ serverVersion: version, bookmarkIntervalMs: 0, ...options });
  return server;
}

function seed(target: ApiServer, count: number): void {
  for (let i = 0; i < count; i++) target.store.create(pods, { metadata: { name: `pod-${String(i).padStart(2, '0')}`, namespace: 'ns' } });
}

const STREAMING_ON: readonly ServerVersion[] = ['1.32', '1.34', '1.35', '1.36'];
const STREAMING_OFF: readonly ServerVersion[] = ['1.27', '1.28', '1.29', '1.30', '1.31', '1.33'];

describe('the list of versions', () => {
  it('runs from 1.26 to 1.36, oldest first, and the newest is the default', async () => {
    expect([OLDEST_SERVER_VERSION, NEWEST_SERVER_VERSION]).toEqual(['1.26', '1.36']);
    expect(SERVER_VERSIONS).toEqual(['1.26', '1.27', '1.28', '1.29', '1.30', '1.31', '1.32', '1.33', '1.34', '1.35', '1.36']);
    server = await startApiServer();
    expect(server.profile).toEqual(defaultServerProfile());
    expect(server.profile).toEqual({ ...serverProfile(NEWEST_SERVER_VERSION), pagesListsAtResourceVersion0: true });
  });

  it('without a serverVersion, pages lists at resourceVersion "0" (no real version does)', async () => {
    server = await startApiServer();
    seed(server, 5);
    const reply = await get(server, '/api/v1/namespaces/ns/pods?limit=2&resourceVersion=0');
    expect([reply.json.items.length, reply.json.metadata.remainingItemCount]).toEqual([2, 3]);
    expect(SERVER_VERSIONS.filter((version) => serverProfile(version).pagesListsAtResourceVersion0)).toEqual([]);
  });

  it('names the WatchList gate of each version: absent before 1.27, on in 1.32 and from 1.34, off otherwise', () => {
    const gates = Object.fromEntries(SERVER_VERSIONS.map((version) => [version, serverProfile(version).watchList]));
    expect(gates).toEqual({
      '1.26': 'unsupported',
      ...Object.fromEntries(STREAMING_OFF.map((version) => [version, 'off'])),
      ...Object.fromEntries(STREAMING_ON.map((version) => [version, 'on'])),
    });
  });

  it('refuses a version it does not model, with the list of those it does', async () => {
    expect(isServerVersion('1.31')).toBe(true);
    expect(isServerVersion('1.25')).toBe(false);
    expect(() => serverProfile('1.99' as ServerVersion)).toThrow(new RangeError('unsupported serverVersion "1.99": expected one of 1.26, 1.27, 1.28, 1.29, 1.30, 1.31, 1.32, 1.33, 1.34, 1.35, 1.36'));
    await expect(startApiServer({ serverVersion: '1.2' as ServerVersion })).rejects.toThrow(RangeError);
  });
});

describe.each(SERVER_VERSIONS)('Kubernetes %s', (version) => {
  const minor = version.slice(2);

  it('reports its version on /version (with the emulated version from 1.33)', async () => {
    const reply = await get(await start(version), '/version');
    expect(reply.json).toMatchObject({ major: '1', minor, gitVersion: `v1.${minor}.0-rx-informer-loopback` });
    if (Number(minor) >= 33) expect(reply.json).toMatchObject({ emulationMajor: '1', emulationMinor: minor, minCompatibilityMajor: '1', minCompatibilityMinor: String(Number(minor) - 1) });
    else expect(reply.json.emulationMinor).toBeUndefined();
  });

  it('serves a list at resourceVersion "0" whole, ignoring limit: one response, no continue', async () => {
    const target = await start(version);
    seed(target, 5);
    for (const query of ['limit=2&resourceVersion=0', 'limit=2&resourceVersion=0&resourceVersionMatch=NotOlderThan']) {
      const reply = await get(target, `/api/v1/namespaces/ns/pods?${query}`);
      expect([query, reply.json.items.length, reply.json.metadata]).toEqual([query, 5, { resourceVersion: target.store.resourceVersion }]);
    }
  });

  it('pages a list at resourceVersion "" and a NotOlderThan list with a limit', async () => {
    const target = await start(version);
    seed(target, 5);
    for (const query of ['limit=2', `limit=2&resourceVersion=2&resourceVersionMatch=NotOlderThan`]) {
      const first = await get(target, `/api/v1/namespaces/ns/pods?${query}`);
      expect([query, first.json.items.length, first.json.metadata.remainingItemCount]).toEqual([query, 2, 3]);
      const second = await get(target, `/api/v1/namespaces/ns/pods?limit=2&continue=${first.json.metadata.continue}`);
      expect(second.json.items.map((pod: { metadata: { name: string } }) => pod.metadata.name)).toEqual(['pod-02', 'pod-03']);
    }
  });
});

describe('streaming lists: watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan', () => {
  const streamingList = (rv: string): string => `/api/v1/namespaces/ns/pods?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&resourceVersion=${rv}`;

  it.each(STREAMING_ON)('%s streams the state as ADDED events, then the initial-events-end bookmark', async (version) => {
    const target = await start(version);
    seed(target, 2);
    const stream = await openWatch(target, streamingList(''));
    await stream.untilLines(3);
    expect(stream.events.map((event) => event.type)).toEqual(['ADDED', 'ADDED', 'BOOKMARK']);
    expect(stream.events[2]!.object.metadata).toEqual({ resourceVersion: target.store.resourceVersion, annotations: { 'k8s.io/initial-events-end': 'true' } });
    stream.close();
  });

  it.each(STREAMING_OFF)('%s (WatchList gate off) answers 422: sendInitialEvents is forbidden for watch', async (version) => {
    const target = await start(version);
    const reply = await get(target, streamingList('5'));
    expect(reply.status).toBe(422);
    expect(reply.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
      reason: 'Invalid',
      details: {
        group: 'meta.k8s.io',
        kind: 'ListOptions',
        causes: [{ reason: 'FieldValueForbidden', message: 'Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled', field: 'sendInitialEvents' }],
      },
      code: 422,
    });
    // sendInitialEvents=false is refused alike: any value of the parameter needs the gate.
    expect((await get(target, '/api/v1/pods?watch=1&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&resourceVersion=5')).status).toBe(422);
  });

  it('1.26 (no such parameter) answers 422: resourceVersionMatch is forbidden for watch', async () => {
    const target = await start('1.26');
    const reply = await get(target, streamingList('5'));
    expect(reply.status).toBe(422);
    expect(reply.json.message).toBe('ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch');
    expect(reply.json.details.causes).toEqual([{ reason: 'FieldValueForbidden', message: 'Forbidden: resourceVersionMatch is forbidden for watch', field: 'resourceVersionMatch' }]);
  });

  it('1.26 at resourceVersion "" adds that resourceVersionMatch needs a resourceVersion', async () => {
    const reply = await get(await start('1.26'), streamingList(''));
    expect(reply.json.message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch, resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided]',
    );
    expect(reply.json.details.causes.map((cause: { message: string }) => cause.message)).toEqual([
      'Forbidden: resourceVersionMatch is forbidden for watch',
      'Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
    ]);
  });

  it('1.26 ignores sendInitialEvents alone: a plain watch, its state as ADDED events and no bookmark after them', async () => {
    const target = await start('1.26');
    seed(target, 2);
    const stream = await openWatch(target, '/api/v1/namespaces/ns/pods?watch=1&sendInitialEvents=true&allowWatchBookmarks=true');
    await stream.untilLines(2);
    target.store.create(pods, { metadata: { name: 'later', namespace: 'ns' } });
    await stream.untilLines(3);
    expect(stream.events.map((event) => `${event.type} ${event.object.metadata.name}`)).toEqual(['ADDED pod-00', 'ADDED pod-01', 'ADDED later']);
    stream.close();
  });

  it('sendInitialEvents on a list: ignored by 1.26, 422 from 1.27', async () => {
    expect((await get(await start('1.26'), '/api/v1/pods?sendInitialEvents=true')).status).toBe(200);
    await server!.close();
    const reply = await get(await start('1.27'), '/api/v1/pods?sendInitialEvents=true');
    expect([reply.status, reply.json.message]).toEqual([422, 'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list']);
  });
});

describe('a watch at resourceVersion "" or "0" that asks for nothing else', () => {
  /** The types of the lines up to and including the first event after the state. */
  async function legacyWatch(version: ServerVersion, rv: string): Promise<string[]> {
    const target = await start(version);
    seed(target, 2);
    const stream = await openWatch(target, `/api/v1/namespaces/ns/pods?watch=1&allowWatchBookmarks=true${rv === '' ? '' : `&resourceVersion=${rv}`}`);
    await stream.untilLines(2);
    target.store.create(pods, { metadata: { name: 'later', namespace: 'ns' } });
    await stream.until((s) => s.events.some((event) => event.object.metadata.name === 'later'), 'an event for the object named "later"');
    stream.close();
    await server!.close();
    server = undefined;
    return stream.events.map((event) => event.type);
  }

  it.each(STREAMING_ON)('%s makes it a streaming list (SetListOptionsDefaults): the state ends with the bookmark', async (version) => {
    for (const rv of ['', '0']) expect(await legacyWatch(version, rv)).toEqual(['ADDED', 'ADDED', 'BOOKMARK', 'ADDED']);
  });

  it.each(['1.26', ...STREAMING_OFF] as const)('%s sends the state as ADDED events with no bookmark', async (version) => {
    for (const rv of ['', '0']) expect(await legacyWatch(version, rv)).toEqual(['ADDED', 'ADDED', 'ADDED']);
  });
});

describe('a resourceVersion the server has not reached', () => {
  /** Resolves once the list request is waiting in the watch cache. */
  function waiting(target: ApiServer): Promise<void> {
    const store = target.store as ClusterStoreImpl;
    const original = store.waitForRv.bind(store);
    return new Promise((resolve) => {
      jest.spyOn(store, 'waitForRv').mockImplementation((...args) => {
        const result = original(...args);
        resolve();
        return result;
      });
    });
  }

  it('a list the watch cache serves waits for it, and answers once the store reaches it', async () => {
    const target = await start(NEWEST_SERVER_VERSION, { watchCacheWaitMs: 60_000 });
    const wanted = Number(target.store.resourceVersion) + 1;
    const isWaiting = waiting(target);
    const reply = get(target, `/api/v1/namespaces/ns/pods?resourceVersion=${wanted}`);
    await isWaiting;
    target.store.create(pods, { metadata: { name: 'arrives', namespace: 'ns' } });
    expect((await reply).json.metadata.resourceVersion).toBe(String(wanted));
  });

  it('waits 3 s by default (the watch cache blockTimeout), then answers 504 with Retry-After: 1', async () => {
    // Frames stop at 10 s: beyond it the server's etcd compactor would run (and reschedule) forever.
    const scheduler = new VirtualTimeScheduler(VirtualAction, 10_000);
    const target = await start(NEWEST_SERVER_VERSION, { scheduler });
    const current = Number(target.store.resourceVersion);
    const isWaiting = waiting(target);
    const reply = get(target, `/api/v1/pods?resourceVersion=${current + 10}`);
    await isWaiting;
    scheduler.flush();
    expect(scheduler.frame).toBe(3_000);
    const answer = await reply;
    expect([answer.status, answer.headers['retry-after']]).toEqual([504, '1']);
    expect(answer.json.message).toBe(`Timeout: Too large resource version: ${current + 10}, current: ${current}`);
    expect(answer.json.details).toEqual({ causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 });
  });

  it('a NotOlderThan list with a limit: etcd refuses at once before 1.31 (no Retry-After), the cache waits from 1.31', async () => {
    for (const [version, retryAfter] of [
      ['1.30', undefined],
      ['1.31', '1'],
    ] as const) {
      const target = await start(version, { watchCacheWaitMs: 0 });
      const current = Number(target.store.resourceVersion);
      const reply = await get(target, `/api/v1/pods?limit=5&resourceVersion=${current + 1}&resourceVersionMatch=NotOlderThan`);
      expect([version, reply.status, reply.headers['retry-after'], reply.json.details.retryAfterSeconds]).toEqual([version, 504, retryAfter, retryAfter && 1]);
      await target.close();
    }
  });

  it('an Exact list: a 500 from etcd before 1.34, a wait and a 504 from the watch cache from 1.34', async () => {
    for (const version of ['1.33', '1.34'] as const) {
      const target = await start(version, { watchCacheWaitMs: 0 });
      const wanted = Number(target.store.resourceVersion) + 1;
      const exact = await get(target, `/api/v1/pods?resourceVersion=${wanted}&resourceVersionMatch=Exact`);
      const legacyExact = await get(target, `/api/v1/pods?resourceVersion=${wanted}&limit=5`);
      for (const reply of [exact, legacyExact]) {
        if (version === '1.33') {
          expect(reply.status).toBe(500);
          expect(reply.json).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'etcdserver: mvcc: required revision is a future revision', code: 500 });
        } else {
          expect([reply.status, reply.json.reason, reply.headers['retry-after']]).toEqual([504, 'Timeout', '1']);
        }
      }
      await target.close();
    }
  });
});
