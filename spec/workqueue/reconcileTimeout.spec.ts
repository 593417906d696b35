import { silentLogger } from '../../lib/base/logger';
import { NEVER, Observable, Subject } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { Registry } from 'prom-client';
import { reconcile, type ReconcileContext, type ReconcileEvent, type ReconcileOptions } from '../../lib/workqueue/reconcile';
import type { ReconcileOutcome } from '../../lib/workqueue/reconcileResult';
import type { WorkqueueMetricEvent } from '../../lib/workqueue/workqueueMetrics';
import { registerWorkqueueMetrics } from '../../lib/prometheus/workqueueMetrics';
import { flushMicrotasks } from '../handlers/handleFixtures';

/**
 * reconcile()'s `timeout`: a reconcile that runs past it has its signal aborted (a
 * `TimeoutError`, as `AbortSignal.timeout()` gives), counts as a failure retried with backoff,
 * frees its worker for other keys, and is measured. Virtual time: one frame is one millisecond.
 */

function newScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

type Behaviour = (key: string, call: number, context: ReconcileContext) => Observable<ReconcileOutcome> | ReconcileOutcome | PromiseLike<ReconcileOutcome>;

/** Runs `keys` through reconcile on `scheduler`, logging calls as `key@time` and outcomes. */
function run(scheduler: TestScheduler, keys: Observable<string>, behaviour: Behaviour, options: ReconcileOptions) {
  const calls: string[] = [];
  const outcomes: string[] = [];
  const events: ReconcileEvent[] = [];
  const perKey = new Map<string, number>();
  const subscription = keys
    .pipe(
      reconcile(
        (key, context) => {
          const call = (perKey.get(key) ?? 0) + 1;
          perKey.set(key, call);
          calls.push(`${key}@${scheduler.now()}`);
          return behaviour(key, call, context);
        },
        // Timeouts are logged at warn; these specs read them from the events.
        { scheduler, logger: silentLogger, ...options },
      ),
    )
    .subscribe((event) => {
      events.push(event);
      if (event.type === 'failed') outcomes.push(`failed ${event.key}@${scheduler.now()} (${(event.error as Error).name}) retry in ${event.retryIn}`);
      if (event.type === 'reconciled') outcomes.push(`reconciled ${event.key}@${scheduler.now()}`);
    });
  return { calls, outcomes, events, subscription };
}

describe('reconcile with a timeout', () => {
  it('aborts a reconcile past its timeout, retries the key with backoff, and hands the worker to the next key', () => {
    const scheduler = newScheduler();
    scheduler.run(({ hot, cold, flush }) => {
      const signals: AbortSignal[] = [];
      const ended: string[] = [];
      // One worker. a hangs the first time; b waits behind it; a's retry (5 ms later) succeeds.
      const queue = run(
        scheduler,
        hot('(ab)'),
        (key, call, { signal }) => {
          if (key !== 'a' || call > 1) return cold('-|');
          signals.push(signal);
          return new Observable<ReconcileOutcome>(() => () => ended.push(`a unsubscribed@${scheduler.now()}`));
        },
        { timeout: 10, rateLimit: { baseDelay: 5 } },
      );
      flush();
      expect(queue.calls).toEqual(['a@0', 'b@10', 'a@15']);
      expect(queue.outcomes).toEqual(['failed a@10 (TimeoutError) retry in 5', 'reconciled b@11', 'reconciled a@16']);
      expect(ended).toEqual(['a unsubscribed@10']);
      expect(signals[0]!.aborted).toBe(true);
      expect((signals[0]!.reason as Error).name).toBe('TimeoutError');
      expect(queue.events.find((e) => e.type === 'failed')).toMatchObject({ error: signals[0]!.reason, failures: 1 });
    });
  });

  it('does not touch a reconcile that ends within its timeout', () => {
    const scheduler = newScheduler();
    scheduler.run(({ hot, cold, flush }) => {
      const signals: AbortSignal[] = [];
      const queue = run(scheduler, hot('a'), (_key, _call, { signal }) => (signals.push(signal), cold('---------|')), { timeout: 10 });
      flush();
      expect(queue.outcomes).toEqual(['reconciled a@9']);
      expect(signals[0]!.aborted).toBe(false);
      // No timer is left behind: the clock stopped where the reconcile ended.
      expect(scheduler.now()).toBe(9);
    });
  });

  it('leaves no timeout timer behind when unsubscribed', () => {
    const scheduler = newScheduler();
    scheduler.run(({ hot, flush }) => {
      const queue = run(scheduler, hot('a'), () => NEVER, { timeout: 1000, grace: 0 });
      scheduler.schedule(() => queue.subscription.unsubscribe(), 2);
      flush();
      // The virtual clock stops where the last action ran: no timer was left for 1000.
      expect(scheduler.now()).toBe(2);
      expect(queue.outcomes).toEqual([]);
    });
  });

  it('backs a key that keeps timing out off as any failure: 5, 10, 20 ms', () => {
    const scheduler = newScheduler();
    scheduler.run(({ hot, flush }) => {
      const queue = run(scheduler, hot('a'), () => NEVER, { timeout: 10 });
      scheduler.schedule(() => queue.subscription.unsubscribe(), 100);
      flush();
      // 0–10 times out, retry at 15; 15–25, retry at 35; 35–45, retry at 65; 65–75, retry at 115 (stopped first).
      expect(queue.calls).toEqual(['a@0', 'a@15', 'a@35', 'a@65']);
    });
  });

  it('keeps the key of a Promise that ignores its signal until it settles: the retry waits for it, other keys go on', async () => {
    const scheduler = new TestScheduler(() => undefined);
    const keys = new Subject<string>();
    const pending = new Map<string, (outcome: ReconcileOutcome) => void>();
    const queue = run(
      scheduler,
      keys,
      (key, call) =>
        key === 'a' && call === 1
          ? new Promise<ReconcileOutcome>((resolve) => pending.set('a', resolve)) // deaf to its signal
          : undefined,
      { timeout: 10, rateLimit: { baseDelay: 5 } },
    );
    keys.next('a');
    keys.next('b');
    scheduler.flush(); // 10: a times out, b takes the worker; 15: a's retry is due, but a still runs
    await flushMicrotasks();
    expect(queue.calls).toEqual(['a@0', 'b@10']);
    expect(queue.outcomes).toEqual(['failed a@10 (TimeoutError) retry in 5', 'reconciled b@10']);
    const stats = queue.events.filter((e) => e.type === 'queue').at(-1);
    expect(stats).toMatchObject({ inFlight: 1, depth: 1, waiting: 0 });
    pending.get('a')!(undefined); // what it returns now is ignored; its key is free
    await flushMicrotasks();
    expect(queue.calls).toEqual(['a@0', 'b@10', 'a@15']);
    expect(queue.outcomes).toEqual(['failed a@10 (TimeoutError) retry in 5', 'reconciled b@10', 'reconciled a@15']);
    queue.subscription.unsubscribe();
  });

  it('measures a timed-out reconcile as finished, timedOut, and counts it in Prometheus', async () => {
    const scheduler = newScheduler();
    const measured: WorkqueueMetricEvent[] = [];
    const registry = new Registry();
    const recorder = registerWorkqueueMetrics(registry, { name: 'mirror', now: () => scheduler.now() });
    scheduler.run(({ hot, cold, flush }) => {
      run(scheduler, hot('a'), (_key, call) => (call === 1 ? NEVER : cold('-|')), {
        timeout: 10,
        metrics: (event) => {
          measured.push(event);
          recorder(event);
        },
      });
      flush();
    });
    expect(measured.filter((e) => e.type === 'finished')).toEqual([
      { type: 'finished', key: 'a', seconds: 0.01, outcome: 'timedOut', at: 10 },
      { type: 'finished', key: 'a', seconds: 0.001, outcome: 'reconciled', at: 16 },
    ]);
    const text = await registry.metrics();
    expect(text).toContain('controller_runtime_reconcile_timeouts_total{controller="mirror"} 1');
    expect(text).toContain('workqueue_retries_total{name="mirror"} 1');
    recorder.unregister();
    expect(await registry.metrics()).not.toContain('controller_runtime_reconcile_timeouts_total{');
  });

  it('rejects a timeout that is not a number of ms > 0 when created', () => {
    const fn = (): undefined => undefined;
    expect(() => reconcile(fn, { timeout: 0 })).toThrow(RangeError);
    expect(() => reconcile(fn, { timeout: -1 })).toThrow(RangeError);
    expect(() => reconcile(fn, { timeout: Number.NaN })).toThrow(RangeError);
    expect(() => reconcile(fn, { timeout: Infinity })).not.toThrow();
  });
});
