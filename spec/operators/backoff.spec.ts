import { NEVER, Observable, defer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { backoff } from '../../lib/operators/backoff';
import { StatusError } from '../../lib/base/errors';

describe('backoff operator', () => {
  let scheduler: TestScheduler;
  beforeEach(() => {
    scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
  });

  it('resubscribes after 800 ms, then 1600 ms, passing values through', () => {
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('a#');
      expectObservable(source.pipe(backoff({ scheduler, random: () => 0 })), '^ 3s !').toBe('a 800ms a 1600ms a');
      expectSubscriptions(source.subscriptions).toBe(['^!', '801ms ^!', '2402ms ^!']);
    });
  });

  it('draws each wait from [d, 2d), as client-go does: with random 0.5, 1200 ms then 2400 ms', () => {
    scheduler.run(({ cold, expectObservable }) => {
      expectObservable(cold('a#').pipe(backoff({ scheduler, random: () => 0.5 })), '^ 4s !').toBe('a 1200ms a 2400ms a');
    });
  });

  it('honours the Retry-After of an InformerError', () => {
    scheduler.run(({ cold, expectObservable }) => {
      const tooMany = new StatusError({ kind: 'Status', apiVersion: 'v1', code: 429, reason: 'TooManyRequests' }, 4);
      const source = cold('a#', undefined, tooMany);
      expectObservable(source.pipe(backoff({ scheduler, random: () => 0 })), '^ 5s !').toBe('a 4000ms a');
    });
  });

  it('starts the sequence over after a retry has run 2 min without failing', () => {
    scheduler.run(({ expectObservable }) => {
      let subscriptions = 0;
      const source = defer(() => {
        subscriptions += 1;
        // The second subscription lives for 2 min before failing; the others fail at once.
        return subscriptions === 2
          ? new Observable<string>((s) => scheduler.schedule(() => s.error(new Error('late')), 120_000))
          : new Observable<string>((s) => s.error(new Error('now')));
      });
      const times: number[] = [];
      const probe = defer(() => {
        times.push(scheduler.now());
        return source;
      });
      expectObservable(probe.pipe(backoff({ scheduler, random: () => 0 })), '^ 200s !').toBe('');
      scheduler.schedule(() => expect(times.slice(0, 4)).toEqual([0, 800, 120_800 + 800, 120_800 + 800 + 1600]), 199_000);
    });
  });

  it('passes on errors that shouldRetry rejects', () => {
    scheduler.run(({ cold, expectObservable }) => {
      const fatal = new Error('fatal');
      const source = cold('a#', undefined, fatal);
      expectObservable(source.pipe(backoff({ scheduler, shouldRetry: (error) => error !== fatal }))).toBe('a#', undefined, fatal);
    });
  });

  it('cancels the pending wait on unsubscribe, leaving no timer behind', () => {
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('#');
      expectObservable(source.pipe(backoff({ scheduler, random: () => 0 })), '^ 100ms !').toBe('');
      expectSubscriptions(source.subscriptions).toBe(['(^!)']);
      scheduler.schedule(() => expect(scheduler.actions).toHaveLength(0), 101);
    });
  });

  it('unsubscribes its source when the subscriber leaves, whether the source is running or waiting to be retried', () => {
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const running = cold('a----');
      expectObservable(running.pipe(backoff({ scheduler, random: () => 0 })), '^--!').toBe('a');
      expectSubscriptions(running.subscriptions).toBe('^--!');
      // Fails at 1 and at 802 (retried at 801); the subscriber leaves at 1000, before the retry due at 2402.
      const retried = cold('-#');
      expectObservable(retried.pipe(backoff({ scheduler, random: () => 0 })), '^ 999ms !').toBe('');
      expectSubscriptions(retried.subscriptions).toBe(['^!', '801ms ^!']);
    });
  });

  it('keeps a separate sequence per subscription', () => {
    scheduler.run(({ cold, expectObservable }) => {
      const retried = cold('a#').pipe(backoff({ scheduler, random: () => 0 }));
      expectObservable(retried, '^ 1s !').toBe('a 800ms a');
      expectObservable(retried, '- 500ms ^ 1s !').toBe('- 500ms a 800ms a');
    });
  });

  it('completes when the source completes', () => {
    scheduler.run(({ cold, expectObservable }) => {
      expectObservable(cold('a|').pipe(backoff({ scheduler }))).toBe('a|');
      expectObservable(NEVER.pipe(backoff({ scheduler })), '^ 1s !').toBe('');
    });
  });
});
