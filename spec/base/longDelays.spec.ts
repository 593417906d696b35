import { NetworkError } from '../../lib/base/errors';
import { silentLogger } from '../../lib/base/logger';
import { asyncScheduler, defer, interval, NEVER, of, take, throwError, type Observable, type SchedulerAction, type SchedulerLike, type Subscription } from 'rxjs';
import { longDelays, MAX_TIMER_MS } from '../../lib/base/longDelays';
import { TestScheduler } from 'rxjs/testing';
import type { Informer } from '../../lib/informer/informer';
import { informerFrom } from '../../lib/informer/informer';
import { waitForSync } from '../../lib/informer/waitForSync';
import { resync } from '../../lib/handlers/resync';
import { backoff } from '../../lib/operators/backoff';
import { reconcile } from '../../lib/workqueue/reconcile';
import { requeueAfter } from '../../lib/workqueue/reconcileResult';
import { leaderElectionFrom } from '../../lib/leaderElection/leaderElection';
import { createClusterStore, storeLeaseClient } from '../../apiserver/src';
import { fakeListerWatcher, pod } from '../informer/informerFixtures';
import { obj, replace, snapshotsOf } from '../handlers/handleFixtures';
import { nodeTimers, NODE_TIMER_LIMIT_MS } from '../support/nodeTimers';

/**
 * Every timer in lib/ honours any delay a user or a rate limiter can ask for. Node's timers hold
 * at most 2^31 − 1 ms (about 24.8 days) and fire a longer one after 1 ms: each spec runs its
 * timer on `nodeTimers`, a virtual-time scheduler with that limit, and checks that the delay is
 * waited in full and that no timer was ever asked for more than Node holds.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Past Node's limit: a certificate's 30-day requeue, client-go's 1000 h rate-limit example. */
const THIRTY_DAYS = 30 * DAY;
const THOUSAND_HOURS = 1000 * HOUR;

/** A virtual-time scheduler whose flush() runs to the end, however far (TestScheduler stops at 750 ms outside run()). */
function newScheduler(): TestScheduler {
  const scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
  scheduler.maxFrames = Infinity;
  return scheduler;
}

/** `base`, noting the delay of every timer asked of it (rescheduled actions included). */
function counted(base: SchedulerLike): SchedulerLike & { readonly delays: number[] } {
  const delays: number[] = [];
  return {
    delays,
    now: () => base.now(),
    schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay?: number, state?: T): Subscription {
      delays.push(delay ?? 0);
      return base.schedule<T>(
        function (this: SchedulerAction<T>, current?: T) {
          const action = this;
          const view = Object.create(action) as SchedulerAction<T>;
          view.schedule = (next?: T, nextDelay?: number) => {
            delays.push(nextDelay ?? 0);
            return action.schedule(next, nextDelay);
          };
          work.call(view, current);
        },
        delay,
        state,
      );
    },
  };
}

describe('longDelays', () => {
  it('holds what Node holds in one timer: 2^31 − 1 ms', () => {
    expect(MAX_TIMER_MS).toBe(NODE_TIMER_LIMIT_MS);
  });

  it('passes a delay within one timer to the scheduler as it is', () => {
    const scheduler = newScheduler();
    const inner = counted(scheduler);
    const fired: number[] = [];
    longDelays(inner, 10).schedule(() => fired.push(scheduler.now()), 10);
    longDelays(inner, 10).schedule(() => fired.push(scheduler.now()));
    scheduler.flush();
    expect(inner.delays).toEqual([10, 0]);
    expect(fired).toEqual([0, 10]);
  });

  it('waits a longer delay as a chain of timers no longer than the chunk, ending exactly when due', () => {
    const scheduler = newScheduler();
    const inner = counted(scheduler);
    const fired: number[] = [];
    longDelays(inner, 10).schedule((state) => fired.push(scheduler.now() + (state ?? 0)), 35, 1000);
    scheduler.flush();
    expect(inner.delays).toEqual([10, 10, 10, 5]);
    expect(fired).toEqual([1035]);
  });

  it('measures what is left on the clock at each step, so a late step does not make the timer late', () => {
    const scheduler = newScheduler();
    const fired: number[] = [];
    const late: SchedulerLike = {
      now: () => scheduler.now(),
      schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay?: number, state?: T): Subscription {
        return scheduler.schedule<T>(work, (delay ?? 0) + 3, state);
      },
    };
    longDelays(late, 10).schedule(() => fired.push(scheduler.now()), 35);
    scheduler.flush();
    // Steps of 13 (10 asked, 3 late), 13, then the 9 left, asked as 9 and run 3 late: 38, as late as one timer would be.
    expect(fired).toEqual([38]);
  });

  it('cancels whichever step is pending when unsubscribed', () => {
    const scheduler = newScheduler();
    const inner = counted(scheduler);
    let fired = false;
    const timer = longDelays(inner, 10).schedule(() => (fired = true), 35);
    scheduler.schedule(() => timer.unsubscribe(), 15);
    scheduler.flush();
    expect(fired).toBe(false);
    expect(inner.delays).toEqual([10, 10]);
  });

  it('chains an action that reschedules itself, as interval() does', () => {
    const scheduler = newScheduler();
    const inner = counted(scheduler);
    const ticks: number[] = [];
    interval(25, longDelays(inner, 10))
      .pipe(take(3))
      .subscribe(() => ticks.push(scheduler.now()));
    scheduler.flush();
    expect(ticks).toEqual([25, 50, 75]);
    expect(Math.max(...inner.delays)).toBe(10);
  });

  it('is itself when asked for again, and rejects a chunk that is not > 0', () => {
    const wrapped = longDelays(asyncScheduler);
    expect(longDelays(wrapped)).toBe(wrapped);
    expect(() => longDelays(asyncScheduler, 0)).toThrow(RangeError);
  });

  describe('in real time', () => {
    it('fires a chained timer (20 ms chunks) no earlier than its 100 ms delay', async () => {
      const inner = counted(asyncScheduler);
      const started = Date.now();
      const firedAfter = await new Promise<number>((resolve) => longDelays(inner, 20).schedule(() => resolve(Date.now() - started), 100));
      // Node may fire a timer up to a millisecond early against Date.now (it keeps its own clock).
      expect(firedAfter).toBeGreaterThanOrEqual(99);
      // Chained: several timers, none longer than the chunk (how many depends on how late each ran).
      expect(inner.delays.length).toBeGreaterThanOrEqual(2);
      expect(Math.max(...inner.delays)).toBeLessThanOrEqual(20);
    });

    it('holds a delay past 2^31 − 1 ms without a TimeoutOverflowWarning and without firing early', async () => {
      const warnings: string[] = [];
      const onWarning = (warning: Error): void => void warnings.push(warning.name);
      process.on('warning', onWarning);
      let fired = false;
      const timer = longDelays(asyncScheduler).schedule(() => (fired = true), THIRTY_DAYS);
      try {
        // A plain setTimeout of this length fires after 1 ms and warns on the next tick.
        await new Promise((resolve) => setTimeout(resolve, 50));
        expect(fired).toBe(false);
        expect(warnings).toEqual([]);
      } finally {
        timer.unsubscribe();
        process.off('warning', onWarning);
      }
    });
  });
});

describe('delays past 2^31 − 1 ms', () => {
  it('are past what Node holds (the premise of this file)', () => {
    expect(THIRTY_DAYS).toBeGreaterThan(NODE_TIMER_LIMIT_MS);
    expect(THOUSAND_HOURS).toBeGreaterThan(NODE_TIMER_LIMIT_MS);
  });

  describe('in the work queue', () => {
    it('runs a key again requeueAfter(30 days) after it asked, not at once', () => {
      const scheduler = newScheduler();
      const node = nodeTimers(scheduler);
      const calls: number[] = [];
      scheduler.run(({ hot, flush }) => {
        hot('a')
          .pipe(
            reconcile(
              () => {
                calls.push(scheduler.now());
                return calls.length === 1 ? requeueAfter(THIRTY_DAYS) : undefined;
              },
              { scheduler: node },
            ),
          )
          .subscribe();
        flush();
      });
      expect(calls).toEqual([0, THIRTY_DAYS]);
      expect(node.overflowed).toEqual([]);
    });

    it('retries a failing key after a rate limit capped at 1000 h, not in a loop', () => {
      const scheduler = newScheduler();
      const node = nodeTimers(scheduler);
      const calls: number[] = [];
      scheduler.run(({ hot, flush }) => {
        hot('a')
          .pipe(
            reconcile(
              () => {
                calls.push(scheduler.now());
                if (calls.length < 3) throw new Error('not yet');
              },
              { scheduler: node, rateLimit: { baseDelay: THOUSAND_HOURS, maxDelay: THOUSAND_HOURS, qps: Infinity } },
            ),
          )
          .subscribe();
        flush();
      });
      expect(calls).toEqual([0, THOUSAND_HOURS, 2 * THOUSAND_HOURS]);
      expect(node.overflowed).toEqual([]);
    });

    it('lets a running reconcile finish within a grace of 30 days before its signal aborts', () => {
      const scheduler = newScheduler();
      const node = nodeTimers(scheduler);
      let abortedAt: number | undefined;
      scheduler.run(({ hot, flush }) => {
        const subscription = hot('a')
          .pipe(
            reconcile(
              (_key, { signal }) => {
                signal.addEventListener('abort', () => (abortedAt = scheduler.now()));
                return NEVER;
              },
              { scheduler: node, grace: THIRTY_DAYS },
            ),
          )
          .subscribe();
        scheduler.schedule(() => subscription.unsubscribe(), 1);
        flush();
      });
      expect(abortedAt).toBe(1 + THIRTY_DAYS);
      expect(node.overflowed).toEqual([]);
    });
  });

  it('resyncs every 30 days when asked to, not every millisecond', () => {
    const scheduler = newScheduler();
    const node = nodeTimers(scheduler);
    const ticks: string[] = [];
    const [synced] = snapshotsOf([replace([obj('a', '1')])]);
    scheduler.run(({ hot, flush }) => {
      const subscription: Subscription = hot('s', { s: synced! })
        .pipe(resync({ period: THIRTY_DAYS, scheduler: node }))
        .subscribe((tick) => {
          ticks.push(`${tick.type}@${scheduler.now() / DAY}d`);
          if (ticks.length === 3) subscription.unsubscribe();
        });
      flush();
    });
    expect(ticks).toEqual(['snapshot@0d', 'resync@30d', 'resync@60d']);
    expect(node.overflowed).toEqual([]);
  });

  it('waits a backoff() capped at 30 days in full between attempts', () => {
    const scheduler = newScheduler();
    const node = nodeTimers(scheduler);
    const attempts: number[] = [];
    scheduler.run(({ flush }) => {
      const source: Observable<string> = defer(() => {
        attempts.push(scheduler.now());
        return attempts.length < 3 ? throwError(() => new Error('down')) : of('up');
      });
      source.pipe(backoff({ initialMs: THIRTY_DAYS, maxMs: THIRTY_DAYS, jitter: 'none', scheduler: node })).subscribe();
      flush();
    });
    expect(attempts).toEqual([0, THIRTY_DAYS, 2 * THIRTY_DAYS]);
    expect(node.overflowed).toEqual([]);
  });

  describe('in an informer', () => {
    it('waits a reflector backoff capped at 30 days in full before listing again', () => {
      const scheduler = newScheduler();
      const node = nodeTimers(scheduler);
      const lw = fakeListerWatcher([pod('a', '1')]);
      lw.listError = new NetworkError('connect ECONNREFUSED', 'ECONNREFUSED');
      const lists: number[] = [];
      const list = lw.list.bind(lw);
      lw.list = (options) => {
        lists.push(scheduler.now());
        if (lists.length === 3) lw.listError = undefined;
        return list(options);
      };
      scheduler.run(({ flush }) => {
        const informer = informerFrom(lw, { scheduler: node, backoff: { initialMs: THIRTY_DAYS, maxMs: THIRTY_DAYS, jitter: 'none' }, logger: silentLogger });
        const subscription = informer.synced$.subscribe(() => subscription.unsubscribe());
        flush();
      });
      expect(lists).toEqual([0, THIRTY_DAYS, 2 * THIRTY_DAYS]);
      expect(node.overflowed).toEqual([]);
    });

    it('keeps its cache for a gracePeriodMs of 30 days after the last subscriber leaves', () => {
      const scheduler = newScheduler();
      const node = nodeTimers(scheduler);
      const lw = fakeListerWatcher([pod('a', '1')]);
      const open: string[] = [];
      scheduler.run(({ flush }) => {
        // Watches of 23 days: the spec runs a month of virtual time without a re-watch every few minutes.
        const informer = informerFrom(lw, { scheduler: node, gracePeriodMs: THIRTY_DAYS, watchTimeoutSeconds: { min: 2_000_000, max: 2_000_000 }, logger: silentLogger });
        informer.informer$.subscribe().unsubscribe();
        scheduler.schedule(() => open.push(`1d: ${lw.openWatches()}`), DAY);
        scheduler.schedule(() => open.push(`29d: ${lw.openWatches()}`), 29 * DAY);
        scheduler.schedule(() => open.push(`31d: ${lw.openWatches()}`), 31 * DAY);
        flush();
      });
      expect(open).toEqual(['1d: 1', '29d: 1', '31d: 0']);
      expect(node.overflowed).toEqual([]);
    });

    it('gives waitForSync a timeout of 30 days in full', async () => {
      const scheduler = newScheduler();
      const node = nodeTimers(scheduler);
      const stuck = { name: 'stuck', health$: NEVER, synced$: NEVER } as unknown as Informer;
      let settledAt: number | undefined;
      const waiting = waitForSync([stuck], { timeout: THIRTY_DAYS, scheduler: node }).catch(() => (settledAt = scheduler.now()));
      scheduler.flush();
      await waiting;
      expect(settledAt).toBe(THIRTY_DAYS);
      expect(node.overflowed).toEqual([]);
    });
  });

  it('renews a Lease every retryPeriod of 30 days in leader election, not in a loop', () => {
    const scheduler = newScheduler();
    const node = nodeTimers(scheduler);
    const requests: string[] = [];
    let election: Subscription | undefined;
    const client = storeLeaseClient(createClusterStore(), {
      scheduler,
      fault: (request) => {
        requests.push(`${request.verb}@${scheduler.now() / DAY}d`);
        if (requests.length === 4) scheduler.schedule(() => election?.unsubscribe());
        return undefined;
      },
    });
    election = leaderElectionFrom(client, {
      namespace: 'default',
      name: 'controller',
      identity: 'a',
      leaseDuration: 80 * DAY,
      renewDeadline: 40 * DAY,
      retryPeriod: THIRTY_DAYS,
      releaseOnUnsubscribe: false,
      scheduler: node,
      logger: silentLogger,
    }).subscribe();
    scheduler.flush();
    expect(requests).toEqual(['get@0d', 'create@0d', 'update@30d', 'update@60d']);
    expect(node.overflowed).toEqual([]);
  });
});
