import { silentLogger } from '../../lib/base/logger';
import { NEVER, throwError } from 'rxjs';
import type { TestScheduler } from 'rxjs/testing';
import { informerFrom } from '../../lib/informer/informer';
import type { InformerMetricEvent } from '../../lib/informer/informerMetrics';
import type { ListerWatcher } from '../../lib/sources/listerWatcher';
import {
  added,
  bookmark,
  describeCalls,
  expired,
  initialEventsEnd,
  modified,
  newTestScheduler,
  page,
  pod,
  scriptedListerWatcher,
  statusError,
} from '../reflector/reflectHarness';
import type { ScriptedListerWatcher } from '../reflector/reflectHarness';
import type { RunHelpers } from 'rxjs/testing';

const p1 = pod('p1', '5');
const p2 = pod('p2', '7');
const p3 = pod('p3', '11');
const p3b = pod('p3', '12');

/** Runs an informer over `script` in virtual time with metrics$ subscribed from 0 and informer$ from `startAt`, until `until`. */
function measure(
  script: (helpers: RunHelpers, scheduler: TestScheduler) => ListerWatcher,
  options: { until: number; startAt?: number },
): { events: { at: number; event: InformerMetricEvent }[]; lw: ListerWatcher } {
  const scheduler = newTestScheduler();
  const events: { at: number; event: InformerMetricEvent }[] = [];
  let lw: ListerWatcher | undefined;
  scheduler.run((helpers) => {
    lw = script(helpers, scheduler);
    const informer = informerFrom(lw, { logger: silentLogger, name: 'pods', scheduler, backoff: { jitter: 'none' }, watchTimeoutSeconds: { min: 300, max: 300 } });
    const metrics = informer.metrics$.subscribe((event) => events.push({ at: scheduler.now(), event }));
    scheduler.schedule(() => {
      const running = informer.informer$.subscribe();
      scheduler.schedule(() => running.unsubscribe(), options.until - (options.startAt ?? 0));
    }, options.startAt ?? 0);
    scheduler.schedule(() => metrics.unsubscribe(), options.until + 1);
  });
  return { events, lw: lw! };
}

describe('informer metrics$', () => {
  it('reports each list and watch with its duration and items, each watch event by type, and a relist after a 410 as caused by it', () => {
    const { events, lw } = measure(
      ({ cold }, scheduler) =>
        scriptedListerWatcher(scheduler, {
          lists: [() => cold('5ms (a|)', { a: page([p1, p2], '10') }), () => cold('3ms (a|)', { a: page([p1, p3b], '20') })],
          watches: [
            () => cold('10ms a 9ms b 9ms c 9ms #', { a: added(p3), b: modified(p3b), c: bookmark('15') }, expired()),
            () => cold('|'),
            () => NEVER,
          ],
        }),
      { until: 5000 },
    );
    expect(describeCalls((lw as ScriptedListerWatcher).calls)).toEqual(['list@0 rv=0', 'watch@5 rv=10', 'list@845 rv=15 unpaged', 'watch@848 rv=20', 'watch@2448 rv=20']);
    expect(events).toEqual([
      { at: 0, event: { type: 'listStarted', streaming: false, relist: undefined } },
      { at: 5, event: { type: 'listEnded', streaming: false, outcome: 'completed', seconds: 0.005, items: 2 } },
      { at: 5, event: { type: 'watchStarted', continued: false } },
      { at: 15, event: { type: 'watchEvent', eventType: 'ADDED', resourceVersion: '11' } },
      { at: 25, event: { type: 'watchEvent', eventType: 'MODIFIED', resourceVersion: '12' } },
      { at: 35, event: { type: 'watchEvent', eventType: 'BOOKMARK', resourceVersion: '15' } },
      { at: 45, event: { type: 'watchEnded', outcome: 'failed', seconds: 0.04, events: 3, short: false } },
      // 800 ms of backoff (no jitter), then the relist the 410 called for.
      { at: 845, event: { type: 'listStarted', streaming: false, relist: 'expired' } },
      { at: 848, event: { type: 'listEnded', streaming: false, outcome: 'completed', seconds: 0.003, items: 2 } },
      { at: 848, event: { type: 'watchStarted', continued: false } },
      // A watch that closes at once without an event is client-go's short watch, and a failure.
      { at: 848, event: { type: 'watchEnded', outcome: 'failed', seconds: 0, events: 0, short: true } },
      { at: 2448, event: { type: 'watchStarted', continued: false } },
      { at: 5000, event: { type: 'watchEnded', outcome: 'stopped', seconds: 2.552, events: 0, short: false } },
    ]);
  });

  it('gives each relist its cause: 410, a too-large resourceVersion, any other error', () => {
    const tooLarge = statusError(504, 'Timeout', { message: 'Too large resource version: 16, current: 15', causeReason: 'ResourceVersionTooLarge' });
    const { events } = measure(
      ({ cold }, scheduler) =>
        scriptedListerWatcher(scheduler, {
          lists: [
            () => cold('(a|)', { a: page([p1], '10') }),
            () => cold('#', {}, tooLarge), // the relist at 10 after the watch's 410
            () => cold('#', {}, statusError(500, 'InternalError')), // the list at '' it calls for, at once
            () => cold('(a|)', { a: page([p1], '30') }), // after backing off
          ],
          watches: [() => throwError(() => expired())],
        }),
      { until: 10_000 },
    );
    const lists = events.filter(({ event }) => event.type === 'listStarted').map(({ at, event }) => ({ at, relist: (event as { relist?: string }).relist }));
    expect(lists).toEqual([
      { at: 0, relist: undefined },
      { at: 800, relist: 'expired' },
      { at: 800, relist: 'tooLargeResourceVersion' },
      { at: 2400, relist: 'error' },
    ]);
    const failedLists = events.filter(({ event }) => event.type === 'listEnded' && event.outcome === 'failed');
    expect(failedLists.map(({ at }) => at)).toEqual([800, 800]);
  });

  it('reports a streaming list as a list of its initial objects, and the watch it goes on as, as continued', () => {
    const { events } = measure(
      ({ cold }, scheduler) => ({
        ...scriptedListerWatcher(scheduler, {
          watches: [() => cold('a b 3ms c 5ms d', { a: added(p1), b: added(p2), c: initialEventsEnd('10'), d: modified(pod('p1', '11')) })],
        }),
        supportsStreamingList: true,
      }),
      { until: 100 },
    );
    expect(events).toEqual([
      { at: 0, event: { type: 'listStarted', streaming: true, relist: undefined } },
      { at: 5, event: { type: 'listEnded', streaming: true, outcome: 'completed', seconds: 0.005, items: 2 } },
      { at: 5, event: { type: 'watchStarted', continued: true } },
      { at: 11, event: { type: 'watchEvent', eventType: 'MODIFIED', resourceVersion: '11' } },
      { at: 100, event: { type: 'watchEnded', outcome: 'stopped', seconds: 0.095, events: 1, short: false } },
    ]);
  });

  it('never starts the watch itself, and measures nothing from before it was subscribed', () => {
    const scheduler = newTestScheduler();
    scheduler.run(({ cold }) => {
      const lw = scriptedListerWatcher(scheduler, { lists: [() => cold('(a|)', { a: page([p1], '10') })], watches: [() => cold('5ms a', { a: added(p3) })] });
      const informer = informerFrom(lw, { logger: silentLogger, scheduler });
      const seen: InformerMetricEvent[] = [];
      const early = informer.metrics$.subscribe();
      scheduler.schedule(() => {
        expect(lw.calls).toEqual([]);
        early.unsubscribe();
        const running = informer.informer$.subscribe();
        scheduler.schedule(() => running.unsubscribe(), 20);
      }, 10);
      scheduler.schedule(() => informer.metrics$.subscribe((event) => seen.push(event)), 12);
      scheduler.schedule(() => {
        expect(describeCalls(lw.calls)).toEqual(['list@10 rv=0', 'watch@10 rv=10']);
        expect(seen).toEqual([{ type: 'watchEvent', eventType: 'ADDED', resourceVersion: '11' }]);
      }, 20);
    });
  });
});
