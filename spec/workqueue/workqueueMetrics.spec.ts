import { filter } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { WorkqueueMetricEvent } from '../../lib/workqueue/workqueueMetrics';
import { reconcile } from '../../lib/workqueue/reconcile';

/** reconcile()'s `metrics` sink in virtual time: one frame is one millisecond. */

function newScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

describe('reconcile metrics', () => {
  it('measures adds, the wait for a worker, each reconcile and each failure, and the stop', () => {
    const scheduler = newScheduler();
    const measured: { at: number; event: WorkqueueMetricEvent }[] = [];
    scheduler.run(({ hot, cold }) => {
      // a: fails once (4 ms), then succeeds (2 ms). b arrives while a runs and waits for the one worker.
      let aCalls = 0;
      const subscription = hot('-a-b-a')
        .pipe(
          reconcile((key) => (key === 'a' && ++aCalls === 1 ? cold('----#', {}, new Error('boom')) : cold('--|')), {
            scheduler,
            rateLimit: { baseDelay: 10 },
            metrics: (event) => measured.push({ at: scheduler.now(), event }),
          }),
        )
        .subscribe();
      scheduler.schedule(() => subscription.unsubscribe(), 50);
    });
    expect(measured).toEqual([
      { at: 1, event: { type: 'added', key: 'a', depth: 1 } },
      { at: 1, event: { type: 'started', key: 'a', waitedSeconds: 0, depth: 0, at: 1 } },
      { at: 3, event: { type: 'added', key: 'b', depth: 1 } },
      // a again while a runs: added and in the depth beside b (client-go counts both), queued once a is done.
      { at: 5, event: { type: 'added', key: 'a', depth: 2 } },
      { at: 5, event: { type: 'finished', key: 'a', seconds: 0.004, outcome: 'failed', at: 5 } },
      { at: 5, event: { type: 'started', key: 'b', waitedSeconds: 0.002, depth: 1, at: 5 } },
      { at: 7, event: { type: 'finished', key: 'b', seconds: 0.002, outcome: 'reconciled', at: 7 } },
      { at: 7, event: { type: 'started', key: 'a', waitedSeconds: 0.002, depth: 0, at: 7 } },
      { at: 9, event: { type: 'finished', key: 'a', seconds: 0.002, outcome: 'reconciled', at: 9 } },
      // The retry of the failure (10 ms after it) finds a reconciled already, and runs it again, as client-go does.
      { at: 15, event: { type: 'added', key: 'a', depth: 1 } },
      { at: 15, event: { type: 'started', key: 'a', waitedSeconds: 0, depth: 0, at: 15 } },
      { at: 17, event: { type: 'finished', key: 'a', seconds: 0.002, outcome: 'reconciled', at: 17 } },
      { at: 50, event: { type: 'stopped' } },
    ]);
  });

  it("matches client-go's TestMetrics for a key re-added while it is processed: depth counts it at once, its wait counts from that add", () => {
    // client-go's util/workqueue/metrics_test.go, in ms instead of µs: foo waits 50 for a worker
    // (here the one worker is busy), is added five times while it is processed (one add, depth 1),
    // and its second wait is the time from that add to when the worker takes it again (25), not 0.
    const scheduler = newScheduler();
    const measured: { at: number; event: WorkqueueMetricEvent }[] = [];
    scheduler.run(({ hot, cold, flush }) => {
      hot('(bf) 56ms (fffff)')
        .pipe(reconcile((key) => (key === 'b' ? cold('50ms |') : cold('35ms |')), { scheduler, metrics: (event) => measured.push({ at: scheduler.now(), event }) }))
        .subscribe();
      flush();
    });
    expect(measured).toEqual([
      { at: 0, event: { type: 'added', key: 'b', depth: 1 } },
      { at: 0, event: { type: 'started', key: 'b', waitedSeconds: 0, depth: 0, at: 0 } },
      { at: 0, event: { type: 'added', key: 'f', depth: 1 } },
      { at: 50, event: { type: 'finished', key: 'b', seconds: 0.05, outcome: 'reconciled', at: 50 } },
      { at: 50, event: { type: 'started', key: 'f', waitedSeconds: 0.05, depth: 0, at: 50 } },
      // "Add it back while processing; multiple adds of the same item are de-duped": one add, and
      // "one thing remains in the queue".
      { at: 60, event: { type: 'added', key: 'f', depth: 1 } },
      { at: 85, event: { type: 'finished', key: 'f', seconds: 0.035, outcome: 'reconciled', at: 85 } },
      { at: 85, event: { type: 'started', key: 'f', waitedSeconds: 0.025, depth: 0, at: 85 } },
      { at: 120, event: { type: 'finished', key: 'f', seconds: 0.035, outcome: 'reconciled', at: 120 } },
    ]);
  });

  it('logs a throwing sink and goes on reconciling', () => {
    const scheduler = newScheduler();
    const errors: string[] = [];
    const logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: (_fields: Record<string, unknown>, message: string) => void errors.push(message) };
    scheduler.run(({ hot, expectObservable }) => {
      const output = hot('-a-b').pipe(
        reconcile(() => undefined, {
          scheduler,
          logger,
          metrics: () => {
            throw new Error('sink broke');
          },
        }),
        filter((event) => event.type !== 'queue'),
      );
      expectObservable(output, '^ 5ms !').toBe('-a-b', {
        a: { type: 'reconciled', key: 'a', duration: 0, requeueAfter: undefined },
        b: { type: 'reconciled', key: 'b', duration: 0, requeueAfter: undefined },
      });
    });
    // added, started, finished per key, and the stop.
    expect(errors).toEqual(Array(7).fill('the metrics sink threw'));
  });
});
