import { configMaps, pods } from '../../lib/resources/builtins';
import { startApiServer, type ApiServer } from '../../apiserver/src/server';
import { GARBAGE_LINE } from '../../apiserver/src/watchWriter';
import { eventually } from '../support/eventually';
import { get, openWatch, type WatchStream } from './httpHelpers';

/** Every fault kind of SERVER_API.md triggers exactly as specified, on exactly the matching requests. */

let server: ApiServer;
const open: WatchStream[] = [];

beforeEach(async () => {
  server = await startApiServer();
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

function createPods(count: number, prefix = 'p'): void {
  for (let i = 0; i < count; i++) server.store.create(pods, { metadata: { name: `${prefix}${i}`, namespace: 'ns' } });
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await tick();
}

function fakeTimers(): void {
  jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask', 'Date', 'hrtime', 'performance'] });
}

describe('status faults', () => {
  it('answers with a Status of the given code, reason and message, and a Retry-After header', async () => {
    server.faults.inject({ kind: 'status', code: 429, message: 'slow down', retryAfterSeconds: 3 });
    const reply = await get(server, '/api/v1/pods');
    expect(reply.status).toBe(429);
    expect(reply.headers['retry-after']).toBe('3');
    expect(reply.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'slow down',
      reason: 'TooManyRequests',
      details: { retryAfterSeconds: 3 },
      code: 429,
    });
    expect((await get(server, '/api/v1/pods')).status).toBe(200);
  });

  it('fills reason and message from the code as the API server constructors do', async () => {
    server.faults.inject({ kind: 'status', code: 500 });
    server.faults.inject({ kind: 'status', code: 503, reason: 'ServiceUnavailable' });
    const internal = await get(server, '/api/v1/pods');
    expect(internal.json).toMatchObject({ code: 500, reason: 'InternalError', message: 'Internal error occurred: injected fault' });
    expect(internal.headers['retry-after']).toBeUndefined();
    expect((await get(server, '/api/v1/pods')).json).toMatchObject({ code: 503, reason: 'ServiceUnavailable' });
  });

  it('answers a watch request with the HTTP error, not a stream', async () => {
    server.faults.inject({ kind: 'status', code: 403 }, { verb: 'watch' });
    const reply = await get(server, '/api/v1/pods?watch=1');
    expect([reply.status, reply.json.reason]).toEqual([403, 'Forbidden']);
  });

  it('answers the APF plain-text 429 with a Retry-After header', async () => {
    server.faults.inject({ kind: 'plainText429', retryAfterSeconds: 1 });
    const reply = await get(server, '/api/v1/pods');
    expect(reply.status).toBe(429);
    expect(reply.headers['retry-after']).toBe('1');
    expect(reply.headers['content-type']).toMatch(/^text\/plain/);
    expect(reply.text).toBe('Too many requests, please try again later.\n');
  });

  it('answers 504 "Too large resource version" with the ResourceVersionTooLarge cause', async () => {
    server.faults.inject({ kind: 'tooLargeResourceVersion' });
    const reply = await get(server, '/api/v1/pods?resourceVersion=1');
    const current = Number(server.store.resourceVersion);
    expect(reply.status).toBe(504);
    expect(reply.json).toMatchObject({
      reason: 'Timeout',
      message: `Timeout: Too large resource version: ${current + 1}, current: ${current}`,
      details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 },
    });
  });
});

describe('matching', () => {
  it('applies a fault to the next `times` matching requests only, by verb and resource', async () => {
    server.faults.inject({ kind: 'status', code: 500 }, { verb: 'list', resource: 'configmaps', times: 2 });
    expect((await get(server, '/api/v1/pods')).status).toBe(200);
    expect((await watch('/api/v1/configmaps?watch=1')).status).toBe(200);
    expect((await get(server, '/api/v1/namespaces/ns/configmaps')).status).toBe(500);
    expect((await get(server, '/api/v1/configmaps')).status).toBe(500);
    expect((await get(server, '/api/v1/configmaps')).status).toBe(200);
  });

  it('gives watch-shaping faults only to watch requests', async () => {
    server.faults.inject({ kind: 'closeAfterEvents', events: 0 });
    expect((await get(server, '/api/v1/pods')).status).toBe(200);
    const stream = await watch('/api/v1/pods?watch=1');
    await stream.untilClosed();
    expect(stream.outcome).toBe('end');
  });

  it('forgets pending faults on clear()', async () => {
    server.faults.inject({ kind: 'status', code: 500 }, { times: 5 });
    server.faults.clear();
    expect((await get(server, '/api/v1/pods')).status).toBe(200);
  });

  it('rejects a non-positive times', () => {
    expect(() => server.faults.inject({ kind: 'status', code: 500 }, { times: 0 })).toThrow(RangeError);
  });

  it('records the fault kind and status in the request log', async () => {
    server.faults.inject({ kind: 'plainText429', retryAfterSeconds: 2 });
    server.faults.inject({ kind: 'garbageLine' });
    await get(server, '/api/v1/pods');
    const stream = await watch('/api/v1/pods?watch=1');
    await stream.untilLines(1);
    expect(server.requests.entries.map((e) => [e.verb, e.status, e.fault])).toEqual([
      ['list', 429, 'plainText429'],
      ['watch', 200, 'garbageLine'],
    ]);
  });
});

describe('watch faults', () => {
  it('closeAfterEvents ends the response cleanly after exactly N events', async () => {
    createPods(5);
    server.faults.inject({ kind: 'closeAfterEvents', events: 3 });
    const stream = await watch('/api/v1/pods?watch=1');
    await stream.untilClosed();
    expect(stream.outcome).toBe('end');
    expect(stream.lines).toHaveLength(3);
    expect(stream.raw.endsWith('\n')).toBe(true);
  });

  it('cutMidLine writes N whole events, then half of the next line, then drops the connection', async () => {
    createPods(4);
    server.faults.inject({ kind: 'cutMidLine', afterEvents: 2 });
    const stream = await watch('/api/v1/pods?watch=1');
    await stream.untilClosed();
    expect(stream.outcome).toBe('aborted');
    expect(stream.lines).toHaveLength(2);
    const rest = stream.raw.slice(stream.raw.lastIndexOf('\n') + 1);
    expect(rest.length).toBeGreaterThan(0);
    expect(() => JSON.parse(rest)).toThrow();
    expect(rest.startsWith('{"type":"ADDED"')).toBe(true);
  });

  it('cutMidLine waits for the next event when the first N are all there is', async () => {
    server.faults.inject({ kind: 'cutMidLine', afterEvents: 0 });
    const stream = await watch(`/api/v1/pods?watch=1&resourceVersion=${server.store.resourceVersion}`);
    await settle();
    expect(stream.outcome).toBe('open');
    createPods(1);
    await stream.untilClosed();
    expect([stream.outcome, stream.lines.length, stream.raw.length > 0]).toEqual(['aborted', 0, true]);
  });

  it('garbageLine writes one non-JSON line after N events, then goes on', async () => {
    createPods(3);
    server.faults.inject({ kind: 'garbageLine', afterEvents: 1 });
    const stream = await watch('/api/v1/pods?watch=1');
    await stream.untilLines(4);
    expect(stream.lines[1]).toBe(GARBAGE_LINE.trimEnd());
    expect([0, 2, 3].map((i) => JSON.parse(stream.lines[i]!).type)).toEqual(['ADDED', 'ADDED', 'ADDED']);
  });

  it('garbageLine with no afterEvents is the first line', async () => {
    server.faults.inject({ kind: 'garbageLine' });
    const stream = await watch('/api/v1/pods?watch=1');
    await stream.untilLines(1);
    expect(stream.lines).toEqual([GARBAGE_LINE.trimEnd()]);
  });

  it('stall holds the stream silent for ms after N events, then delivers what queued up', async () => {
    fakeTimers();
    createPods(2);
    server.faults.inject({ kind: 'stall', ms: 10_000, afterEvents: 1 });
    const stream = await watch('/api/v1/pods?watch=1');
    await settle();
    createPods(1, 'late');
    await settle();
    expect(stream.lines).toHaveLength(1);
    jest.advanceTimersByTime(9_999);
    await settle();
    expect(stream.lines).toHaveLength(1);
    jest.advanceTimersByTime(1);
    await eventually(() => expect(stream.lines.length).toBeGreaterThanOrEqual(3), { pause: tick });
    expect(stream.events.map((e) => e.object.metadata.name)).toEqual(['p0', 'p1', 'late0']);
    expect(stream.outcome).toBe('open');
  });

  it('slowWrites delays every event by delayMs', async () => {
    fakeTimers();
    const stream = await watch(`/api/v1/configmaps?watch=1&resourceVersion=${server.store.resourceVersion}`);
    server.faults.inject({ kind: 'slowWrites', delayMs: 1_000 });
    const slow = await watch(`/api/v1/pods?watch=1&resourceVersion=${server.store.resourceVersion}`);
    createPods(2);
    server.store.create(configMaps, { metadata: { name: 'c', namespace: 'ns' } });
    await eventually(() => expect(stream.lines.length).toBeGreaterThanOrEqual(1), { pause: tick });
    await settle();
    expect(slow.lines).toHaveLength(0);
    jest.advanceTimersByTime(1_000);
    await eventually(() => expect(slow.lines.length).toBeGreaterThanOrEqual(1), { pause: tick });
    await settle();
    expect(slow.lines).toHaveLength(1);
    jest.advanceTimersByTime(1_000);
    await eventually(() => expect(slow.lines.length).toBeGreaterThanOrEqual(2), { pause: tick });
    expect(slow.events.map((e) => e.object.metadata.name)).toEqual(['p0', 'p1']);
  });
});
