import { silentLogger } from '../../lib/base/logger';
import { concat, NEVER, of, Subject } from 'rxjs';
import type { Observable } from 'rxjs';
import { informerFrom, informerOfRuns } from '../../lib/informer/informer';
import type { InformerMetricEvent } from '../../lib/informer/informerMetrics';
import type { Health } from '../../lib/reflector/health';
import { reflectorEvents } from '../../lib/reflector/reflect';
import type { ReflectorEvent } from '../../lib/reflector/reflectorEvent';
import { connectionRefused, modified, newTestScheduler, page, pod, scriptedListerWatcher } from '../reflector/reflectHarness';

/**
 * A reflector run's stream is closed when it is stopped, so it cannot report its own stop: the
 * informer that stopped it does, on health$ (idle) and metrics$ (the request in flight, stopped).
 */
describe('informer: the end of a reflector run', () => {
  it('shows health idle when the informer stops, with the attempts and the error it stopped with', () => {
    const scheduler = newTestScheduler();
    const seen: { at: number; health: Health }[] = [];
    scheduler.run(({ cold }) => {
      const lw = scriptedListerWatcher(scheduler, { lists: [() => cold('(a|)', { a: page([], '10') })], watches: [() => cold('#', {}, connectionRefused())] });
      const informer = informerFrom(lw, { logger: silentLogger, name: 'pods', scheduler, backoff: { jitter: 'none' } });
      informer.health$.subscribe((health) => seen.push({ at: scheduler.now(), health }));
      const running = informer.informer$.subscribe();
      scheduler.schedule(() => running.unsubscribe(), 500);
    });
    expect(seen.map(({ at, health }) => [at, health.phase, health.attempt, health.since])).toEqual([
      [0, 'idle', 0, 0],
      [0, 'listing', 0, 0],
      [0, 'watching', 0, 0],
      [0, 'backingOff', 1, 0],
      // 500 ms into the 800 ms wait, nothing runs: idle since then, the failure still shown.
      [500, 'idle', 1, 500],
    ]);
    expect(seen.at(-1)?.health).toMatchObject({ resourceVersion: '10', retryInMs: undefined, lastError: { message: expect.stringMatching(/^pods: /) } });
  });

  it('ends a run when the next one starts: idle and the request stopped, then the new run', () => {
    const scheduler = newTestScheduler();
    const phases: string[] = [];
    const metrics: { at: number; event: InformerMetricEvent }[] = [];
    scheduler.run(({ cold }) => {
      const first = scriptedListerWatcher(scheduler, { lists: [() => cold('(a|)', { a: page([pod('p1', '5')], '10') })], watches: [() => cold('5ms a', { a: modified(pod('p1', '11')) })] });
      const second = scriptedListerWatcher(scheduler, { lists: [() => cold('(a|)', { a: page([], '20') })] });
      const runs = new Subject<Observable<ReflectorEvent>>();
      const informer = informerOfRuns(() => runs.asObservable(), { scheduler });
      informer.health$.subscribe((health) => phases.push(health.phase));
      informer.metrics$.subscribe((event) => metrics.push({ at: scheduler.now(), event }));
      const running = informer.informer$.subscribe();
      scheduler.schedule(() => runs.next(reflectorEvents(first, { logger: silentLogger, scheduler })), 0);
      scheduler.schedule(() => runs.next(reflectorEvents(second, { logger: silentLogger, scheduler })), 100);
      scheduler.schedule(() => running.unsubscribe(), 200);
    });
    expect(phases).toEqual(['idle', 'listing', 'watching', 'idle', 'listing', 'watching', 'idle']);
    expect(metrics.filter(({ event }) => event.type !== 'listStarted' && event.type !== 'listEnded')).toEqual([
      { at: 0, event: { type: 'watchStarted', continued: false } },
      { at: 5, event: { type: 'watchEvent', eventType: 'MODIFIED', resourceVersion: '11' } },
      { at: 100, event: { type: 'watchEnded', outcome: 'stopped', seconds: 0.1, events: 1, short: false } },
      { at: 100, event: { type: 'watchStarted', continued: false } },
      { at: 200, event: { type: 'watchEnded', outcome: 'stopped', seconds: 0.1, events: 0, short: false } },
    ]);
  });

  it('shows idle while a stand-in run without reports replaces the reflector (a sharded informer that serves nothing)', () => {
    const scheduler = newTestScheduler();
    const phases: string[] = [];
    const ended: InformerMetricEvent[] = [];
    scheduler.run(({ cold }) => {
      const lw = scriptedListerWatcher(scheduler, { lists: [() => cold('3ms (a|)', { a: page([pod('p1', '5'), pod('p2', '6')], '10') })] });
      const standIn: Observable<ReflectorEvent> = concat(of<ReflectorEvent>({ type: 'Replace', items: [], first: true, last: true, resourceVersion: '' }), NEVER);
      const runs = new Subject<Observable<ReflectorEvent>>();
      const informer = informerOfRuns(() => runs.asObservable(), { scheduler });
      informer.health$.subscribe((health) => phases.push(health.phase));
      informer.metrics$.subscribe((event) => event.type.endsWith('Ended') && ended.push(event));
      const running = informer.informer$.subscribe();
      scheduler.schedule(() => runs.next(reflectorEvents(lw, { logger: silentLogger, scheduler })), 0);
      // The list is 2 ms into its 3: both items are still to come.
      scheduler.schedule(() => runs.next(standIn), 2);
      scheduler.schedule(() => running.unsubscribe(), 50);
    });
    expect(phases).toEqual(['idle', 'listing', 'idle']);
    expect(ended).toEqual([{ type: 'listEnded', streaming: false, outcome: 'stopped', seconds: 0.002, items: 0 }]);
  });
});
