import { take } from 'rxjs';
import type { Observable } from 'rxjs';
import type { RunHelpers } from 'rxjs/testing';
import { reflect, reflectorEvents } from '../../lib/reflector/reflect';
import type { ListPage, WatchEvent } from '../../lib/sources/listerWatcher';
import { added, connectionRefused, describeCalls, newTestScheduler, page, pod, scriptedListerWatcher, simulate } from './reflectHarness';

type Script = (helpers: RunHelpers) => { lists?: (() => Observable<ListPage>)[]; watches?: (() => Observable<WatchEvent>)[] };

const situations: [string, Script, { streamingList?: boolean }][] = [
  ['a list is in flight', ({ cold }) => ({ lists: [() => cold('a', { a: page([], '', false) })] }), {}],
  ['a watch is open (its idle timer armed)', ({ cold }) => ({ lists: [() => cold('(a|)', { a: page([], '10') })] }), {}],
  [
    'a backoff wait is pending',
    ({ cold }) => ({ lists: [() => cold('(a|)', { a: page([], '10') })], watches: [() => cold('#', {}, connectionRefused())] }),
    {},
  ],
  ['a streaming list waits for its bookmark', ({ cold }) => ({ watches: [() => cold('a', { a: added(pod('p1', '5')) })] }), { streamingList: true }],
];

describe('reflect: unsubscribing', () => {
  it.each(situations)('while %s aborts the request and clears every timer', (_label, script, config) => {
    const run = simulate(script, { until: 100, config });
    expect(run.lw.open()).toBe(0);
    expect(run.lw.calls.every((call) => call.at <= 100 && call.closedAt !== undefined && call.closedAt <= 100)).toBe(true);
    expect(run.pendingAfterUnsubscribe).toBe(0);
  });

  it('makes a resubscription a fresh start: listing again at "0"', () => {
    const scheduler = newTestScheduler();
    scheduler.run(({ cold }) => {
      const lw = scriptedListerWatcher(scheduler, {
        lists: [() => cold('(a|)', { a: page([], '10') }), () => cold('(a|)', { a: page([], '20') })],
      });
      const reflector$ = reflect(lw, { scheduler });
      const first = reflector$.subscribe();
      scheduler.schedule(() => first.unsubscribe(), 50);
      scheduler.schedule(() => {
        const second = reflector$.subscribe();
        scheduler.schedule(() => second.unsubscribe(), 50);
      }, 100);
      scheduler.schedule(() => expect(describeCalls(lw.calls)).toEqual(['list@0 rv=0', 'watch@0 rv=10', 'list@100 rv=0', 'watch@100 rv=20']), 200);
    });
  });

  it('opens nothing when the consumer unsubscribes on the first report, which comes before the first request', () => {
    const scheduler = newTestScheduler();
    scheduler.run(({ cold }) => {
      const lw = scriptedListerWatcher(scheduler, { lists: [() => cold('(a|)', { a: page([], '10') })] });
      const seen: string[] = [];
      reflectorEvents(lw, { scheduler })
        .pipe(take(1))
        .subscribe((event) => seen.push(event.type));
      scheduler.schedule(() => {
        expect(seen).toEqual(['health']);
        expect(lw.calls).toEqual([]);
        expect(scheduler.actions).toHaveLength(0);
      }, 10);
    });
  });

  it('opens no watch when the consumer unsubscribes on the report that the list ended', () => {
    const scheduler = newTestScheduler();
    scheduler.run(({ cold }) => {
      const lw = scriptedListerWatcher(scheduler, { lists: [() => cold('(a|)', { a: page([], '10') })] });
      const subscription = reflectorEvents(lw, { scheduler }).subscribe((event) => {
        if (event.type === 'ended') subscription.unsubscribe();
      });
      scheduler.schedule(() => {
        expect(describeCalls(lw.calls)).toEqual(['list@0 rv=0']);
        expect(lw.open()).toBe(0);
      }, 10);
    });
  });

  it('stops at once when the consumer unsubscribes from inside a Replace page', () => {
    const scheduler = newTestScheduler();
    scheduler.run(({ cold }) => {
      const lw = scriptedListerWatcher(scheduler, { lists: [() => cold('(a|)', { a: page([], '10') })] });
      const subscription = reflect(lw, { scheduler }).subscribe(() => subscription.unsubscribe());
      scheduler.schedule(() => {
        expect(describeCalls(lw.calls)).toEqual(['list@0 rv=0']);
        expect(lw.open()).toBe(0);
      }, 10);
    });
  });
});
