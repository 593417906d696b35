import { reflect } from '../../lib/reflector/reflect';
import { added, bookmark, deleted, describeCalls, expired, initialEventsEnd, modified, newTestScheduler, one, page, pod, scriptedListerWatcher, simulate, statusError } from './reflectHarness';

const p1 = pod('p1', '5');
const p2 = pod('p2', '7');
const streaming = { streamingList: true };

describe('reflect: streaming list', () => {
  it('buffers the initial events until the initial-events-end bookmark, emits one Replace, and goes on with the same stream', () => {
    const scheduler = newTestScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const lw = scriptedListerWatcher(scheduler, {
        watches: [() => cold('a b 1s c 1s d', { a: added(p1), b: added(p2), c: initialEventsEnd('10'), d: modified(pod('p1', '11')) })],
      });
      expectObservable(reflect(lw, { scheduler, random: one, streamingList: true }), '^ 5s !').toBe('1002ms a 1000ms b', {
        a: { type: 'Replace', items: [p1, p2], first: true, last: true, resourceVersion: '10' },
        b: { type: 'Updated', object: pod('p1', '11') },
      });
      scheduler.schedule(() => {
        expect(lw.calls).toHaveLength(1);
        expect(lw.calls[0]?.options).toEqual({
          resourceVersion: '',
          resourceVersionMatch: 'NotOlderThan',
          sendInitialEvents: true,
          allowWatchBookmarks: true,
          timeoutSeconds: 599,
        });
      }, 4000);
    });
  });

  it('applies MODIFIED and DELETED that arrive during the initial events to the buffer, and ignores plain bookmarks there', () => {
    const run = simulate(
      ({ cold }) => ({
        watches: [() => cold('a b c d e f', { a: added(p1), b: added(p2), c: modified(pod('p1', '8')), d: deleted(p2), e: bookmark('9'), f: initialEventsEnd('10') })],
      }),
      { until: 100, config: streaming },
    );
    expect(run.deltas).toEqual([{ at: 5, delta: { type: 'Replace', items: [pod('p1', '8')], first: true, last: true, resourceVersion: '10' } }]);
  });

  it('reports listing while buffering and watching from the bookmark on', () => {
    const run = simulate(({ cold }) => ({ watches: [() => cold('a 9ms b', { a: added(p1), b: initialEventsEnd('10') })] }), { until: 100, config: streaming });
    expect(run.health.map((h) => [h.phase, h.since, h.resourceVersion])).toEqual([
      ['listing', 0, ''],
      ['watching', 10, '10'],
      ['idle', 100, '10'],
    ]);
  });

  it('does not advance the resourceVersion on the initial ADDEDs: a failed streaming list is retried at ""', () => {
    const run = simulate(
      ({ cold }) => ({ watches: [() => cold('a 1s #', { a: added(pod('p1', '8')) }, statusError(500, 'InternalError'))] }),
      { until: 5000, config: streaming },
    );
    expect(describeCalls(run.lw.calls)).toEqual(['watch@0 rv= streaming match=NotOlderThan', 'watch@1801 rv= streaming match=NotOlderThan']);
    expect(run.deltas).toEqual([]);
  });

  it('re-watches from the bookmark with a plain watch after a clean close: sendInitialEvents is never re-sent', () => {
    const run = simulate(
      ({ cold }) => ({ watches: [() => cold('(ab) 2s c 2s |', { a: added(p1), b: initialEventsEnd('10'), c: modified(pod('p1', '12')) })] }),
      { until: 10_000, config: streaming },
    );
    expect(describeCalls(run.lw.calls)).toEqual(['watch@0 rv= streaming match=NotOlderThan', 'watch@4005 rv=12']);
    expect(run.lw.calls[1]?.options).toEqual({ resourceVersion: '12', allowWatchBookmarks: true, timeoutSeconds: 599 });
  });

  it('re-watches with a plain watch after a network failure or an idle timeout past the bookmark', () => {
    const run = simulate(
      ({ cold }) => ({
        watches: [() => cold('(ab) 2s #', { a: added(p1), b: initialEventsEnd('10') }, statusError(503, 'ServiceUnavailable'))],
      }),
      { until: 700_000, config: streaming },
    );
    expect(describeCalls(run.lw.calls)).toEqual(['watch@0 rv= streaming match=NotOlderThan', 'watch@2804 rv=10', `watch@${2804 + 604_000} rv=10`]);
  });

  it('relists with a streaming list from the last resourceVersion after a 410 on the watch', () => {
    const run = simulate(
      ({ cold }) => ({ watches: [() => cold('(ab) 1s c 1s #', { a: added(p1), b: initialEventsEnd('10'), c: bookmark('15') }, expired())] }),
      { until: 10_000, config: streaming },
    );
    expect(describeCalls(run.lw.calls)).toEqual(['watch@0 rv= streaming match=NotOlderThan', 'watch@2805 rv=15 streaming match=NotOlderThan']);
  });

  it('retries a streaming list that ends before its bookmark as a streaming list, after a backoff', () => {
    const run = simulate(({ cold }) => ({ watches: [() => cold('a 2s |', { a: added(p1) })] }), { until: 10_000, config: streaming });
    expect(describeCalls(run.lw.calls)).toEqual(['watch@0 rv= streaming match=NotOlderThan', 'watch@2801 rv= streaming match=NotOlderThan']);
  });
});

describe('reflect: streaming list fallback', () => {
  it('falls back to a paged list when the initial-events-end bookmark does not come within 60 s, and drops the stream', () => {
    const run = simulate(
      ({ cold }) => ({
        watches: [() => cold('a', { a: added(p1) })],
        lists: [() => cold('(a|)', { a: page([p1, p2], '20') })],
      }),
      { until: 70_000, config: streaming },
    );
    expect(describeCalls(run.lw.calls)).toEqual(['watch@0 rv= streaming match=NotOlderThan', 'list@60000 rv=0', 'watch@60000 rv=20']);
    expect(run.lw.calls[1]?.options).toEqual({ resourceVersion: '0', limit: 500 });
    expect(run.deltas).toEqual([{ at: 60_000, delta: { type: 'Replace', items: [p1, p2], first: true, last: true, resourceVersion: '20' } }]);
    expect(run.lw.calls[0]?.closedAt).toBe(60_000);
    expect(run.log.some((line) => line.level === 'warn' && /initial-events-end/.test(line.message))).toBe(true);
  });

  it('bounds the bookmark wait by initialEventsTimeoutMs', () => {
    const run = simulate(({ cold }) => ({ watches: [() => cold('a', { a: added(p1) })] }), {
      until: 10_000,
      config: { streamingList: true, initialEventsTimeoutMs: 5000 },
    });
    expect(describeCalls(run.lw.calls)).toEqual(['watch@0 rv= streaming match=NotOlderThan', 'list@5000 rv=0']);
  });

  it('does not fall back once the bookmark has arrived, however long the stream stays open', () => {
    const run = simulate(({ cold }) => ({ watches: [() => cold('(ab) 100s c', { a: added(p1), b: initialEventsEnd('10'), c: bookmark('11') })] }), {
      until: 200_000,
      config: streaming,
    });
    expect(describeCalls(run.lw.calls)).toEqual(['watch@0 rv= streaming match=NotOlderThan']);
  });

  it.each([422, 400])('falls back to a paged list at once when the server refuses the streaming list with %p, and keeps listing paged', (code) => {
    const run = simulate(
      ({ cold }) => ({
        watches: [() => cold('#', {}, statusError(code, 'Invalid')), () => cold('1s #', {}, expired())],
        lists: [() => cold('(a|)', { a: page([p1], '20') }), () => cold('(a|)', { a: page([p1], '30') })],
      }),
      { until: 10_000, config: streaming },
    );
    expect(describeCalls(run.lw.calls)).toEqual(['watch@0 rv= streaming match=NotOlderThan', 'list@0 rv=0', 'watch@0 rv=20', 'list@1800 rv=20', 'watch@1800 rv=30']);
    expect(run.health.find((h) => h.lastError?.message.startsWith(`${code}`))).toMatchObject({ phase: 'listing', attempt: 0 });
  });
});
