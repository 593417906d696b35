import { concat, from } from 'rxjs';
import { reflect } from '../../lib/reflector/reflect';
import type { ListerWatcher } from '../../lib/sources/listerWatcher';
import { NetworkError } from '../../lib/base/errors';
import {
  added,
  bookmark,
  deleted,
  describeCalls,
  expired,
  initialEventsEnd,
  modified,
  newTestScheduler,
  page,
  pod,
  scriptedListerWatcher,
  simulate,
  statusError,
  zero,
} from './reflectHarness';

const p1 = pod('p1', '5');
const p2 = pod('p2', '7');
const p3 = pod('p3', '8');
const streaming = { streamingList: true };

describe('reflect: streaming list', () => {
  it('passes the initial events on as Replace pages of pageSize as they arrive, ends the Replace at the bookmark, and goes on with the same stream', () => {
    const scheduler = newTestScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const lw = scriptedListerWatcher(scheduler, {
        watches: [() => cold('a b 1s c 1s d 1s e', { a: added(p1), b: added(p2), c: added(p3), d: initialEventsEnd('10'), e: modified(pod('p1', '11')) })],
      });
      expectObservable(reflect(lw, { scheduler, random: zero, streamingList: true, pageSize: 2 }), '^ 5s !').toBe('- a 2001ms b 1000ms c', {
        a: { type: 'Replace', items: [p1, p2], first: true, last: false, resourceVersion: '' },
        b: { type: 'Replace', items: [p3], first: false, last: true, resourceVersion: '10' },
        c: { type: 'Updated', object: pod('p1', '11') },
      });
      scheduler.schedule(() => {
        expect(lw.calls).toHaveLength(1);
        expect(lw.calls[0]?.options).toEqual({
          resourceVersion: '',
          resourceVersionMatch: 'NotOlderThan',
          sendInitialEvents: true,
          allowWatchBookmarks: true,
          timeoutSeconds: 300,
        });
      }, 4000);
    });
  });

  it('holds at most one page of initial events: 1,000 ADDEDs leave in pages of 500 before the bookmark comes', () => {
    const many = Array.from({ length: 1000 }, (_, i) => added(pod(`p${i}`, String(i + 1))));
    const run = simulate(({ cold }) => ({ watches: [() => concat(from(many), cold('1s z', { z: initialEventsEnd('2000') }))] }), {
      until: 5000,
      config: streaming,
    });
    expect(run.deltas.map(({ at, delta }) => delta.type === 'Replace' && [at, delta.items.length, delta.first, delta.last])).toEqual([
      [0, 500, true, false],
      [0, 500, false, false],
      [1000, 0, false, true],
    ]);
  });

  it('passes MODIFIED and DELETED that arrive during the initial events on in the Replace: a change replaces, a delete travels in `deleted`', () => {
    const run = simulate(
      ({ cold }) => ({
        watches: [
          () =>
            cold('a b c d e f g h', {
              a: added(p1),
              b: added(p2),
              c: modified(pod('p1', '8')),
              d: deleted(p2),
              e: bookmark('9'),
              f: added(p3),
              g: deleted(p1),
              h: initialEventsEnd('10'),
            }),
        ],
      }),
      { until: 100, config: { ...streaming, pageSize: 2 } },
    );
    expect(run.deltas.map((d) => d.delta)).toEqual([
      { type: 'Replace', items: [p1, p2], first: true, last: false, resourceVersion: '' },
      // p2 was in the first page: `deleted` takes it out of the new store before this page's items
      // go in; p1 comes again, changed.
      { type: 'Replace', items: [pod('p1', '8'), p3], first: false, last: false, resourceVersion: '', deleted: [p2] },
      { type: 'Replace', items: [], first: false, last: true, resourceVersion: '10', deleted: [p1] },
    ]);
  });

  it('reports listing with the objects received so far while streaming, and watching from the bookmark on', () => {
    const run = simulate(({ cold }) => ({ watches: [() => cold('a b 8ms c', { a: added(p1), b: added(p2), c: initialEventsEnd('10') })] }), {
      until: 100,
      config: { ...streaming, pageSize: 1 },
    });
    expect(run.health.map((h) => [h.phase, h.since, h.resourceVersion, h.listedItems])).toEqual([
      ['listing', 0, '', 0],
      ['listing', 0, '', 1],
      ['listing', 0, '', 2],
      ['watching', 10, '10', undefined],
    ]);
  });

  it('does not advance the resourceVersion on the initial events: a streaming list cut by a 429 is retried at "" after a backoff', () => {
    const run = simulate(
      ({ cold }) => ({ watches: [() => cold('a b 1s #', { a: added(pod('p1', '8')), b: modified(pod('p1', '9')) }, statusError(429, 'TooManyRequests'))] }),
      { until: 5000, config: streaming },
    );
    expect(describeCalls(run.lw.calls)).toEqual(['watch@0 rv= streaming match=NotOlderThan', 'watch@1802 rv= streaming match=NotOlderThan']);
  });

  it('backs off and streams again after a refused connection', () => {
    const run = simulate(({ cold }) => ({ watches: [() => cold('#', {}, new NetworkError('connect ECONNREFUSED', 'ECONNREFUSED'))] }), {
      until: 5000,
      config: streaming,
    });
    expect(describeCalls(run.lw.calls)).toEqual(['watch@0 rv= streaming match=NotOlderThan', 'watch@800 rv= streaming match=NotOlderThan']);
  });

  it('re-watches from the bookmark with a plain watch after a clean close: sendInitialEvents is never re-sent', () => {
    const run = simulate(
      ({ cold }) => ({ watches: [() => cold('(ab) 2s c 2s |', { a: added(p1), b: initialEventsEnd('10'), c: modified(pod('p1', '12')) })] }),
      { until: 10_000, config: streaming },
    );
    expect(describeCalls(run.lw.calls)).toEqual(['watch@0 rv= streaming match=NotOlderThan', 'watch@4005 rv=12']);
    expect(run.lw.calls[1]?.options).toEqual({ resourceVersion: '12', allowWatchBookmarks: true, timeoutSeconds: 300 });
  });

  it('re-watches with a plain watch after a network failure or an idle timeout past the bookmark', () => {
    const run = simulate(
      ({ cold }) => ({
        watches: [() => cold('(ab) 2s #', { a: added(p1), b: initialEventsEnd('10') }, statusError(503, 'ServiceUnavailable'))],
      }),
      { until: 400_000, config: streaming },
    );
    expect(describeCalls(run.lw.calls)).toEqual(['watch@0 rv= streaming match=NotOlderThan', 'watch@2804 rv=10', `watch@${2804 + 305_000} rv=10`]);
  });

  it('relists with a streaming list from the last resourceVersion after a 410 on the watch', () => {
    const run = simulate(
      ({ cold }) => ({ watches: [() => cold('(ab) 1s c 1s #', { a: added(p1), b: initialEventsEnd('10'), c: bookmark('15') }, expired())] }),
      { until: 10_000, config: streaming },
    );
    expect(describeCalls(run.lw.calls)).toEqual(['watch@0 rv= streaming match=NotOlderThan', 'watch@2805 rv=15 streaming match=NotOlderThan']);
  });

  it('streams again at "" at once when a streaming list from the last version gets a 410', () => {
    const run = simulate(
      ({ cold }) => ({ watches: [() => cold('a 1s #', { a: initialEventsEnd('10') }, expired()), () => cold('#', {}, expired())] }),
      { until: 10_000, config: streaming },
    );
    expect(describeCalls(run.lw.calls).slice(0, 3)).toEqual([
      'watch@0 rv= streaming match=NotOlderThan',
      'watch@1801 rv=10 streaming match=NotOlderThan',
      'watch@1801 rv= streaming match=NotOlderThan',
    ]);
  });

  it('does not fall back once the bookmark has arrived, however long the stream stays open', () => {
    const run = simulate(({ cold }) => ({ watches: [() => cold('(ab) 100s c', { a: added(p1), b: initialEventsEnd('10'), c: bookmark('11') })] }), {
      until: 200_000,
      config: streaming,
    });
    expect(describeCalls(run.lw.calls)).toEqual(['watch@0 rv= streaming match=NotOlderThan']);
  });

  it('streams by default through a lister-watcher that supports it, and lists in pages through one that does not say so', () => {
    const scheduler = newTestScheduler();
    scheduler.run(() => {
      const plain = scriptedListerWatcher(scheduler, {});
      const kube: ListerWatcher = { ...scriptedListerWatcher(scheduler, {}), supportsStreamingList: true };
      const calls: string[] = [];
      const recording: ListerWatcher = { ...kube, watch: (options) => (calls.push(`watch sendInitialEvents=${String(options.sendInitialEvents)}`), kube.watch(options)) };
      reflect(plain, { scheduler }).subscribe().unsubscribe();
      reflect(recording, { scheduler }).subscribe().unsubscribe();
      expect(describeCalls(plain.calls)).toEqual(['list@0 rv=0']);
      expect(calls).toEqual(['watch sendInitialEvents=true']);
    });
  });
});

describe('reflect: streaming list fallback', () => {
  it('falls back to a paged list for good when the initial-events-end bookmark does not come within 60 s, and drops the stream', () => {
    const run = simulate(
      ({ cold }) => ({
        watches: [() => cold('a', { a: added(p1) }), () => cold('1s #', {}, expired())],
        lists: [() => cold('(a|)', { a: page([p1, p2], '20') }), () => cold('(a|)', { a: page([p1, p2], '30') })],
      }),
      { until: 70_000, config: streaming },
    );
    expect(describeCalls(run.lw.calls)).toEqual(['watch@0 rv= streaming match=NotOlderThan', 'list@60000 rv=0', 'watch@60000 rv=20', 'list@61800 rv=20 unpaged', 'watch@61800 rv=30']);
    expect(run.lw.calls[1]?.options).toEqual({ resourceVersion: '0', limit: 500 });
    // The abandoned stream's first page opened a Replace; the list's first page abandons it.
    expect(run.deltas.slice(0, 1)).toEqual([{ at: 60_000, delta: { type: 'Replace', items: [p1, p2], first: true, last: true, resourceVersion: '20' } }]);
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

  it.each([
    ['422 (the WatchList gate is off, 1.27-1.31 and 1.33; or a server before 1.27)', 422],
    ['400', 400],
  ])('falls back to a paged list at once, and for good, when the server refuses the streaming list with %s', (_label, code) => {
    const run = simulate(
      ({ cold }) => ({
        watches: [() => cold('#', {}, statusError(code, 'Invalid')), () => cold('1s #', {}, expired())],
        lists: [() => cold('(a|)', { a: page([p1], '20') }), () => cold('(a|)', { a: page([p1], '30') })],
      }),
      { until: 10_000, config: streaming },
    );
    expect(describeCalls(run.lw.calls)).toEqual(['watch@0 rv= streaming match=NotOlderThan', 'list@0 rv=0', 'watch@0 rv=20', 'list@1800 rv=20 unpaged', 'watch@1800 rv=30']);
    expect(run.health.every((h) => h.lastError === undefined || h.lastError.message.startsWith('410'))).toBe(true);
  });

  it.each([
    ['a 403 from a gateway', statusError(403, 'Forbidden')],
    ['a 500', statusError(500, 'InternalError')],
    ['a clean close before the bookmark', undefined],
  ])('falls back to a paged list at once after %s, and streams again at the next relist (client-go)', (_label, error) => {
    const run = simulate(
      ({ cold }) => ({
        watches: [
          () => (error === undefined ? cold('a 2s |', { a: added(p1) }) : cold('a 2s #', { a: added(p1) }, error)),
          () => cold('1s #', {}, expired()),
          () => cold('(ab)', { a: added(p2), b: initialEventsEnd('40') }),
        ],
        lists: [() => cold('(a|)', { a: page([p1], '20') })],
      }),
      { until: 10_000, config: streaming },
    );
    expect(describeCalls(run.lw.calls)).toEqual([
      'watch@0 rv= streaming match=NotOlderThan',
      'list@2001 rv=0',
      'watch@2001 rv=20',
      'watch@3801 rv=20 streaming match=NotOlderThan',
    ]);
    expect(run.deltas.at(-1)).toEqual({ at: 3801, delta: { type: 'Replace', items: [p2], first: true, last: true, resourceVersion: '40' } });
  });

  it('keeps retrying a 403 on both the streaming list and its fallback list, one round per backoff', () => {
    const forbidden = statusError(403, 'Forbidden');
    const run = simulate(
      ({ cold }) => ({ watches: Array.from({ length: 3 }, () => () => cold('#', {}, forbidden)), lists: Array.from({ length: 3 }, () => () => cold('#', {}, forbidden)) }),
      { until: 3000, config: streaming },
    );
    expect(describeCalls(run.lw.calls)).toEqual([
      'watch@0 rv= streaming match=NotOlderThan',
      'list@0 rv=0',
      'watch@800 rv= streaming match=NotOlderThan',
      'list@800 rv=0',
      'watch@2400 rv= streaming match=NotOlderThan',
      'list@2400 rv=0',
    ]);
    expect(run.health.filter((h) => h.phase === 'backingOff').map((h) => h.attempt)).toEqual([2, 4, 6]);
  });
});
