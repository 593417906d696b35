import { configMaps, pods } from '../../lib/resources/builtins';
import { startApiServer, type ApiServer, type ApiServerOptions } from '../../apiserver/src/server';
import { eventually } from '../support/eventually';
import { get, openWatch, type WatchStream } from './httpHelpers';

/** Watches over real HTTP: PROTOCOL.md B.5, B.6 and B.8. */

let server: ApiServer;
const open: WatchStream[] = [];
/**
 * The counter before the test's first write: a fresh server has already created its namespaces.
 * Expectations name resourceVersions relative to it, `rv(2)` being the test's first write.
 */
let base = 0;

async function start(options?: ApiServerOptions): Promise<ApiServer> {
  const started = await startApiServer(options);
  base = Number(started.store.resourceVersion) - 1;
  return started;
}

const rv = (relative: number): string => String(base + relative);

/** One turn of the event loop: how the fake-timer specs below let the server's I/O run (setImmediate is not faked there). */
const nextImmediate = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

beforeEach(async () => {
  server = await start();
});

afterEach(async () => {
  for (const stream of open.splice(0)) stream.close();
  jest.useRealTimers();
  await server.close();
});

async function watch(path: string): Promise<WatchStream> {
  const stream = await openWatch(server, path);
  open.push(stream);
  return stream;
}

function pod(name: string, labels: Record<string, string> = {}, namespace = 'ns'): { metadata: { name: string; namespace: string; labels: Record<string, string> } } {
  return { metadata: { name, namespace, labels } };
}

/** `TYPE name@rv` per event, rv relative to the test's start (see {@link rv}); ERROR events show their code. */
const summary = (stream: WatchStream): string[] =>
  stream.events.map((e) => {
    const version = e.object.metadata?.resourceVersion;
    return `${e.type} ${e.object.metadata?.name ?? ''}@${version === undefined ? e.object.code : Number(version) - base}`.trim();
  });

describe('watch', () => {
  it('answers 200 with chunked application/json and one newline-terminated JSON event per line', async () => {
    server.store.create(pods, pod('a'));
    const stream = await watch('/api/v1/namespaces/ns/pods?watch=1');
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toBe('application/json');
    expect(stream.headers['transfer-encoding']).toBe('chunked');
    await stream.untilLines(1);
    expect(stream.raw.endsWith('\n')).toBe(true);
    expect(stream.events[0]).toEqual({ type: 'ADDED', object: expect.objectContaining({ kind: 'Pod', apiVersion: 'v1' }) });
  });

  it('starts with synthetic ADDED events for the current state when resourceVersion is unset or "0", then streams changes', async () => {
    server.store.create(pods, pod('a'));
    server.store.create(pods, pod('b'));
    for (const query of ['watch=true', 'watch=1&resourceVersion=0']) {
      const stream = await watch(`/api/v1/namespaces/ns/pods?${query}`);
      await stream.untilLines(2);
      expect(summary(stream)).toEqual(['ADDED a@2', 'ADDED b@3']);
      stream.close();
    }
    const stream = await watch('/api/v1/namespaces/ns/pods?watch=true');
    await stream.untilLines(2);
    server.store.update(pods, pod('a', { x: '1' }));
    await stream.untilLines(3);
    expect(summary(stream)[2]).toBe('MODIFIED a@4');
  });

  it('replays history after an exact resourceVersion without synthetic events', async () => {
    server.store.create(pods, pod('a'));
    const from = server.store.resourceVersion;
    server.store.create(pods, pod('b'));
    server.store.update(pods, pod('a', { v: '2' }));
    server.store.delete(pods, 'ns', 'b');
    const stream = await watch(`/api/v1/pods?watch=1&resourceVersion=${from}`);
    await stream.untilLines(3);
    expect(summary(stream)).toEqual(['ADDED b@3', 'MODIFIED a@4', 'DELETED b@5']);
  });

  it('sends DELETED with the last state of the object and the deletion resourceVersion', async () => {
    server.store.create(pods, pod('a', { app: 'web' }));
    const stream = await watch(`/api/v1/pods?watch=1&resourceVersion=${server.store.resourceVersion}`);
    server.store.delete(pods, 'ns', 'a');
    await stream.untilLines(1);
    const [deleted] = stream.events;
    expect(deleted!.type).toBe('DELETED');
    expect(deleted!.object.metadata.labels).toEqual({ app: 'web' });
    expect(deleted!.object.metadata.resourceVersion).toBe(server.store.resourceVersion);
  });

  it('answers a resourceVersion older than history with 200, one ERROR event (410 Expired, "too old resource version: X (Y)"), then the end', async () => {
    server.store.create(pods, pod('a'));
    server.store.create(pods, pod('b'));
    server.store.compact();
    const oldest = server.store.resourceVersion;
    const stream = await watch(`/api/v1/pods?watch=1&resourceVersion=${rv(2)}`);
    await stream.untilClosed();
    expect(stream.status).toBe(200);
    expect(stream.outcome).toBe('end');
    expect(stream.events).toEqual([
      {
        type: 'ERROR',
        object: {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: `too old resource version: ${rv(2)} (${oldest})`,
          reason: 'Expired',
          code: 410,
        },
      },
    ]);
  });

  it('expires resourceVersions that fell out of the bounded history window', async () => {
    await server.close();
    server = await start({ historyLimit: 3 });
    for (let i = 0; i < 6; i++) server.store.create(pods, pod(`p${i}`));
    // rv 2..7 were created; the window keeps 5, 6, 7, so watching from 4 works and from 3 does not.
    const kept = await watch(`/api/v1/pods?watch=1&resourceVersion=${rv(4)}`);
    await kept.untilLines(3);
    expect(summary(kept)).toEqual(['ADDED p3@5', 'ADDED p4@6', 'ADDED p5@7']);
    const lost = await watch(`/api/v1/pods?watch=1&resourceVersion=${rv(3)}`);
    await lost.untilClosed();
    expect(lost.events[0]!.object.message).toBe(`too old resource version: ${rv(3)} (${rv(4)})`);
  });

  it('keeps a separate history per resource, so churn elsewhere does not expire a quiet resource', async () => {
    await server.close();
    server = await start({ historyLimit: 2 });
    server.store.create(pods, pod('a'));
    const from = server.store.resourceVersion;
    for (let i = 0; i < 10; i++) server.store.create(configMaps, { metadata: { name: `c${i}`, namespace: 'ns' } });
    server.store.create(pods, pod('b'));
    const stream = await watch(`/api/v1/pods?watch=1&resourceVersion=${from}`);
    await stream.untilLines(1);
    expect(summary(stream)).toEqual(['ADDED b@13']);
  });

  it('filters by namespace', async () => {
    const stream = await watch('/api/v1/namespaces/one/pods?watch=1');
    server.store.create(pods, pod('x', {}, 'two'));
    server.store.create(pods, pod('y', {}, 'one'));
    await stream.untilLines(1);
    expect(summary(stream)).toEqual(['ADDED y@3']);
  });

  it('applies selectors: an object that starts matching arrives as ADDED, one that stops matching as DELETED', async () => {
    server.store.create(pods, pod('a', { app: 'web' }));
    server.store.create(pods, pod('b', { app: 'db' }));
    const stream = await watch(`/api/v1/pods?watch=1&labelSelector=app%3Dweb&resourceVersion=${server.store.resourceVersion}`);
    server.store.update(pods, pod('b', { app: 'web' })); // starts matching
    server.store.update(pods, pod('a', { app: 'web', v: '2' })); // still matching
    server.store.update(pods, pod('a', { app: 'db' })); // stops matching
    server.store.update(pods, pod('a', { app: 'db', v: '3' })); // never seen
    server.store.delete(pods, 'ns', 'b'); // deleted while matching
    await stream.untilLines(4);
    expect(summary(stream)).toEqual(['ADDED b@4', 'MODIFIED a@5', 'DELETED a@6', 'DELETED b@8']);
    // The stop-matching DELETED carries the previous (matching) state at the event's resourceVersion.
    expect(stream.events[2]!.object.metadata.labels).toEqual({ app: 'web', v: '2' });
  });

  it('applies field selectors on metadata.name, also to the synthetic initial events', async () => {
    server.store.create(pods, pod('a'));
    server.store.create(pods, pod('b'));
    const stream = await watch('/api/v1/pods?watch=1&fieldSelector=metadata.name%3Db');
    server.store.update(pods, pod('a', { x: 'y' }));
    server.store.update(pods, pod('b', { x: 'y' }));
    await stream.untilLines(2);
    expect(summary(stream)).toEqual(['ADDED b@3', 'MODIFIED b@5']);
  });

  it('watches one object when ?watch is given on its own path', async () => {
    server.store.create(pods, pod('a'));
    server.store.create(pods, pod('b'));
    const stream = await watch('/api/v1/namespaces/ns/pods/b?watch=1');
    server.store.update(pods, pod('a', { x: '1' }));
    server.store.update(pods, pod('b', { x: '1' }));
    await stream.untilLines(2);
    expect(summary(stream)).toEqual(['ADDED b@3', 'MODIFIED b@5']);
  });

  it('delivers megabytes of large events complete and in order to a client that reads slower than the server writes', async () => {
    const big = 'x'.repeat(64 * 1024);
    server.store.create(configMaps, { metadata: { name: 'big', namespace: 'ns' }, data: { v: '0', big } });
    const stream = await watch(`/api/v1/configmaps?watch=1&resourceVersion=${server.store.resourceVersion}`);
    for (let i = 1; i <= 300; i++) server.store.update(configMaps, { metadata: { name: 'big', namespace: 'ns' }, data: { v: String(i), big } });
    await stream.untilLines(300);
    expect(stream.events.map((e) => e.object.data.v)).toEqual(Array.from({ length: 300 }, (_, i) => String(i + 1)));
    expect(stream.events.every((e) => e.object.data.big === big)).toBe(true);
  });

  it('delivers a burst of thousands of events complete and in order', async () => {
    server.store.create(pods, pod('a'));
    const stream = await watch(`/api/v1/pods?watch=1&resourceVersion=${server.store.resourceVersion}`);
    for (let i = 0; i < 3000; i++) server.store.update(pods, pod('a', { i: String(i) }));
    await stream.untilLines(3000);
    const rvs = stream.events.map((e) => Number(e.object.metadata.resourceVersion));
    expect(rvs).toEqual(Array.from({ length: 3000 }, (_, i) => base + i + 3));
  });

  describe('streaming list (sendInitialEvents)', () => {
    it('sends ADDED for the current state, then a BOOKMARK annotated k8s.io/initial-events-end at the current rv, then changes', async () => {
      server.store.create(pods, pod('a'));
      server.store.create(pods, pod('b'));
      const stream = await watch('/api/v1/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=');
      await stream.untilLines(3);
      expect(stream.events[2]).toEqual({
        type: 'BOOKMARK',
        object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: rv(3), annotations: { 'k8s.io/initial-events-end': 'true' } } },
      });
      server.store.create(pods, pod('c'));
      await stream.untilLines(4);
      expect(summary(stream)).toEqual(['ADDED a@2', 'ADDED b@3', 'BOOKMARK @3', 'ADDED c@4']);
    });

    it('rejects sendInitialEvents without resourceVersionMatch=NotOlderThan with 422 Invalid', async () => {
      const reply = await get(server, '/api/v1/pods?watch=1&sendInitialEvents=true');
      expect(reply.status).toBe(422);
      expect(reply.json.reason).toBe('Invalid');
      expect(reply.json.message).toBe(
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
      );
      expect(reply.json.details).toMatchObject({ group: 'meta.k8s.io', kind: 'ListOptions' });
    });

    it('starts after the given resourceVersion without initial events when sendInitialEvents=false', async () => {
      server.store.create(pods, pod('a'));
      const from = server.store.resourceVersion;
      server.store.create(pods, pod('b'));
      const stream = await watch(`/api/v1/pods?watch=1&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&resourceVersion=${from}`);
      await stream.untilLines(1);
      expect(summary(stream)).toEqual(['ADDED b@3']);
    });
  });

  describe('bookmarks and timeouts', () => {
    it('sends periodic bookmarks with only the resourceVersion when allowWatchBookmarks is set', async () => {
      await server.close();
      server = await start({ bookmarkIntervalMs: 20 });
      server.store.create(pods, pod('a'));
      const stream = await watch(`/api/v1/pods?watch=1&allowWatchBookmarks=true&resourceVersion=${server.store.resourceVersion}`);
      await stream.untilLines(2);
      expect(stream.events.slice(0, 2)).toEqual([
        { type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: rv(2) } } },
        { type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: rv(2) } } },
      ]);
    });

    it('never bookmarks below the resourceVersion a watch started from', async () => {
      await server.close();
      server = await start({ bookmarkIntervalMs: 10 });
      const stream = await watch('/api/v1/pods?watch=1&allowWatchBookmarks=true&resourceVersion=50');
      await stream.untilLines(1);
      expect(stream.events[0]!.object.metadata.resourceVersion).toBe('50');
    });

    it('sends no bookmarks without allowWatchBookmarks', async () => {
      await server.close();
      server = await start({ bookmarkIntervalMs: 10 });
      const stream = await watch(`/api/v1/pods?watch=1&resourceVersion=${server.store.resourceVersion}`);
      const plain = await watch(`/api/v1/pods?watch=1&allowWatchBookmarks=true&resourceVersion=${server.store.resourceVersion}`);
      await plain.untilLines(3);
      expect(stream.lines).toEqual([]);
    });

    it('sends a bookmark 2 s before timeoutSeconds and then ends the response cleanly', async () => {
      jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask', 'Date', 'hrtime', 'performance'] });
      const stream = await watch(`/api/v1/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds=5&resourceVersion=${server.store.resourceVersion}`);
      jest.advanceTimersByTime(2_999);
      server.store.create(pods, pod('a'));
      await eventually(() => expect(stream.lines.length).toBeGreaterThanOrEqual(1), { pause: nextImmediate });
      jest.advanceTimersByTime(1);
      await eventually(() => expect(stream.lines.length).toBeGreaterThanOrEqual(2), { pause: nextImmediate });
      expect(summary(stream)).toEqual(['ADDED a@2', 'BOOKMARK @2']);
      expect(stream.outcome).toBe('open');
      jest.advanceTimersByTime(2_000);
      await eventually(() => expect(stream.outcome).toBe('end'), { pause: nextImmediate });
    });

    it('holds a watch whose timeoutSeconds is past what one Node timer holds (24.8 days), without a TimeoutOverflowWarning', async () => {
      const warnings: string[] = [];
      const onWarning = (warning: Error): void => void warnings.push(warning.name);
      process.on('warning', onWarning);
      try {
        const stream = await watch('/api/v1/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds=2592000');
        // A plain setTimeout of 30 days fires after 1 ms: the response would have ended by now.
        await new Promise((resolve) => setTimeout(resolve, 50));
        expect(stream.outcome).toBe('open');
        expect(warnings).toEqual([]);
      } finally {
        process.off('warning', onWarning);
      }
    });

    it('ends a watch after timeoutSeconds even without bookmarks', async () => {
      jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask', 'Date', 'hrtime', 'performance'] });
      const stream = await watch('/api/v1/pods?watch=1&timeoutSeconds=30');
      jest.advanceTimersByTime(29_999);
      await new Promise((resolve) => setImmediate(resolve));
      expect(stream.outcome).toBe('open');
      jest.advanceTimersByTime(1);
      await eventually(() => expect(stream.outcome).toBe('end'), { pause: nextImmediate });
    });
  });
});
