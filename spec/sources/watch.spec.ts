import type { ServerResponse } from 'node:http';
import { take, toArray, VirtualTimeScheduler, firstValueFrom } from 'rxjs';
import { IdleTimeoutError, NetworkError, ProtocolError, StatusError } from '../../lib/base/errors';
import type { WatchEvent } from '../../lib/sources/listerWatcher';
import { watch$ } from '../../lib/sources/watch';
import { defineResource } from '../../lib/resources/resource';
import { eventually, EVENTUALLY_MS, within } from '../support/eventually';
import { collect, kubeConfigFor, sendJson, startServer, tokenForTests, type TestServer } from './support';

const pods = defineResource({ group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true });
const widgets = defineResource({ group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget', namespaced: true });

const pod = (name: string, resourceVersion: string): Record<string, unknown> => ({
  kind: 'Pod',
  apiVersion: 'v1',
  metadata: { name, namespace: 'default', resourceVersion },
});
const line = (type: string, object: unknown): string => `${JSON.stringify({ type, object })}\n`;
const names = (events: readonly WatchEvent[]): string[] => events.map((e) => `${e.type} ${e.object.metadata.name ?? e.object.metadata.resourceVersion}`);
const nextTick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('watch$', () => {
  let server: TestServer;
  let responses: ServerResponse[];
  afterEach(async () => {
    await server?.close();
  });

  /** A server whose watch responses stay open for the test to write into. */
  async function startWatchServer(): Promise<TestServer> {
    responses = [];
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.flushHeaders();
      responses.push(res);
    });
    return server;
  }

  /** A server answering every watch with this body, then ending the response. */
  async function startCannedServer(body: string): Promise<TestServer> {
    server = await startServer((_req, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(body));
    return server;
  }

  it('sends the watch query as client-go and kubectl do (watch=true): resourceVersion, bookmarks, timeout and selectors', async () => {
    await startCannedServer('');
    await collect(
      watch$(kubeConfigFor({ server: server.url }), widgets, {
        namespace: 'ns1',
        resourceVersion: '10245',
        allowWatchBookmarks: true,
        timeoutSeconds: 290,
        labelSelector: 'app=web',
        fieldSelector: 'metadata.name=w',
      }),
    );
    const seen = await server.request(0);
    expect(seen.path).toBe('/apis/example.com/v1/namespaces/ns1/widgets');
    expect(Object.fromEntries(seen.query)).toEqual({
      watch: 'true',
      resourceVersion: '10245',
      allowWatchBookmarks: 'true',
      timeoutSeconds: '290',
      labelSelector: 'app=web',
      fieldSelector: 'metadata.name=w',
    });
  });

  it('asks for a streaming list with resourceVersionMatch=NotOlderThan when sendInitialEvents is set', async () => {
    await startCannedServer('');
    await collect(watch$(kubeConfigFor({ server: server.url }), pods, { resourceVersion: '', sendInitialEvents: true, allowWatchBookmarks: true }));
    expect(Object.fromEntries((await server.request(0)).query)).toEqual({
      watch: 'true',
      resourceVersion: '',
      resourceVersionMatch: 'NotOlderThan',
      sendInitialEvents: 'true',
      allowWatchBookmarks: 'true',
    });
  });

  it('emits every event of a stream, including the initial-events-end bookmark, and completes at its clean end', async () => {
    const bookmark = { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: '12', annotations: { 'k8s.io/initial-events-end': 'true' } } };
    await startCannedServer(line('ADDED', pod('a', '10')) + line('MODIFIED', pod('a', '11')) + line('BOOKMARK', bookmark) + line('DELETED', pod('a', '13')));
    const result = await collect(watch$(kubeConfigFor({ server: server.url }), pods));
    expect(result.completed).toBe(true);
    expect(names(result.values)).toEqual(['ADDED a', 'MODIFIED a', 'BOOKMARK 12', 'DELETED a']);
    expect(result.values[2]?.object).toEqual(bookmark);
  });

  it('parses events however the bytes are cut into chunks', async () => {
    await startWatchServer();
    const events: WatchEvent[] = [];
    const done = new Promise<void>((resolve) => watch$(kubeConfigFor({ server: server.url }), pods).subscribe({ next: (e) => events.push(e), complete: resolve }));
    await server.request(0);
    await eventually(() => expect(responses.length).toBeGreaterThan(0), { pause: nextTick });
    const res = responses[0] as ServerResponse;
    const bytes = Buffer.from(line('ADDED', pod('café-☃', '1')) + line('ADDED', pod('b', '2')) + line('ADDED', pod('c', '3')));
    for (const size of [1, 2, 3, 5, 8, 13, 40, 400]) {
      const start = Math.min(bytes.length, [1, 2, 3, 5, 8, 13, 40].filter((s) => s < size).reduce((a, b) => a + b, 0));
      if (start < bytes.length) {
        res.write(bytes.subarray(start, Math.min(bytes.length, start + size)));
        await nextTick();
      }
    }
    res.end();
    await within(done, EVENTUALLY_MS, 'the watch to complete once its body ends', () => names(events));
    expect(names(events)).toEqual(['ADDED café-☃', 'ADDED b', 'ADDED c']);
  });

  it('fails with StatusError 410 on an ERROR event carrying an Expired Status, after the events before it', async () => {
    const status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'too old resource version: 1 (5)', reason: 'Expired', code: 410 };
    await startCannedServer(line('ADDED', pod('a', '6')) + line('ERROR', status));
    const result = await collect(watch$(kubeConfigFor({ server: server.url }), pods, { resourceVersion: '1' }));
    expect(names(result.values)).toEqual(['ADDED a']);
    expect(result.error).toBeInstanceOf(StatusError);
    expect(result.error).toMatchObject({ code: 410, reason: 'Expired' });
  });

  it.each([
    ['an ERROR event whose object is not a Status', line('ERROR', { metadata: { name: 'x' } }), 'error-event-not-status'],
    ['an event of an unknown type', line('SYNC', pod('a', '1')), 'unknown-event-type'],
    ['an event without a type', '{"object":{"metadata":{}}}\n', 'unknown-event-type'],
    ['an ADDED event whose object has no metadata', line('ADDED', { kind: 'Pod' }), 'missing-metadata'],
    ['an event without an object', '{"type":"MODIFIED"}\n', 'missing-metadata'],
    ['a BOOKMARK without a resourceVersion', line('BOOKMARK', { kind: 'Pod', metadata: {} }), 'missing-metadata'],
    ['a line that is not JSON', 'this is not json\n', 'malformed-json'],
    ['a line that is JSON but not an object', '42\n', 'malformed-json'],
    ['a stream that ends inside an event', line('ADDED', pod('a', '1')) + '{"type":"ADDED","obj', 'truncated-stream'],
  ])('fails with ProtocolError for %s', async (_name, body, problem) => {
    await startCannedServer(body);
    const result = await collect(watch$(kubeConfigFor({ server: server.url }), pods));
    expect(result.error).toBeInstanceOf(ProtocolError);
    expect((result.error as ProtocolError).problem).toBe(problem);
  });

  it('fails with ProtocolError non-json-body when a 200 answers HTML', async () => {
    server = await startServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end('<html>login</html>'));
    const result = await collect(watch$(kubeConfigFor({ server: server.url }), pods));
    expect(result.error).toMatchObject({ kind: 'protocol', problem: 'non-json-body', excerpt: '<html>login</html>' });
  });

  it('fails with NetworkError when the connection is cut mid-event', async () => {
    await startWatchServer();
    const result = collect(watch$(kubeConfigFor({ server: server.url }), pods));
    await server.request(0);
    await eventually(() => expect(responses.length).toBeGreaterThan(0), { pause: nextTick });
    const res = responses[0] as ServerResponse;
    res.write(line('ADDED', pod('a', '1')) + '{"type":"ADD');
    await nextTick();
    res.socket?.destroy();
    const { values, error } = await result;
    expect(names(values)).toEqual(['ADDED a']);
    expect(error).toBeInstanceOf(NetworkError);
  });

  it.each([
    [401, { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 }, {}, { code: 401, reason: 'Unauthorized' }],
    [
      429,
      { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'slow down', reason: 'TooManyRequests', details: { retryAfterSeconds: 3 }, code: 429 },
      { 'Retry-After': '3' },
      { code: 429, reason: 'TooManyRequests', retryAfterSeconds: 3 },
    ],
    [504, { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'Timeout: Too large resource version: 9, current: 5', reason: 'Timeout', code: 504 }, {}, { code: 504 }],
  ])('fails with StatusError for an HTTP %i with a Status body', async (code, body, headers, expected) => {
    server = await startServer((_req, res) => sendJson(res, code, body, headers));
    const result = await collect(watch$(kubeConfigFor({ server: server.url, user: { token: tokenForTests } }), pods));
    expect(result.error).toBeInstanceOf(StatusError);
    expect(result.error).toMatchObject(expected);
    expect(`${(result.error as Error).message} ${JSON.stringify(result.error)}`).not.toContain(tokenForTests);
  });

  it('fails with StatusError 429 and its Retry-After for the plain-text priority-and-fairness answer', async () => {
    server = await startServer((_req, res) => res.writeHead(429, { 'Content-Type': 'text/plain; charset=utf-8', 'Retry-After': '1' }).end('Too many requests, please try again later.\n'));
    const result = await collect(watch$(kubeConfigFor({ server: server.url }), pods));
    expect(result.error).toMatchObject({ kind: 'status', code: 429, reason: 'TooManyRequests', retryAfterSeconds: 1 });
  });

  it('fails with line-too-long and closes the connection when a line outgrows maxLineBytes', async () => {
    await startWatchServer();
    const result = collect(watch$(kubeConfigFor({ server: server.url }), pods, { maxLineBytes: 1024 }));
    const seen = await server.request(0);
    await eventually(() => expect(responses.length).toBeGreaterThan(0), { pause: nextTick });
    (responses[0] as ServerResponse).write('{"type":"ADDED","object":' + ' '.repeat(2048));
    expect((await result).error).toMatchObject({ kind: 'protocol', problem: 'line-too-long' });
    await within(seen.closed, EVENTUALLY_MS, 'the watch request’s connection to close');
  });

  it('aborts the request on unsubscribe: the server sees the socket close and nothing more is emitted', async () => {
    await startWatchServer();
    const events = firstValueFrom(watch$(kubeConfigFor({ server: server.url }), pods).pipe(take(2), toArray()));
    const seen = await server.request(0);
    await eventually(() => expect(responses.length).toBeGreaterThan(0), { pause: nextTick });
    (responses[0] as ServerResponse).write(line('ADDED', pod('a', '1')) + line('ADDED', pod('b', '2')) + line('ADDED', pod('c', '3')));
    expect(names(await within(events, EVENTUALLY_MS, 'the first two watch events'))).toEqual(['ADDED a', 'ADDED b']);
    await within(seen.closed, EVENTUALLY_MS, 'the watch request’s connection to close');
  });

  describe('idle timeout', () => {
    it('fails with IdleTimeoutError when no byte arrives for idleTimeoutMs, counted from the last chunk', async () => {
      await startWatchServer();
      const scheduler = new VirtualTimeScheduler();
      const events: WatchEvent[] = [];
      let failure: unknown;
      let failedAt = -1;
      watch$(kubeConfigFor({ server: server.url }), pods, { idleTimeoutMs: 1000, scheduler }).subscribe({
        next: (event) => events.push(event),
        error: (error: unknown) => {
          failure = error;
          failedAt = scheduler.now();
        },
      });
      const seen = await server.request(0);
      await eventually(() => expect(responses.length).toBeGreaterThan(0), { pause: nextTick });
      // Move virtual time to 600 ms, then let a chunk arrive there.
      scheduler.schedule(() => undefined, 600);
      scheduler.maxFrames = 600;
      scheduler.flush();
      (responses[0] as ServerResponse).write(line('ADDED', pod('a', '1')));
      await eventually(() => expect(events.length).toBeGreaterThan(0), { pause: nextTick });
      expect(failure).toBeUndefined();
      scheduler.maxFrames = Number.POSITIVE_INFINITY;
      scheduler.flush();
      expect(failure).toBeInstanceOf(IdleTimeoutError);
      expect(failure).toMatchObject({ kind: 'timeout', idleMs: 1000 });
      expect(failedAt).toBe(1600);
      await within(seen.closed, EVENTUALLY_MS, 'the watch request’s connection to close');
    });

    it('does not fire after a clean end', async () => {
      await startCannedServer(line('ADDED', pod('a', '1')));
      const scheduler = new VirtualTimeScheduler();
      const result = await collect(watch$(kubeConfigFor({ server: server.url }), pods, { idleTimeoutMs: 1000, scheduler }));
      expect(result.completed).toBe(true);
      expect(scheduler.actions).toHaveLength(0);
    });
  });
});

describe('watch$ error excerpts of sensitive resources', () => {
  let server: TestServer;
  afterEach(async () => {
    await server?.close();
  });

  const secrets = defineResource({ group: '', version: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true });
  const tokens = defineResource({ group: 'example.com', version: 'v1', plural: 'tokens', kind: 'Token', namespaced: true });
  const PAYLOAD = 'c3VwZXItc2VjcmV0LXBhc3N3b3Jk';

  /** Watches `resource` against a server that sends one corrupted line carrying the payload. */
  async function failureOf(resource: typeof secrets, withholdExcerpts?: boolean): Promise<ProtocolError> {
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"type":"ADDED","object":{"kind":"Secret","data":{"password":"${PAYLOAD}"}\n`);
    });
    const result = await collect(watch$(kubeConfigFor({ server: server.url }), resource, withholdExcerpts === undefined ? {} : { withholdExcerpts }));
    expect(result.error).toBeInstanceOf(ProtocolError);
    return result.error as ProtocolError;
  }

  it('withholds the excerpt of a malformed secrets line by default, and says so', async () => {
    const error = await failureOf(secrets);
    expect(error.problem).toBe('malformed-json');
    expect(error.excerpt).toBeUndefined();
    expect(error.message).toContain('excerpt withheld: secrets');
    expect(`${error.message} ${error.stack ?? ''}`).not.toContain(PAYLOAD);
  });

  it('keeps the excerpt for other resources unless told to withhold it', async () => {
    expect((await failureOf(tokens)).excerpt).toContain(PAYLOAD);
    await server.close();
    const withheld = await failureOf(tokens, true);
    expect(withheld.excerpt).toBeUndefined();
    expect(withheld.message).not.toContain(PAYLOAD);
  });

  it('quotes secrets too when withholding is turned off', async () => {
    expect((await failureOf(secrets, false)).excerpt).toContain(PAYLOAD);
  });
});
