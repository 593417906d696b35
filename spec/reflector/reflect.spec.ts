import { IdleTimeoutError, NetworkError, ProtocolError, StatusError } from '../../lib/base/errors';
import { reflect } from '../../lib/reflector/reflect';
import {
  IDLE_MS,
  added,
  bookmark,
  connectionRefused,
  deleted,
  describeCalls,
  expired,
  modified,
  newTestScheduler,
  zero,
  page,
  pod,
  scriptedListerWatcher,
  simulate,
  statusError,
} from './reflectHarness';

const p1 = pod('p1', '5');
const p2 = pod('p2', '7');
const p3 = pod('p3', '12');

describe('reflect: list then watch', () => {
  it('lists at "0" with limit 500, emits each page as a Replace page, then maps watch events to deltas', () => {
    const scheduler = newTestScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const lw = scriptedListerWatcher(scheduler, {
        lists: [() => cold('a 9ms (b|)', { a: page([p1], '', false, 1), b: page([p2], '10') })],
        watches: [() => cold('5ms a 4ms b 4ms c 4ms d', { a: added(p3), b: modified(p3), c: deleted(p3), d: bookmark('20') })],
      });
      expectObservable(reflect(lw, { scheduler, random: zero }), '^ 1s !').toBe('a 9ms b 4ms c 4ms d 4ms e 4ms f', {
        a: { type: 'Replace', items: [p1], first: true, last: false, resourceVersion: '' },
        b: { type: 'Replace', items: [p2], first: false, last: true, resourceVersion: '10' },
        c: { type: 'Added', object: p3 },
        d: { type: 'Updated', object: p3 },
        e: { type: 'Deleted', object: p3 },
        f: { type: 'Bookmark', resourceVersion: '20' },
      });
      scheduler.schedule(() => {
        expect(describeCalls(lw.calls)).toEqual(['list@0 rv=0', 'watch@10 rv=10']);
        expect(lw.calls[0]?.options).toEqual({ resourceVersion: '0', limit: 500 });
        expect(lw.calls[1]?.options).toEqual({ resourceVersion: '10', allowWatchBookmarks: true, timeoutSeconds: 300 });
      }, 999);
    });
  });

  it('emits an empty list as one Replace page that is both first and last', () => {
    const run = simulate(({ cold }) => ({ lists: [() => cold('(a|)', { a: page([], '3') })] }), { until: 10 });
    expect(run.deltas).toEqual([{ at: 0, delta: { type: 'Replace', items: [], first: true, last: true, resourceVersion: '3' } }]);
    expect(describeCalls(run.lw.calls)).toEqual(['list@0 rv=0', 'watch@0 rv=3']);
  });

  it('honours pageSize as the list limit', () => {
    const run = simulate(() => ({}), { until: 10, config: { pageSize: 50 } });
    expect(run.lw.calls[0]?.options).toEqual({ resourceVersion: '0', limit: 50 });
  });

  it.each([
    [0, 300],
    [0.5, 450],
    [0.9999, 599],
  ])('draws the watch timeoutSeconds from [300, 600) (random %p gives %p)', (random, timeoutSeconds) => {
    const run = simulate(({ cold }) => ({ lists: [() => cold('(a|)', { a: page([], '3') })] }), { until: 10, config: { random: () => random } });
    expect(run.lw.calls[1]?.options).toMatchObject({ timeoutSeconds });
  });

  it('reports list progress per page, then watching, with since from the scheduler clock', () => {
    const run = simulate(
      ({ cold }) => ({ lists: [() => cold('a 9ms b 9ms (c|)', { a: page([p1], '9', false, 2), b: page([p2], '9', false, 1), c: page([p3], '9') })] }),
      { until: 100 },
    );
    expect(run.health.map((h) => [h.phase, h.since, h.listedItems, h.remainingItemCount, h.resourceVersion])).toEqual([
      ['listing', 0, 0, undefined, ''],
      ['listing', 0, 1, 2, ''],
      ['listing', 0, 2, 1, ''],
      ['watching', 20, undefined, undefined, '9'],
    ]);
  });

  it('never errors or completes, whatever the API server does', () => {
    const run = simulate(
      ({ cold }) => ({
        lists: [() => cold('#', {}, statusError(500, 'InternalError')), () => cold('(a|)', { a: page([], '3') })],
        watches: [() => cold('1s |'), () => cold('#', {}, expired())],
      }),
      { until: 60_000 },
    );
    expect(run.completedOrErrored).toBe(false);
  });
});

describe('reflect: re-watch or relist', () => {
  it('re-watches from the last resourceVersion at once after a clean close, without relisting', () => {
    const run = simulate(
      ({ cold }) => ({ lists: [() => cold('(a|)', { a: page([], '10') })], watches: [() => cold('1s a 1s |', { a: modified(p3) })] }),
      { until: 10_000 },
    );
    expect(describeCalls(run.lw.calls)).toEqual(['list@0 rv=0', 'watch@0 rv=10', 'watch@2001 rv=12']);
  });

  it('backs off instead of re-watching at once when a watch closes within 1 s without any event', () => {
    const run = simulate(
      ({ cold }) => ({ lists: [() => cold('(a|)', { a: page([], '10') })], watches: [() => cold('|'), () => cold('999ms |')] }),
      { until: 10_000 },
    );
    expect(describeCalls(run.lw.calls)).toEqual(['list@0 rv=0', 'watch@0 rv=10', 'watch@800 rv=10', 'watch@3399 rv=10']);
    expect(run.health.find((h) => h.phase === 'backingOff')?.lastError).toBeInstanceOf(NetworkError);
  });

  it('re-watches from the last resourceVersion when the watch is idle for timeoutSeconds + 5 s', () => {
    const run = simulate(
      ({ cold }) => ({ lists: [() => cold('(a|)', { a: page([], '10') })], watches: [() => cold('10s a', { a: modified(p3) })] }),
      { until: 400_000 },
    );
    expect(describeCalls(run.lw.calls)).toEqual(['list@0 rv=0', 'watch@0 rv=10', `watch@${10_000 + IDLE_MS} rv=12`]);
    const idle = run.health.find((h) => h.lastError instanceof IdleTimeoutError);
    expect(idle).toMatchObject({ phase: 'watching', attempt: 1, since: 10_000 + IDLE_MS });
    expect(run.lw.teardowns()).toBeGreaterThanOrEqual(1);
  });

  it('counts the idle timeout from subscription when the watch never sends anything', () => {
    const run = simulate(({ cold }) => ({ lists: [() => cold('(a|)', { a: page([], '10') })] }), { until: 2 * IDLE_MS + 1 });
    expect(describeCalls(run.lw.calls)).toEqual([
      'list@0 rv=0',
      'watch@0 rv=10',
      `watch@${IDLE_MS} rv=10`,
      `watch@${2 * IDLE_MS} rv=10`,
    ]);
  });

  it('abandons a list that delivers no page for listPageTimeoutMs and retries it after backoff', () => {
    const run = simulate(
      ({ cold }) => ({
        lists: [() => cold('a', { a: page([p1], '', false, 1) }), () => cold('(a|)', { a: page([p1], '10') })],
      }),
      { until: 30_000, config: { listPageTimeoutMs: 5_000, backoff: { jitter: 'none' } } },
    );
    expect(describeCalls(run.lw.calls)).toEqual(['list@0 rv=0', 'list@5800 rv=0', 'watch@5800 rv=10']);
    const timedOut = run.health.find((h) => h.lastError instanceof IdleTimeoutError);
    expect(timedOut?.lastError).toMatchObject({ request: 'list', idleMs: 5_000 });
    expect(run.deltas.map((d) => d.delta.type === 'Replace' && d.delta.first)).toEqual([true, true]);
  });

  it('relists once, unpaged, at the last observed resourceVersion after a 410 on the watch, then watches from the new list', () => {
    const run = simulate(
      ({ cold }) => ({
        lists: [() => cold('(a|)', { a: page([p1], '10') }), () => cold('(a|)', { a: page([p2], '20') })],
        watches: [() => cold('1s a 1s #', { a: bookmark('15') }, expired())],
      }),
      { until: 100_000 },
    );
    expect(describeCalls(run.lw.calls)).toEqual(['list@0 rv=0', 'watch@0 rv=10', 'list@2801 rv=15 unpaged', 'watch@2801 rv=20']);
    // Without limit, the API server answers "not older than 15" from its watch cache; with it, it
    // would read the exact, old state at 15 from etcd.
    expect(run.lw.calls[2]?.options).toEqual({ resourceVersion: '15', limit: 0 });
    expect(run.deltas.at(-1)).toEqual({ at: 2801, delta: { type: 'Replace', items: [p2], first: true, last: true, resourceVersion: '20' } });
  });

  it('keeps paging relists, with resourceVersionMatch=NotOlderThan, when the first list came back in pages', () => {
    const run = simulate(
      ({ cold }) => ({
        lists: [() => cold('a (b|)', { a: page([p1], '10', false), b: page([p2], '10') }), () => cold('(a|)', { a: page([p2], '20') })],
        watches: [() => cold('1s a 1s #', { a: bookmark('15') }, expired())],
      }),
      { until: 100_000 },
    );
    expect(describeCalls(run.lw.calls)).toEqual(['list@0 rv=0', 'watch@1 rv=10', 'list@2802 rv=15 match=NotOlderThan', 'watch@2802 rv=20']);
    expect(run.lw.calls[2]?.options).toEqual({ resourceVersion: '15', resourceVersionMatch: 'NotOlderThan', limit: 500 });
  });

  it('lists at "" (a consistent read) at once when a list at the last resourceVersion gets a 410, backs off if that fails too, and relists at the last version once one succeeds', () => {
    const run = simulate(
      ({ cold }) => ({
        lists: [
          () => cold('(a|)', { a: page([], '10') }),
          () => cold('#', {}, expired()),
          () => cold('#', {}, expired()),
          () => cold('(a|)', { a: page([], '30') }),
          () => cold('-'),
        ],
        watches: [() => cold('1s #', {}, expired()), () => cold('1s #', {}, expired())],
      }),
      // The last list never answers: a page timeout beyond the run keeps it pending.
      { until: 100_000, config: { listPageTimeoutMs: 200_000 } },
    );
    expect(describeCalls(run.lw.calls)).toEqual([
      'list@0 rv=0',
      'watch@0 rv=10',
      'list@1800 rv=10 unpaged',
      'list@1800 rv=',
      'list@3400 rv=',
      'watch@3400 rv=30',
      'list@7600 rv=30 unpaged',
    ]);
  });

  it('lists at "" at once after a "too large resource version" on a list', () => {
    const tooLarge = statusError(504, 'Timeout', { message: 'Timeout: Too large resource version: 15, current: 12', retryAfterSeconds: 3, causeReason: 'ResourceVersionTooLarge' });
    const run = simulate(
      ({ cold }) => ({
        lists: [() => cold('(a|)', { a: page([], '10') }), () => cold('#', {}, tooLarge)],
        watches: [() => cold('1s a 1s #', { a: bookmark('15') }, expired())],
      }),
      { until: 100_000, config: { listPageTimeoutMs: 200_000 } }, // the relist at "" never answers
    );
    expect(describeCalls(run.lw.calls)).toEqual(['list@0 rv=0', 'watch@0 rv=10', 'list@2801 rv=15 unpaged', 'list@2801 rv=']);
  });

  it('lists once more at once, unpaged at the same version, when a continue token expires (client-go\'s pager), as a fresh Replace', () => {
    const run = simulate(
      ({ cold }) => ({
        lists: [() => cold('a 1s #', { a: page([p1], '10', false, 5) }, expired()), () => cold('(a|)', { a: page([p1, p2], '12') })],
      }),
      { until: 100_000 },
    );
    expect(describeCalls(run.lw.calls)).toEqual(['list@0 rv=0', 'list@1001 rv=0 unpaged', 'watch@1001 rv=12']);
    expect(run.deltas).toEqual([
      { at: 0, delta: { type: 'Replace', items: [p1], first: true, last: false, resourceVersion: '10' } },
      { at: 1001, delta: { type: 'Replace', items: [p1, p2], first: true, last: true, resourceVersion: '12' } },
    ]);
  });

  it('lists at "" at once when the unpaged list after an expired continue token gets a 410 too', () => {
    const run = simulate(
      ({ cold }) => ({
        lists: [() => cold('a 1s #', { a: page([p1], '10', false, 5) }, expired()), () => cold('#', {}, expired()), () => cold('(a|)', { a: page([p2], '13') })],
      }),
      { until: 100_000 },
    );
    expect(describeCalls(run.lw.calls)).toEqual(['list@0 rv=0', 'list@1001 rv=0 unpaged', 'list@1001 rv=', 'watch@1001 rv=13']);
  });

  it('retries a list that ends before its last page, reporting a truncated-stream ProtocolError', () => {
    const run = simulate(
      ({ cold }) => ({ lists: [() => cold('a|', { a: page([p1], '10', false) }), () => cold('(a|)', { a: page([p1], '10') })] }),
      { until: 100_000 },
    );
    expect(describeCalls(run.lw.calls)).toEqual(['list@0 rv=0', 'list@801 rv=0', 'watch@801 rv=10']);
    const error = run.health.find((h) => h.phase === 'backingOff')?.lastError;
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error).toMatchObject({ problem: 'truncated-stream' });
  });

  it.each([
    ['connection refused', connectionRefused()],
    ['429', statusError(429, 'TooManyRequests')],
    ['500', statusError(500, 'InternalError')],
    ['503', statusError(503, 'ServiceUnavailable')],
    ['a malformed event', new ProtocolError('malformed-json', 'bad line')],
  ])('backs off and re-watches from the last resourceVersion, without relisting, after %s on the watch', (_label, error) => {
    const run = simulate(
      ({ cold }) => ({ lists: [() => cold('(a|)', { a: page([], '10') })], watches: [() => cold('1s a 1s #', { a: modified(p3) }, error)] }),
      { until: 100_000 },
    );
    expect(describeCalls(run.lw.calls)).toEqual(['list@0 rv=0', 'watch@0 rv=10', 'watch@2801 rv=12']);
  });

  it('wraps anything else a lister-watcher throws in a NetworkError and retries', () => {
    const run = simulate(({ cold }) => ({ lists: [() => cold('#', {}, new TypeError('boom'))] }), { until: 1000 });
    expect(describeCalls(run.lw.calls)).toEqual(['list@0 rv=0', 'list@800 rv=0']);
    const error = run.health[1]?.lastError;
    expect(error).toBeInstanceOf(NetworkError);
    expect(error?.message).toContain('boom');
  });
});

describe('reflect: resourceVersion bookkeeping', () => {
  it('does not advance the resourceVersion on the synthetic ADDEDs of a watch started at ""', () => {
    const run = simulate(
      ({ cold }) => ({
        lists: [() => cold('(a|)', { a: page([], '') })],
        watches: [
          () => cold('a b 2s |', { a: added(pod('x', '5')), b: added(pod('y', '3')) }),
          () => cold('a b c 2s |', { a: added(pod('x', '5')), b: modified(pod('x', '7')), c: added(pod('z', '8')) }),
        ],
      }),
      { until: 10_000 },
    );
    expect(describeCalls(run.lw.calls)).toEqual(['list@0 rv=0', 'watch@0 rv=', 'watch@2002 rv=', 'watch@4005 rv=8']);
  });

  it('advances the resourceVersion on bookmarks and on events that carry one, and skips events without one', () => {
    const run = simulate(
      ({ cold }) => ({
        lists: [() => cold('(a|)', { a: page([], '10') })],
        watches: [() => cold('a b 2s |', { a: bookmark('14'), b: modified(pod('x')) })],
      }),
      { until: 5000 },
    );
    expect(describeCalls(run.lw.calls)).toEqual(['list@0 rv=0', 'watch@0 rv=10', 'watch@2002 rv=14']);
  });
});

describe('reflect: visibility of failures', () => {
  // A 404 is a resource not served, retried at its own pace: reflectResourceGone.spec.ts.
  it.each([401, 403])('retries a %p on the list at backoff, shows it in health and logs it as an error every time', (code) => {
    const error = statusError(code, 'Forbidden');
    const run = simulate(({ cold }) => ({ lists: [() => cold('#', {}, error), () => cold('#', {}, error)] }), {
      until: 3000,
      config: { name: 'pods' },
    });
    expect(describeCalls(run.lw.calls)).toEqual(['list@0 rv=0', 'list@800 rv=0', 'list@2400 rv=0']);
    expect(run.health.filter((h) => h.phase === 'backingOff').map((h) => [h.attempt, h.retryInMs, (h.lastError as StatusError).code])).toEqual([
      [1, 800, code],
      [2, 1600, code],
    ]);
    const errors = run.log.filter((line) => line.level === 'error');
    expect(errors).toHaveLength(2);
    expect(errors[0]?.fields).toMatchObject({ informer: 'pods', err: error, attempt: 1, retryInMs: 800 });
  });

  it('retries a 400 no faster than the backoff cap, logging it as an error from the first failure and showing it in health', () => {
    const badSelector = statusError(400, 'BadRequest', { message: 'unable to parse requirement: found "=", expected: identifier' });
    const run = simulate(({ cold }) => ({ lists: [() => cold('#', {}, badSelector), () => cold('#', {}, badSelector), () => cold('#', {}, badSelector)] }), {
      until: 70_000,
      config: { name: 'pods' },
    });
    expect(describeCalls(run.lw.calls)).toEqual(['list@0 rv=0', 'list@30000 rv=0', 'list@60000 rv=0']);
    expect(run.health.filter((h) => h.phase === 'backingOff').map((h) => [h.attempt, h.retryInMs, (h.lastError as StatusError).code])).toEqual([
      [1, 30_000, 400],
      [2, 30_000, 400],
      [3, 30_000, 400],
    ]);
    expect(run.log.filter((line) => line.level === 'error').map((line) => line.fields['attempt'])).toEqual([1, 2, 3]);
  });

  it.each([401, 403])('retries a %p on the watch at backoff, re-watching from the last resourceVersion', (code) => {
    const run = simulate(
      ({ cold }) => ({ lists: [() => cold('(a|)', { a: page([], '10') })], watches: [() => cold('#', {}, statusError(code, 'Unauthorized'))] }),
      { until: 3000 },
    );
    expect(describeCalls(run.lw.calls)).toEqual(['list@0 rv=0', 'watch@0 rv=10', 'watch@800 rv=10']);
    expect(run.health.find((h) => h.phase === 'backingOff')).toMatchObject({ attempt: 1, lastError: { code } });
  });

  it('clears attempt and lastError on the first watch event after a failure', () => {
    const run = simulate(
      ({ cold }) => ({
        lists: [() => cold('(a|)', { a: page([], '10') })],
        watches: [() => cold('#', {}, connectionRefused()), () => cold('5ms a', { a: modified(p3) })],
      }),
      { until: 3000 },
    );
    expect(run.health.map((h) => [h.phase, h.attempt, h.lastError?.constructor.name])).toEqual([
      ['listing', 0, undefined],
      ['watching', 0, undefined],
      ['backingOff', 1, 'NetworkError'],
      ['watching', 1, 'NetworkError'],
      ['watching', 0, undefined],
    ]);
  });

  it('puts the informer name in every log line', () => {
    const run = simulate(
      ({ cold }) => ({ lists: [() => cold('(a|)', { a: page([], '10') })], watches: [() => cold('#', {}, expired())] }),
      { until: 3000, config: { name: 'pods' } },
    );
    expect(run.log.length).toBeGreaterThan(3);
    for (const line of run.log) expect(line.fields['informer']).toBe('pods');
  });

  it('interleaves its reports with the deltas, in the order things happen', () => {
    const run = simulate(
      ({ cold }) => ({ lists: [() => cold('a 9ms (b|)', { a: page([p1], '', false, 1), b: page([p2], '10') })], watches: [() => cold('5ms a', { a: modified(p3) })] }),
      { until: 100 },
    );
    const described = run.events.map((event) => {
      if (event.type === 'health') return `health ${event.health.phase} listed=${event.health.listedItems ?? '-'}`;
      if (event.type === 'opened') return `opened ${event.request.kind} rv=${event.request.resourceVersion}`;
      if (event.type === 'ended') return `ended ${event.request.kind} ${event.outcome} items=${event.items}`;
      return event.type;
    });
    expect(described).toEqual([
      'health listing listed=0',
      'opened list rv=0',
      'Replace',
      'health listing listed=1',
      'Replace',
      'ended list completed items=2',
      'health watching listed=-',
      'opened watch rv=10',
      'Updated',
    ]);
  });
});

describe('reflect: a broken logger', () => {
  it('does not stop the reflector when the logger throws', () => {
    const scheduler = newTestScheduler();
    scheduler.run(({ cold }) => {
      const lw = scriptedListerWatcher(scheduler, { lists: [() => cold('(a|)', { a: page([], '10') })], watches: [() => cold('#', {}, connectionRefused())] });
      const throwing = () => {
        throw new Error('logger bug');
      };
      const subscription = reflect(lw, { scheduler, random: zero, logger: { debug: throwing, info: throwing, warn: throwing, error: throwing } }).subscribe();
      scheduler.schedule(() => {
        expect(describeCalls(lw.calls)).toEqual(['list@0 rv=0', 'watch@0 rv=10', 'watch@800 rv=10']);
        subscription.unsubscribe();
      }, 1000);
    });
  });
});

describe('reflect: configuration', () => {
  const lw = scriptedListerWatcher(newTestScheduler(), {});
  it.each([
    ['a negative pageSize', { pageSize: -1 }],
    ['a zero initialEventsTimeoutMs', { initialEventsTimeoutMs: 0 }],
    ['an inverted watchTimeoutSeconds range', { watchTimeoutSeconds: { min: 600, max: 300 } }],
    ['an initialEventsTimeoutMs a timer cannot hold', { initialEventsTimeoutMs: 2 ** 31 }],
    ['a backoff factor below 1', { backoff: { factor: 0.5 } }],
  ])('rejects %s with a RangeError at call time', (_label, config) => {
    expect(() => reflect(lw, config)).toThrow(RangeError);
  });
});
