import { silentLogger } from '../../lib/base/logger';
import { filter, NEVER, Observable, Subject, throwError } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { reconcile, type ReconcileContext, type ReconcileEvent, type ReconcileOptions } from '../../lib/workqueue/reconcile';
import { requeueAfter, type ReconcileOutcome } from '../../lib/workqueue/reconcileResult';
import { flushMicrotasks, unschedulable } from '../handlers/handleFixtures';

/**
 * reconcile() in virtual time: one frame is one millisecond. Reconcile functions return cold
 * Observables, so each call's duration is a marble; calls are logged as `key@start`.
 */

function newScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

type Behaviour = (key: string, call: number, context: ReconcileContext) => Observable<ReconcileOutcome> | ReconcileOutcome | PromiseLike<ReconcileOutcome>;

/** Runs `keys` through reconcile in `scheduler`'s virtual time, logging calls and events. */
function runReconcile(scheduler: TestScheduler, keys: Observable<string>, behaviour: Behaviour, options: ReconcileOptions = {}) {
  const calls: string[] = [];
  const events: (ReconcileEvent & { readonly at: number })[] = [];
  const perKey = new Map<string, number>();
  let completedAt: number | undefined;
  const subscription = keys
    .pipe(
      reconcile(
        (key, context) => {
          const call = (perKey.get(key) ?? 0) + 1;
          perKey.set(key, call);
          calls.push(`${key}@${scheduler.now()}`);
          return behaviour(key, call, context);
        },
        // The failures these specs provoke are read from the events, not from log lines.
        { scheduler, logger: silentLogger, ...options },
      ),
    )
    .subscribe({ next: (event) => events.push({ ...event, at: scheduler.now() }), complete: () => (completedAt = scheduler.now()) });
  const outcomes = (): string[] =>
    events.filter((e) => e.type !== 'queue').map((e) => (e.type === 'failed' ? `failed ${e.key} #${e.failures} retry in ${e.retryIn}` : `reconciled ${e.key}${e.requeueAfter === undefined ? '' : ` requeue ${e.requeueAfter}`}`));
  return { calls, events, outcomes, subscription, completedAt: () => completedAt };
}

describe('reconcile', () => {
  describe('keys, not objects', () => {
    it('keeps one entry per waiting key however many times it arrives', () => {
      const scheduler = newScheduler();
      scheduler.run(({ hot, cold, flush }) => {
        // a runs 1–11; meanwhile b, c and b, c, b again arrive: each waits once.
        const run = runReconcile(scheduler, hot('-a-b-c-b-cb'), () => cold('----------|'));
        flush();
        expect(run.calls).toEqual(['a@1', 'b@11', 'c@21']);
      });
    });

    it('never hands a key to two workers: a key that changes while it runs runs once more after', () => {
      const scheduler = newScheduler();
      scheduler.run(({ hot, cold, flush }) => {
        // Four workers, but a arrives at 1, 3 and 5 while its first reconcile runs until 11.
        const run = runReconcile(scheduler, hot('-a-a-a'), () => cold('----------|'), { concurrency: 4 });
        flush();
        expect(run.calls).toEqual(['a@1', 'a@11']);
      });
    });

    it('runs up to `concurrency` different keys at once, in arrival order', () => {
      const scheduler = newScheduler();
      scheduler.run(({ hot, cold, flush }) => {
        const run = runReconcile(scheduler, hot('-(abcd)-e'), () => cold('-----|'), { concurrency: 2 });
        flush();
        expect(run.calls).toEqual(['a@1', 'b@1', 'c@6', 'd@6', 'e@11']);
      });
    });
  });

  describe('outcomes', () => {
    it('retries a failing key after 5 ms doubling per failure, and forgets the failures after a success', () => {
      const scheduler = newScheduler();
      scheduler.run(({ hot, cold, flush }) => {
        // a fails four times, succeeds, then (arriving again at 200) fails once more.
        const run = runReconcile(scheduler, hot('-a 198ms a'), (_key, call) => (call <= 4 || call === 6 ? cold('#', {}, new Error(`no ${call}`)) : cold('|')));
        flush();
        expect(run.calls).toEqual(['a@1', 'a@6', 'a@16', 'a@36', 'a@76', 'a@200', 'a@205']);
        expect(run.outcomes()).toEqual([
          'failed a #1 retry in 5',
          'failed a #2 retry in 10',
          'failed a #3 retry in 20',
          'failed a #4 retry in 40',
          'reconciled a',
          'failed a #1 retry in 5',
          'reconciled a',
        ]);
      });
    });

    it('caps a key’s retry delay at maxDelay (client-go: 1000 s)', () => {
      const scheduler = newScheduler();
      scheduler.run(({ hot, flush }) => {
        const run = runReconcile(scheduler, hot('a'), () => throwError(() => new Error('down')), { rateLimit: { qps: Infinity } });
        scheduler.schedule(() => run.subscription.unsubscribe(), 3_600_000);
        flush();
        const delays = run.events.flatMap((e) => (e.type === 'failed' ? [e.retryIn] : []));
        // 5 ms · 2^17 = 655 s; the 19th failure onwards waits the cap.
        expect(delays.slice(16, 21)).toEqual([327_680, 655_360, 1_000_000, 1_000_000, 1_000_000]);
      });
    });

    it('spaces retries of many failing keys with the overall token bucket: 10 per second after a burst of 100', () => {
      const scheduler = newScheduler();
      scheduler.run(({ cold, flush }) => {
        const keys = Array.from({ length: 103 }, (_, i) => `k${i}`);
        const run = runReconcile(scheduler, cold(`(${'x'.repeat(103)})`).pipe(/* keys by index */ (source) => new Observable<string>((s) => {
          let i = 0;
          return source.subscribe({ next: () => s.next(keys[i++]!), complete: () => s.complete() });
        })), (_key, call) => (call === 1 ? throwError(() => new Error('down')) : undefined), { concurrency: 200 });
        flush();
        const delays = run.events.flatMap((e) => (e.type === 'failed' ? [e.retryIn] : []));
        // The first 100 take a token each and wait their own 5 ms; then the bucket is in debt.
        expect(delays.slice(0, 100).every((d) => d === 5)).toBe(true);
        expect(delays.slice(100)).toEqual([100, 200, 300]);
        expect(run.calls.slice(-3)).toEqual(['k100@100', 'k101@200', 'k102@300']);
      });
    });

    it('refills the bucket at qps: failures spread over time all wait only their own backoff', () => {
      const scheduler = newScheduler();
      scheduler.run(({ flush }) => {
        const keys = new Subject<string>();
        const run = runReconcile(scheduler, keys, (_key, call) => (call === 1 ? throwError(() => new Error('down')) : undefined), { concurrency: 10, rateLimit: { burst: 2, qps: 10 } });
        // Two at once spend the burst; a third 100 ms later finds one token again.
        scheduler.schedule(() => (keys.next('a'), keys.next('b')), 0);
        scheduler.schedule(() => keys.next('c'), 100);
        scheduler.schedule(() => keys.next('d'), 100);
        flush();
        expect(run.events.flatMap((e) => (e.type === 'failed' ? [`${e.key} ${e.retryIn}`] : []))).toEqual(['a 5', 'b 5', 'c 5', 'd 100']);
      });
    });

    it('requeueAfter(ms) runs the key again after ms, resets its failures and skips the rate limit', () => {
      const scheduler = newScheduler();
      scheduler.run(({ hot, cold, flush }) => {
        const run = runReconcile(scheduler, hot('-a'), (_key, call, { failures }) => {
          if (call === 1) return cold('#', {}, new Error('first'));
          if (call === 2) return cold('--(r|)', { r: requeueAfter(50) });
          expect(failures).toBe(0);
          return undefined;
        });
        flush();
        expect(run.calls).toEqual(['a@1', 'a@6', 'a@58']);
        expect(run.outcomes()).toEqual(['failed a #1 retry in 5', 'reconciled a requeue 50', 'reconciled a']);
      });
    });

    it('tells the reconcile how often its key failed so far', () => {
      const scheduler = newScheduler();
      scheduler.run(({ hot, flush }) => {
        const seen: number[] = [];
        runReconcile(scheduler, hot('a'), (_key, call, { failures }) => {
          seen.push(failures);
          if (call < 3) throw new Error('not yet');
        });
        flush();
        expect(seen).toEqual([0, 1, 2]);
      });
    });

    it('treats a synchronous throw, an error and a bad requeueAfter as failures, and a plain value as done', () => {
      const scheduler = newScheduler();
      scheduler.run(({ cold, flush }) => {
        const run = runReconcile(
          scheduler,
          cold('(wxyz)'),
          (key, call) => {
            if (call > 1) return undefined;
            if (key === 'w') throw new TypeError('sync');
            if (key === 'x') return throwError(() => new Error('async'));
            if (key === 'y') return { requeueAfter: -1 };
            return 'whatever' as unknown as ReconcileOutcome;
          },
          { concurrency: 4 },
        );
        flush();
        const failures = run.events.flatMap((e) => (e.type === 'failed' ? [[e.key, (e.error as Error).constructor.name]] : []));
        expect(failures).toEqual([
          ['w', 'TypeError'],
          ['x', 'Error'],
          ['y', 'RangeError'],
        ]);
        expect(run.outcomes().filter((o) => o.startsWith('reconciled'))).toEqual(['reconciled z', 'reconciled w', 'reconciled x', 'reconciled y']);
      });
    });

    it('uses the last value of an Observable reconcile, and done for an empty one', () => {
      const scheduler = newScheduler();
      scheduler.run(({ cold, flush }) => {
        const run = runReconcile(scheduler, cold('(ab)'), (key, call) =>
          call > 1 ? undefined : key === 'a' ? cold('-x-(y|)', { x: requeueAfter(1), y: requeueAfter(30) }) : cold('--|'),
        );
        flush();
        expect(run.outcomes()).toEqual(['reconciled a requeue 30', 'reconciled b', 'reconciled a']);
        expect(run.calls).toEqual(['a@0', 'b@3', 'a@33']);
      });
    });
  });

  describe('with Promises', () => {
    it('awaits a Promise reconcile: a resolution is done, a rejection is retried', async () => {
      const scheduler = new TestScheduler(() => undefined);
      const keys = new Subject<string>();
      const pending: { resolve: (outcome: ReconcileOutcome) => void; reject: (error: unknown) => void }[] = [];
      const events: string[] = [];
      const subscription = keys
        .pipe(reconcile(() => new Promise<ReconcileOutcome>((resolve, reject) => pending.push({ resolve, reject })), { scheduler }))
        .subscribe((e) => (e.type === 'queue' ? undefined : events.push(`${e.type} ${e.key} t=${scheduler.now()}`)));
      keys.next('a');
      pending[0]!.reject(new Error('down'));
      await flushMicrotasks();
      expect(events).toEqual(['failed a t=0']);
      scheduler.flush();
      expect(scheduler.now()).toBe(5);
      expect(pending).toHaveLength(2);
      pending[1]!.resolve(undefined);
      await flushMicrotasks();
      expect(events).toEqual(['failed a t=0', 'reconciled a t=5']);
      subscription.unsubscribe();
    });
  });

  describe('stopping and completing', () => {
    it('on unsubscribe drops queued keys and pending retries, and lets running reconciles finish within grace', () => {
      const scheduler = newScheduler();
      scheduler.run(({ hot, flush }) => {
        const finalized: string[] = [];
        const signals: AbortSignal[] = [];
        const run = runReconcile(
          scheduler,
          hot('-(ab)c--(de)'),
          (key, _call, context) => {
            if (key === 'c') return throwError(() => new Error('retry at 10'));
            signals.push(context.signal);
            return new Observable<ReconcileOutcome>((subscriber) => {
              const timer = scheduler.schedule(() => subscriber.complete(), 100);
              return () => {
                timer.unsubscribe();
                finalized.push(`${key}@${scheduler.now()}`);
              };
            });
          },
          { concurrency: 3, grace: 50 },
        );
        // a and b run from 1; c fails at 5 (retry due at 10); d takes the free worker at 8, e waits.
        scheduler.schedule(() => run.subscription.unsubscribe(), 9);
        flush();
        expect(run.calls).toEqual(['a@1', 'b@1', 'c@5', 'd@8']);
        expect(finalized).toEqual(['a@59', 'b@59', 'd@59']);
        expect(signals.map((signal) => signal.aborted)).toEqual([true, true, true]);
      });
    });

    it('lets a reconcile that finishes within grace end on its own, its signal never aborted', () => {
      const scheduler = newScheduler();
      scheduler.run(({ hot, cold, flush }) => {
        let signal: AbortSignal | undefined;
        let completed = false;
        const run = runReconcile(scheduler, hot('-a'), (_key, _call, context) => {
          signal = context.signal;
          return cold('----------|').pipe((source) => new Observable<ReconcileOutcome>((s) => source.subscribe({ complete: () => ((completed = true), s.complete()) })));
        });
        scheduler.schedule(() => run.subscription.unsubscribe(), 5);
        flush();
        expect(completed).toBe(true);
        expect(signal?.aborted).toBe(false);
      });
    });

    it('ignores what a reconcile returns after the subscription ended, and clears the grace timer when all have finished', () => {
      const scheduler = newScheduler();
      scheduler.run(({ hot, cold, flush }) => {
        const signals: AbortSignal[] = [];
        const run = runReconcile(
          scheduler,
          hot('-a'),
          (_key, _call, { signal }) => {
            signals.push(signal);
            return cold('-----#', {}, new Error('after the end'));
          },
          { grace: 1000 },
        );
        scheduler.schedule(() => run.subscription.unsubscribe(), 3);
        flush();
        expect(run.calls).toEqual(['a@1']);
        expect(run.outcomes()).toEqual([]);
        expect(signals[0]?.aborted).toBe(false);
        // The virtual clock stops where the last action ran: the grace timer did not keep it going.
        expect(scheduler.now()).toBe(6);
      });
    });

    it('with grace 0 abandons running reconciles at once', () => {
      const scheduler = newScheduler();
      scheduler.run(({ hot, flush }) => {
        let signal: AbortSignal | undefined;
        const run = runReconcile(scheduler, hot('-a'), (_key, _call, context) => ((signal = context.signal), NEVER), { grace: 0 });
        scheduler.schedule(() => run.subscription.unsubscribe(), 5);
        flush();
        expect(signal?.aborted).toBe(true);
      });
    });

    it('when the keys complete, drains the queue, the retries and the requeues, then completes', () => {
      const scheduler = newScheduler();
      scheduler.run(({ cold, flush }) => {
        const run = runReconcile(scheduler, cold('(abc|)'), (key, call) => {
          if (key === 'b' && call === 1) return throwError(() => new Error('once'));
          if (key === 'c' && call === 1) return requeueAfter(40);
          return cold('--|');
        });
        flush();
        expect(run.calls).toEqual(['a@0', 'b@2', 'c@2', 'b@7', 'c@42']);
        expect(run.completedAt()).toBe(44);
      });
    });

    it('errors when the keys error, abandoning running reconciles after grace', () => {
      const scheduler = newScheduler();
      scheduler.run(({ hot, expectObservable }) => {
        expectObservable(hot('-a--#').pipe(reconcile(() => NEVER, { scheduler }), filter((e) => e.type !== 'queue'))).toBe('----#');
      });
    });
  });

  describe('its source', () => {
    it('is unsubscribed on unsubscribe, when it completes and when it errors', () => {
      const scheduler = newScheduler();
      scheduler.run(({ hot, cold, expectObservable, expectSubscriptions }) => {
        const outcomes = filter((event: ReconcileEvent) => event.type !== 'queue');
        const left = hot('-a-b----');
        const completed = hot('-a-|');
        const failed = hot('-a-#');
        expectObservable(left.pipe(reconcile(() => NEVER, { scheduler }), outcomes), '^---!').toBe('');
        expectObservable(completed.pipe(reconcile(() => cold('-|'), { scheduler }), outcomes)).toBe('--r|', { r: { type: 'reconciled', key: 'a', duration: 1, requeueAfter: undefined } });
        expectObservable(failed.pipe(reconcile(() => NEVER, { scheduler }), outcomes)).toBe('---#');
        expectSubscriptions(left.subscriptions).toBe('^---!');
        expectSubscriptions(completed.subscriptions).toBe('^--!');
        expectSubscriptions(failed.subscriptions).toBe('^--!');
      });
    });

    it('is unsubscribed, and the output fails with the error, when the scheduler cannot schedule the queue’s work', () => {
      const broken = new Error('broken');
      const scheduler = newScheduler();
      scheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
        const keys = hot('-a-b');
        expectObservable(keys.pipe(reconcile(() => undefined, { scheduler: unschedulable(broken, () => scheduler.now()) }))).toBe('-#', undefined, broken);
        expectSubscriptions(keys.subscriptions).toBe('^!');
      });
    });
  });

  describe('the queue’s counts', () => {
    it('reports depth, in flight, waiting, failing and retries, once per turn in which they changed', () => {
      const scheduler = newScheduler();
      scheduler.run(({ hot, cold, flush }) => {
        // a, b, c at 0, one worker, 10 ms each; c fails at once the first time and retries after 5 ms.
        const run = runReconcile(scheduler, hot('(abc)'), (key, call) => (key === 'c' && call === 1 ? throwError(() => new Error('x')) : cold('----------|')));
        flush();
        const counts = run.events.flatMap((e) => (e.type === 'queue' ? [`${e.at} depth ${e.depth} in ${e.inFlight} waiting ${e.waiting} failing ${e.failing} retries ${e.retries}`] : []));
        expect(counts).toEqual([
          '0 depth 2 in 1 waiting 0 failing 0 retries 0',
          '10 depth 1 in 1 waiting 0 failing 0 retries 0',
          '20 depth 0 in 0 waiting 1 failing 1 retries 1',
          '25 depth 0 in 1 waiting 0 failing 1 retries 1',
          '35 depth 0 in 0 waiting 0 failing 0 retries 1',
        ]);
      });
    });

    it('measures the longest wait from when the key at the head of the queue entered it', () => {
      const scheduler = newScheduler();
      scheduler.run(({ hot, cold, flush }) => {
        // a runs 0–10; b queues at 2; c queues at 6, when b has waited 4 ms.
        const run = runReconcile(scheduler, hot('a-b---c'), () => cold('----------|'));
        flush();
        const waits = run.events.flatMap((e) => (e.type === 'queue' ? [`${e.at}: ${e.longestWait}`] : []));
        expect(waits).toEqual(['0: 0', '2: 0', '6: 4', '10: 4', '20: 0', '30: 0']);
      });
    });
  });

  it('behaves as its marble diagram says', () => {
    newScheduler().run(({ hot, cold, expectObservable }) => {
      const calls = new Map<string, number>();
      const fn = (key: string): Observable<ReconcileOutcome> => {
        const call = (calls.get(key) ?? 0) + 1;
        calls.set(key, call);
        if (key === 'b') return cold('-|');
        return call === 1 ? cold('---#') : cold('--|');
      };
      const output = hot('-a-a-b-------|').pipe(
        reconcile(fn, { rateLimit: { baseDelay: 4 } }),
        filter((event) => event.type !== 'queue'),
      );
      expectObservable(output.pipe((source) => new Observable<string>((s) => source.subscribe({ next: (e) => s.next(e.type === 'failed' ? 'f' : 'r'), complete: () => s.complete() })))).toBe(
        '----f-rr--r--|',
      );
    });
  });

  describe('options', () => {
    it('rejects a concurrency that is not a positive integer, a negative grace and a bad rate limit when created', () => {
      const fn = (): undefined => undefined;
      expect(() => reconcile(fn, { concurrency: 0 })).toThrow(RangeError);
      expect(() => reconcile(fn, { concurrency: 1.5 })).toThrow(RangeError);
      expect(() => reconcile(fn, { grace: -1 })).toThrow(RangeError);
      expect(() => reconcile(fn, { rateLimit: { baseDelay: -1 } })).toThrow(RangeError);
      expect(() => reconcile(fn, { rateLimit: { baseDelay: 10, maxDelay: 5 } })).toThrow(RangeError);
      expect(() => reconcile(fn, { rateLimit: { qps: 0 } })).toThrow(RangeError);
      expect(() => reconcile(fn, { rateLimit: { burst: 0 } })).toThrow(RangeError);
      expect(() => requeueAfter(-5)).toThrow(RangeError);
      expect(() => requeueAfter(Number.NaN)).toThrow(RangeError);
    });
  });
});
