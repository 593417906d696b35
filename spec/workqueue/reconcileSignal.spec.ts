import { NEVER, Observable, Subject, VirtualAction, VirtualTimeScheduler, finalize } from 'rxjs';
import { reconcile, type ReconcileEvent } from '../../lib/workqueue/reconcile';
import { virtualTask } from '../support/virtualTask';
import { runTo } from '../support/virtualClock';

/**
 * reconcile()'s `signal`: a graceful stop. When it aborts, nothing new starts, running reconciles
 * are told (their own signals abort) and awaited, and the output completes once the last has
 * settled, so whoever waits for that completion (whileLeader) knows no reconcile runs any more.
 * Virtual time, in ms.
 */

function setUp() {
  const time = new VirtualTimeScheduler(VirtualAction, Infinity);
  const keys = new Subject<string>();
  const stop = new AbortController();
  const log: string[] = [];
  let completedAt: number | undefined;
  const events: ReconcileEvent[] = [];
  const runFor = (ms: number): void => runTo(time, time.now() + ms);
  return { time, keys, stop, log, events, runFor, completedAt: () => completedAt, done: (at: number) => (completedAt = at) };
}

describe('reconcile with a signal', () => {
  it('when it aborts: queued keys are dropped, running reconciles see their signal abort, and the output completes once the last has settled', () => {
    const { time, keys, stop, log, events, runFor, completedAt, done } = setUp();
    keys
      .pipe(
        reconcile(
          (key, { signal }) => {
            log.push(`${time.now()} start ${key}`);
            signal.addEventListener('abort', () => log.push(`${time.now()} ${key} told to stop`));
            // a stops 300 ms after it is told to; b 50 ms after.
            return virtualTask(time, { duration: 10_000, signal, abortLatency: key === 'a' ? 300 : 50, onEnd: (how) => log.push(`${time.now()} ${key} ${how}`) });
          },
          { concurrency: 2, scheduler: time, signal: stop.signal },
        ),
      )
      .subscribe({ next: (event) => events.push(event), complete: () => done(time.now()) });
    keys.next('a');
    keys.next('b');
    keys.next('c'); // queued: two workers
    runFor(1_000);
    stop.abort();
    keys.next('d'); // after the stop: never taken
    runFor(20_000);
    expect(log).toEqual(['0 start a', '0 start b', '1000 a told to stop', '1000 b told to stop', '1050 b aborted', '1300 a aborted']);
    expect(completedAt()).toBe(1_300);
    // What settled after the stop is not reported as reconciled or failed.
    expect(events.filter((event) => event.type !== 'queue')).toEqual([]);
  });

  it('unsubscribes a running Observable reconcile at once (it has settled), and completes when nothing else runs', () => {
    const { time, keys, stop, log, runFor, completedAt, done } = setUp();
    keys
      .pipe(
        reconcile(() => NEVER.pipe(finalize(() => log.push(`${time.now()} unsubscribed`))), { scheduler: time, signal: stop.signal }),
      )
      .subscribe({ complete: () => done(time.now()) });
    keys.next('a');
    runFor(500);
    stop.abort();
    expect(log).toEqual(['500 unsubscribed']);
    expect(completedAt()).toBe(500);
  });

  it('drops pending retries and requeues: no timer of the queue is left once it has completed', () => {
    const { time, keys, stop, runFor, completedAt, done } = setUp();
    let calls = 0;
    keys
      .pipe(
        reconcile(
          (key) => {
            calls += 1;
            if (key === 'fails') throw new Error('fails');
            return new Observable<undefined>((subscriber) => subscriber.complete());
          },
          { scheduler: time, signal: stop.signal, rateLimit: { baseDelay: 5_000 } },
        ),
      )
      .subscribe({ complete: () => done(time.now()) });
    keys.next('fails');
    runFor(1_000);
    expect(calls).toBe(1);
    stop.abort();
    expect(completedAt()).toBe(1_000);
    expect(time.actions).toEqual([]);
    runFor(60_000);
    expect(calls).toBe(1);
  });

  it('completes at once, taking no key, when the signal has aborted already', () => {
    const { time, keys, stop, runFor, completedAt, done } = setUp();
    stop.abort();
    let calls = 0;
    keys.pipe(reconcile(() => void (calls += 1), { scheduler: time, signal: stop.signal })).subscribe({ complete: () => done(time.now()) });
    keys.next('a');
    runFor(1_000);
    expect(calls).toBe(0);
    expect(completedAt()).toBe(0);
  });

  it('lets go of the signal when unsubscribed', () => {
    const { time, keys, stop, runFor } = setUp();
    const added = jest.spyOn(stop.signal, 'addEventListener');
    const removed = jest.spyOn(stop.signal, 'removeEventListener');
    const subscription = keys.pipe(reconcile(() => undefined, { scheduler: time, signal: stop.signal })).subscribe();
    runFor(10);
    expect(added).toHaveBeenCalledTimes(1);
    expect(removed).not.toHaveBeenCalled();
    subscription.unsubscribe();
    expect(removed).toHaveBeenCalledWith('abort', added.mock.calls[0]![1]);
  });
});
