import { lastValueFrom, toArray } from 'rxjs';
import { events, eventsV1, type Event, type EventsV1Event } from '../../lib/resources/builtins';
import { StatusError } from '../../lib/base/errors';
import { eventRecorder } from '../../lib/writes/eventRecorder';
import { kubeEventSink } from '../../lib/writes/eventSink';
import { makeEvent, withSeries } from '../../lib/writes/eventObjects';
import { startApiServer, type ApiServer } from '../../apiserver/src';
import { widget } from './recorderHarness';

/**
 * Events written over HTTP to the loopback API server: events.k8s.io/v1 where it is served, core/v1
 * from the first 404 that says the group is not (a server without it). The loopback server serves
 * both, as every API server since 1.19; a server without the group is played by a scripted 404
 * with the Status the API server gives a path it does not serve (no kind in its details).
 * spec/e2e/writeBack.spec.ts and spec/clients/kubectlWriteBack.spec.ts read the recorder's Events
 * back through both APIs and through kubectl.
 */

let server: ApiServer | undefined;
afterEach(() => server?.close());

const source = { reportingController: 'example.com/widgets', reportingInstance: 'widgets-1' };
const first = (): EventsV1Event => makeEvent({ apiVersion: 'example.com/v1', kind: 'Widget', name: 'w', namespace: 'shop', uid: 'u1' }, { type: 'Warning', reason: 'Failed', action: 'Sync', note: 'no quota' }, source, Date.UTC(2024, 4, 1, 10), 'abc');

describe('kubeEventSink', () => {
  it('creates events.k8s.io/v1 Events and writes their series with a merge patch', async () => {
    server = await startApiServer();
    const event = first();
    expect(await lastValueFrom(kubeEventSink(server.kubeConfig).create(event))).toBe('events.k8s.io/v1');
    expect(await lastValueFrom(kubeEventSink(server.kubeConfig).patchSeries(withSeries(event, 3, Date.UTC(2024, 4, 1, 10, 1))))).toBe('events.k8s.io/v1');
    const stored = server.store.get(eventsV1, 'shop', 'w.abc');
    expect(stored).toMatchObject({ reason: 'Failed', note: 'no quota', type: 'Warning', regarding: { kind: 'Widget', name: 'w', uid: 'u1' } });
    expect(stored?.series).toEqual({ count: 3, lastObservedTime: '2024-05-01T10:01:00.000000Z' });
    expect(server.requests.entries.filter((entry) => entry.method !== 'GET').map((entry) => `${entry.method} ${entry.path} ${entry.status}`)).toEqual([
      'POST /apis/events.k8s.io/v1/namespaces/shop/events 201',
      'PATCH /apis/events.k8s.io/v1/namespaces/shop/events/w.abc 200',
    ]);
  });

  it('falls back to core/v1 for good on a server without events.k8s.io, the series as count and lastTimestamp', async () => {
    server = await startApiServer();
    // The answer of a server without events.k8s.io/v1 (apiserver's NotFoundHandler for an unserved path).
    server.faults.inject({ kind: 'status', code: 404, message: 'the server could not find the requested resource' }, { resource: 'events', verb: 'create' });
    const sink = kubeEventSink(server.kubeConfig);
    const event = first();
    expect(await lastValueFrom(sink.create(event))).toBe('v1');
    expect(await lastValueFrom(sink.patchSeries(withSeries(event, 4, Date.UTC(2024, 4, 1, 10, 2, 30))))).toBe('v1');
    const stored = server.store.get(events, 'shop', 'w.abc') as Event;
    expect(stored).toMatchObject({
      involvedObject: { apiVersion: 'example.com/v1', kind: 'Widget', name: 'w', namespace: 'shop', uid: 'u1' },
      reason: 'Failed',
      message: 'no quota',
      type: 'Warning',
      action: 'Sync',
      source: { component: 'example.com/widgets' },
      reportingComponent: 'example.com/widgets',
      reportingInstance: 'widgets-1',
      firstTimestamp: '2024-05-01T10:00:00Z',
      lastTimestamp: '2024-05-01T10:02:30Z',
      count: 4,
    });
    expect(stored).not.toHaveProperty('eventTime');
    // The group's 404 was met once: the second write went straight to core/v1.
    expect(server.requests.entries.filter((entry) => entry.method !== 'GET').map((entry) => `${entry.method} ${entry.path} ${entry.status}`)).toEqual([
      'POST /apis/events.k8s.io/v1/namespaces/shop/events 404',
      'POST /api/v1/namespaces/shop/events 201',
      'PATCH /api/v1/namespaces/shop/events/w.abc 200',
    ]);
  });

  it('does not take a 404 about an object for a missing group: a lost Event stays a 404', async () => {
    server = await startApiServer();
    const error = await lastValueFrom(kubeEventSink(server.kubeConfig).patchSeries(withSeries(first(), 2, Date.UTC(2024, 4, 1, 10, 1)))).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StatusError);
    expect((error as StatusError).code).toBe(404);
    expect(server.requests.entries.some((entry) => entry.path.startsWith('/api/v1/'))).toBe(false);
  });
});

describe('eventRecorder over HTTP', () => {
  it('writes an Event and its series, and completes writes$ after a stop once they are written', async () => {
    server = await startApiServer();
    const stop = new AbortController();
    const recorder = eventRecorder(server.kubeConfig, { ...source, signal: stop.signal });
    const reports = lastValueFrom(recorder.writes$.pipe(toArray()));
    for (let i = 0; i < 4; i++) recorder.record(widget('w'), { type: 'Normal', reason: 'Synced', action: 'Sync', note: `pass ${i}` });
    stop.abort();
    const written = (await reports).filter((report) => report.type === 'written');
    expect(written.map((report) => report.type === 'written' && [report.operation, report.api])).toEqual([['create', 'events.k8s.io/v1']]);
    const [stored] = server.store.list(eventsV1, 'shop');
    expect(stored).toMatchObject({ reason: 'Synced', note: 'pass 0', series: { count: 4 } });
    expect(recorder.stats()).toMatchObject({ recorded: 4, aggregated: 2, written: 1, dropped: 0 });
  });
});
