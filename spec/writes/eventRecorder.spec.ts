import { NetworkError, StatusError, type Status } from '../../lib/base/errors';
import { eventRecorderFrom } from '../../lib/writes/eventRecorder';
import { RecorderHarness, widget, type SinkCall } from './recorderHarness';
import { recordingLogger } from '../reflector/reflectHarness';

/**
 * The event recorder in virtual time (ms): client-go's series (`tools/events`: the second
 * occurrence starts a series, later ones count, the count is written every 30 minutes and when
 * the series ends 6 minutes after its last occurrence), `tools/record`'s spam filter (25 writes
 * per object, one more every 5 minutes), a bounded queue whose drops are counted, retries, and a
 * stop that flushes. Writes take 10 ms unless a test says otherwise.
 */

const MIN = 60_000;
const normal = (reason = 'Scaled', note = 'scaled to 3') => ({ type: 'Normal' as const, reason, action: 'Scale', note });
const status = (code: number, reason: string, details?: Status['details']): StatusError =>
  new StatusError({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message: reason, ...(details === undefined ? {} : { details }) });
const count = (call: SinkCall | undefined): number | undefined => call?.event.series?.count;

describe('eventRecorder: series', () => {
  it('creates an Event for a first occurrence, as client-go makes it', () => {
    const h = new RecorderHarness().start();
    h.at(1_500, () => h.recorder.record(widget('w', '7'), normal()));
    h.runTo(2_000);
    expect(h.calls).toHaveLength(1);
    const { operation, event, at } = h.calls[0]!;
    expect([operation, at]).toEqual(['create', 1_500]);
    expect(event).toEqual({
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: expect.stringMatching(/^w\.[0-9a-f]+$/) as unknown, namespace: 'shop' },
      eventTime: '1970-01-01T00:00:01.500000Z',
      reportingController: 'example.com/widgets',
      reportingInstance: 'widgets-1',
      action: 'Scale',
      reason: 'Scaled',
      regarding: { apiVersion: 'example.com/v1', kind: 'Widget', name: 'w', namespace: 'shop', uid: 'uid-w', resourceVersion: '7' },
      note: 'scaled to 3',
      type: 'Normal',
    });
    expect(h.reportTypes()).toEqual(['1510 written']);
    expect(h.recorder.stats()).toMatchObject({ recorded: 1, written: 1, queued: 0, cached: 1 });
  });

  it('writes the second occurrence as a series of 2 onto the same Event, counts later ones without writing, and writes the final count when the series ends', () => {
    const h = new RecorderHarness().start();
    for (let i = 0; i < 10; i++) h.at(i * 1_000, () => h.recorder.record(widget('w'), normal('Scaled', `note ${i}`)));
    h.runTo(6 * MIN - 1);
    expect(h.timeline().map((line) => line.replace(/w\.[0-9a-f]+/, 'w'))).toEqual(['0 create w', '1000 patch w x2']);
    expect(h.calls.every((call) => call.event.metadata.name === h.calls[0]!.event.metadata.name)).toBe(true);
    expect(h.calls[1]!.event.note).toBe('note 0');
    expect(h.recorder.stats()).toMatchObject({ recorded: 10, aggregated: 8, written: 2 });
    // The periodic pass at 6 min finds the last occurrence (9 s) less than 6 min old; the one at 12 min ends it.
    h.runTo(12 * MIN + 100);
    expect(h.calls.map((call) => `${call.at} ${call.operation} ${count(call)}`)).toEqual(['0 create undefined', '1000 patch 2', `${12 * MIN} patch 10`]);
    expect(h.calls[2]!.event.series?.lastObservedTime).toBe('1970-01-01T00:00:09.000000Z');
    expect(h.recorder.stats().cached).toBe(0);
    // Forgotten: the next occurrence is a new Event.
    h.at(13 * MIN, () => h.recorder.record(widget('w'), normal()));
    h.runTo(13 * MIN + 100);
    expect(h.calls[3]?.operation).toBe('create');
    expect(h.calls[3]?.event.metadata.name).not.toBe(h.calls[0]!.event.metadata.name);
  });

  it('writes the count of a running series every 30 minutes', () => {
    const h = new RecorderHarness().start();
    for (let minute = 0; minute <= 40; minute++) h.at(minute * MIN, () => h.recorder.record(widget('w'), normal()));
    h.runTo(41 * MIN);
    expect(h.calls.map((call) => `${call.at / MIN} ${call.operation} ${count(call)}`)).toEqual(['0 create undefined', '1 patch 2', '30 patch 31']);
  });

  it('keeps events apart by type, reason, action and object, but not by note or by the object’s resourceVersion', () => {
    const h = new RecorderHarness().start();
    h.at(0, () => {
      h.recorder.record(widget('a', '1'), normal('Scaled', 'first'));
      h.recorder.record(widget('a', '2'), normal('Scaled', 'second'));
      h.recorder.record(widget('a'), normal('Failed'));
      h.recorder.record(widget('a'), { ...normal(), type: 'Warning' });
      h.recorder.record(widget('a'), { ...normal(), action: 'Resize' });
      h.recorder.record(widget('b'), normal());
      h.recorder.record(widget('a', '1', 'uid-of-a-new-a'), normal());
    });
    h.runTo(1_000);
    const creates = h.calls.filter((call) => call.operation === 'create');
    expect(creates).toHaveLength(6);
    expect(creates[0]?.event.series?.count).toBe(2);
    expect(creates[0]?.event.note).toBe('first');
  });

  it('creates the Event with its series when the second occurrence comes before the first write went out', () => {
    const h = new RecorderHarness({}, () => ({ after: 50 })).start();
    h.at(0, () => {
      h.recorder.record(widget('x'), normal());
      h.recorder.record(widget('y'), normal());
      h.recorder.record(widget('y'), normal());
    });
    h.runTo(500);
    expect(h.calls.map((call) => `${call.at} ${call.operation} ${call.event.regarding?.name} ${count(call)}`)).toEqual(['0 create x undefined', '50 create y 2']);
  });

  it('writes the series after a create still in flight when the second occurrence came', () => {
    const h = new RecorderHarness({}, () => ({ after: 50 })).start();
    h.at(0, () => h.recorder.record(widget('x'), normal()));
    h.at(20, () => h.recorder.record(widget('x'), normal()));
    h.runTo(500);
    expect(h.calls.map((call) => `${call.at} ${call.operation} ${count(call)}`)).toEqual(['0 create undefined', '50 patch 2']);
  });

  it('puts an Event in the default namespace for a cluster-scoped object, and takes a related object', () => {
    const h = new RecorderHarness().start();
    const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', uid: 'u' } };
    h.at(0, () => h.recorder.record(node, { ...normal(), related: widget('w') }));
    h.runTo(100);
    expect(h.calls[0]?.event.metadata.namespace).toBe('default');
    expect(h.calls[0]?.event.related).toEqual({ apiVersion: 'example.com/v1', kind: 'Widget', name: 'w', namespace: 'shop', uid: 'uid-w', resourceVersion: '1' });
  });
});

describe('eventRecorder: spam filter', () => {
  it('lets a reporter write 25 events about one object at once, then one per 5 minutes; other objects have their own budget', () => {
    const h = new RecorderHarness().start();
    h.at(0, () => {
      for (let i = 0; i < 30; i++) h.recorder.record(widget('a'), normal(`Reason${i}`));
      h.recorder.record(widget('b'), normal());
    });
    h.runTo(1_000);
    expect(h.calls.filter((call) => call.event.regarding?.name === 'a')).toHaveLength(25);
    expect(h.calls.filter((call) => call.event.regarding?.name === 'b')).toHaveLength(1);
    expect(h.recorder.stats()).toMatchObject({ filtered: 5, recorded: 26 });
    expect(h.reportTypes().filter((line) => line.endsWith('filtered'))).toHaveLength(5);
    h.at(5 * MIN - 1_000, () => h.recorder.record(widget('a'), normal('Early')));
    h.at(5 * MIN, () => {
      h.recorder.record(widget('a'), normal('OnTime'));
      h.recorder.record(widget('a'), normal('TooSoon'));
    });
    h.runTo(5 * MIN + 1_000);
    expect(h.calls.slice(26).map((call) => call.event.reason)).toEqual(['OnTime']);
  });

  it('charges nothing for occurrences counted into a running series', () => {
    const h = new RecorderHarness().start();
    h.at(0, () => {
      for (let i = 0; i < 200; i++) h.recorder.record(widget('a'), normal());
    });
    h.runTo(1_000);
    expect(h.recorder.stats()).toMatchObject({ recorded: 200, aggregated: 198, filtered: 0 });
  });
});

describe('eventRecorder: never blocking', () => {
  it('queues at most maxQueued writes, drops and counts the rest, and never throws for it', () => {
    const h = new RecorderHarness({ maxQueued: 3 }, () => 'never').start();
    h.at(0, () => {
      for (const name of ['a', 'b', 'c', 'd', 'e', 'f']) expect(() => h.recorder.record(widget(name), normal())).not.toThrow();
    });
    h.runTo(10);
    expect(h.calls.map((call) => call.event.regarding?.name)).toEqual(['a']);
    // a, b and c were queued (a went out on the next turn); d, e and f found the queue full.
    expect(h.recorder.stats()).toMatchObject({ dropped: 3, queued: 3, cached: 3 });
    expect(h.reportTypes()).toEqual(['0 dropped queue-full', '0 dropped queue-full', '0 dropped queue-full']);
  });

  it('forgets a first occurrence it dropped, so that the next one is a new Event', () => {
    const h = new RecorderHarness({ maxQueued: 1 }, (_call, index) => (index === 0 ? { after: 100 } : {})).start();
    h.at(0, () => {
      h.recorder.record(widget('a'), normal());
      h.recorder.record(widget('b'), normal());
      h.recorder.record(widget('c'), normal());
    });
    h.at(200, () => h.recorder.record(widget('c'), normal()));
    h.runTo(500);
    // b and c found the queue (of one) full at 0; c's next occurrence is a first one again, not a series.
    expect(h.calls.map((call) => `${call.at} ${call.operation} ${call.event.regarding?.name} ${count(call)}`)).toEqual(['0 create a undefined', '200 create c undefined']);
    expect(h.recorder.stats().dropped).toBe(2);
  });

  it('records without a subscriber and writes once writes$ is subscribed', () => {
    const h = new RecorderHarness();
    h.at(0, () => h.recorder.record(widget('a'), normal()));
    h.runTo(1_000);
    expect(h.calls).toEqual([]);
    h.start();
    h.runTo(2_000);
    expect(h.calls.map((call) => `${call.at} ${call.operation}`)).toEqual(['1000 create']);
  });

  it('runs one writer however many subscribe', () => {
    const h = new RecorderHarness().start();
    const second: string[] = [];
    h.recorder.writes$.subscribe((report) => second.push(report.type));
    h.at(0, () => h.recorder.record(widget('a'), normal()));
    h.runTo(100);
    expect(h.calls).toHaveLength(1);
    expect(second).toEqual(['written']);
  });

  it('aborts the write in flight on the last unsubscription and sends it again on the next subscription', () => {
    const h = new RecorderHarness({}, (_call, index) => (index === 0 ? 'never' : {})).start();
    h.at(0, () => h.recorder.record(widget('a'), normal()));
    h.runTo(50);
    h.stop();
    expect(h.calls[0]?.aborted).toBe(true);
    expect(h.recorder.stats().queued).toBe(1);
    h.start();
    h.runTo(100);
    expect(h.calls.map((call) => `${call.at} ${call.operation} ${call.event.regarding?.name}`)).toEqual(['0 create a', '50 create a']);
  });

  it('refuses at once an event the API server refuses whatever happens', () => {
    const h = new RecorderHarness();
    expect(() => h.recorder.record(widget('a'), { ...normal(), type: 'Info' as 'Normal' })).toThrow(TypeError);
    expect(() => h.recorder.record(widget('a'), { ...normal(), reason: '' })).toThrow(TypeError);
    expect(() => h.recorder.record(widget('a'), { ...normal(), action: 'x'.repeat(129) })).toThrow(TypeError);
    expect(() => h.recorder.record({ metadata: { name: 'no-kind' } }, normal())).toThrow(TypeError);
    expect(() => eventRecorderFrom({ create: () => undefined!, patchSeries: () => undefined! }, { reportingController: 'not a qualified name!' })).toThrow(TypeError);
    expect(() => eventRecorderFrom({ create: () => undefined!, patchSeries: () => undefined! }, { reportingController: 'example.com/c', maxQueued: 0 })).toThrow(RangeError);
  });

  it('cuts a long note to the API server’s limit of 1024 bytes, on a character boundary', () => {
    const h = new RecorderHarness().start();
    h.at(0, () => h.recorder.record(widget('a'), normal('Long', 'é'.repeat(600))));
    h.runTo(100);
    const note = h.calls[0]!.event.note!;
    expect(Buffer.byteLength(note, 'utf8')).toBeLessThanOrEqual(1024);
    expect(note.endsWith(' ...')).toBe(true);
    expect(note.startsWith('é'.repeat(500))).toBe(true);
  });
});

describe('eventRecorder: failures', () => {
  it('retries a write that got no answer after 10 to 12.5 s, up to 12 attempts, then gives it up', () => {
    const h = new RecorderHarness({}, () => ({ after: 10, error: new NetworkError('connect ECONNREFUSED', 'ECONNREFUSED') })).start();
    h.at(0, () => h.recorder.record(widget('a'), normal()));
    h.runTo(10 * MIN);
    expect(h.calls.map((call) => call.at)).toEqual([0, 10_010, 20_020, 30_030, 40_040, 50_050, 60_060, 70_070, 80_080, 90_090, 100_100, 110_110]);
    expect(h.reportTypes().slice(-2)).toEqual(['100110 failed retry', '110120 failed give-up']);
    expect(h.recorder.stats()).toMatchObject({ failed: 1, queued: 0, cached: 0 });
  });

  it('logs each failed attempt at warn while it will be retried, and at error when it is given up', () => {
    const logger = recordingLogger();
    const h = new RecorderHarness({ logger, maxTries: 2 }, () => ({ after: 10, error: status(503, 'ServiceUnavailable') })).start();
    h.at(0, () => h.recorder.record(widget('a'), normal()));
    h.runTo(MIN);
    expect(logger.lines.map((line) => [line.level, line.message])).toEqual([
      ['warn', 'writing an Event failed; retrying'],
      ['error', 'writing an Event failed; giving it up'],
    ]);
  });

  it('draws each wait from [10 s, 12.5 s) with its random source', () => {
    const h = new RecorderHarness({ random: () => 0.999 }, (_call, index) => (index === 0 ? { after: 0, error: status(503, 'ServiceUnavailable') } : {})).start();
    h.at(0, () => h.recorder.record(widget('a'), normal()));
    h.runTo(MIN);
    expect(h.calls.map((call) => call.at)).toEqual([0, 12_497.5]);
  });

  it('retries 429 and 5xx and a write that times out; gives up other refusals at once', () => {
    const answers = [status(429, 'TooManyRequests'), status(500, 'InternalError'), 'never' as const];
    const h = new RecorderHarness({ requestTimeout: 1_000 }, (_call, index) => {
      const answer = answers[index];
      return answer === 'never' ? 'never' : answer === undefined ? {} : { error: answer };
    }).start();
    h.at(0, () => h.recorder.record(widget('a'), normal()));
    h.runTo(MIN);
    expect(h.calls).toHaveLength(4);
    expect(h.calls[2]?.aborted).toBe(true);
    expect(h.reportTypes()).toEqual(['10 failed retry', '10020 failed retry', '21020 failed retry', '31030 written']);

    const refused = new RecorderHarness({}, () => ({ error: status(403, 'Forbidden', { kind: 'events' }) })).start();
    refused.at(0, () => refused.recorder.record(widget('a'), normal()));
    refused.runTo(MIN);
    expect(refused.calls).toHaveLength(1);
    expect(refused.reportTypes()).toEqual(['10 failed give-up']);
  });

  it('creates an Event again, series and all, when the server lost it (404 on the series write)', () => {
    const h = new RecorderHarness({}, (call) => (call.operation === 'patch' ? { error: status(404, 'NotFound', { kind: 'events', name: call.event.metadata.name }) } : {})).start();
    h.at(0, () => h.recorder.record(widget('a'), normal()));
    h.at(100, () => h.recorder.record(widget('a'), normal()));
    h.runTo(1_000);
    expect(h.calls.map((call) => `${call.at} ${call.operation} ${count(call)}`)).toEqual(['0 create undefined', '100 patch 2', '110 create 2']);
  });

  it('takes AlreadyExists on a create as the Event being there (an earlier attempt went through) and writes the series onto it', () => {
    const h = new RecorderHarness({}, (call, index) => (index === 0 ? { error: status(409, 'AlreadyExists', { kind: 'events', name: call.event.metadata.name }) } : {})).start();
    h.at(0, () => {
      h.recorder.record(widget('a'), normal());
      h.recorder.record(widget('a'), normal());
    });
    h.runTo(1_000);
    expect(h.calls.map((call) => `${call.at} ${call.operation} ${count(call)}`)).toEqual(['0 create 2', '10 patch 2']);
    expect(h.recorder.stats()).toMatchObject({ failed: 0, written: 1 });
  });
});

describe('eventRecorder: stopping with the controller', () => {
  it('on abort, writes what waits and the last counts of running series, once each, then completes; later records are dropped and counted', () => {
    const stop = new AbortController();
    const h = new RecorderHarness({ signal: stop.signal }).start();
    h.at(0, () => {
      for (let i = 0; i < 5; i++) h.recorder.record(widget('a'), normal());
      h.recorder.record(widget('b'), normal());
    });
    h.at(1_000, () => {
      h.recorder.record(widget('a'), normal());
      h.recorder.record(widget('c'), normal());
      stop.abort();
      h.recorder.record(widget('d'), normal());
    });
    h.runTo(10 * MIN);
    expect(h.calls.map((call) => `${call.at} ${call.operation} ${call.event.regarding?.name} ${count(call)}`)).toEqual([
      '0 create a 5',
      '10 create b undefined',
      '1000 create c undefined',
      '1010 patch a 6',
    ]);
    expect(h.completedAt).toBe(1_020);
    expect(h.recorder.stats()).toMatchObject({ dropped: 1, written: 4 });
    expect(h.reportTypes()).toContain('1000 dropped stopped');
  });

  it('gives the flush flushTimeout ms, then drops (and counts) what is left and completes', () => {
    const stop = new AbortController();
    const h = new RecorderHarness({ signal: stop.signal, flushTimeout: 2_000 }, () => 'never').start();
    h.at(0, () => {
      h.recorder.record(widget('a'), normal());
      h.recorder.record(widget('b'), normal());
    });
    h.at(500, () => stop.abort());
    h.runTo(MIN);
    expect(h.completedAt).toBe(2_500);
    expect(h.calls[0]?.aborted).toBe(true);
    expect(h.recorder.stats()).toMatchObject({ dropped: 2, written: 0, queued: 0 });
  });

  it('does not retry during the flush: a failure is given up', () => {
    const stop = new AbortController();
    const h = new RecorderHarness({ signal: stop.signal }, () => ({ error: new NetworkError('reset', 'ECONNRESET') })).start();
    h.at(0, () => h.recorder.record(widget('a'), normal()));
    h.at(5_000, () => stop.abort());
    h.runTo(MIN);
    expect(h.calls.map((call) => call.at)).toEqual([0, 5_000]);
    expect(h.completedAt).toBe(5_010);
    expect(h.recorder.stats().failed).toBe(1);
  });

  it('completes at once when subscribed after the stop with nothing to write', () => {
    const stop = new AbortController();
    stop.abort();
    const h = new RecorderHarness({ signal: stop.signal });
    h.recorder.record(widget('a'), normal());
    h.start();
    h.runTo(10);
    expect(h.completedAt).toBe(0);
    expect(h.calls).toEqual([]);
    expect(h.recorder.stats().dropped).toBe(1);
  });
});
