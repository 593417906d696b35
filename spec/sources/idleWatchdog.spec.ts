import { Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { idleWatchdog } from '../../lib/sources/idleWatchdog';

/** Emits the virtual time at which the watchdog fired; `activity$` values touch it. */
function firings(scheduler: TestScheduler, activity$: Observable<unknown>, idleMs: number): Observable<number> {
  return new Observable<number>((subscriber) => {
    const watchdog = idleWatchdog(scheduler, idleMs, () => {
      subscriber.next(scheduler.now());
      subscriber.complete();
    });
    const activity = activity$.subscribe(() => watchdog.touch());
    return () => {
      activity.unsubscribe();
      watchdog.stop();
    };
  });
}

describe('idleWatchdog', () => {
  let scheduler: TestScheduler;
  beforeEach(() => {
    scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
  });

  it('fires once when nothing happens for the idle time', () => {
    scheduler.run(({ cold, expectObservable }) => {
      expectObservable(firings(scheduler, cold('-'), 100)).toBe('100ms (t|)', { t: 100 });
    });
  });

  it('counts the idle time from the last activity', () => {
    scheduler.run(({ cold, expectObservable }) => {
      const activity = cold('60ms a 59ms b');
      expectObservable(firings(scheduler, activity, 100)).toBe('220ms (t|)', { t: 220 });
    });
  });

  it('never fires while activity keeps coming, and fires after it stops', () => {
    const fired: number[] = [];
    scheduler.run(() => {
      const watchdog = idleWatchdog(scheduler, 100, () => fired.push(scheduler.now()));
      for (let at = 50; at <= 300; at += 50) scheduler.schedule(() => watchdog.touch(), at);
    });
    expect(fired).toEqual([400]);
  });

  it('never fires once stopped', () => {
    const fired: number[] = [];
    scheduler.run(() => {
      const watchdog = idleWatchdog(scheduler, 100, () => fired.push(scheduler.now()));
      scheduler.schedule(() => watchdog.stop(), 50);
    });
    expect(fired).toEqual([]);
  });
});
