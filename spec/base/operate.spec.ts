import { type Observable, type OperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { operate, operatorObserver, type OperatorHandlers } from '../../lib/base/operate';

/**
 * operate() and operatorObserver(), the one way lib/ writes an operator by hand: whatever the
 * operator's own code throws reaches its subscriber's `error`, the source's error is passed on,
 * and the teardown it returns runs however the subscription ends, unsubscribing the source.
 */

function newScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

const boom = new Error('boom');

/** Passes values through `handlers` (whose defaults are the helper's); notes each teardown. */
function through<T>(handlers: Partial<OperatorHandlers<T>>, teardowns: string[] = []): OperatorFunction<T, T> {
  return operate<T, T>((source, subscriber) => {
    const upstream = source.subscribe(operatorObserver<T>(subscriber, { next: (value) => subscriber.next(value), ...handlers }));
    return () => {
      teardowns.push('teardown');
      upstream.unsubscribe();
    };
  });
}

/** Emits each value `delay` frames after it came, with one timer per value, all cancelled by the teardown. */
function delayEach<T>(delay: number, scheduler: SchedulerLike, fired: T[] = []): OperatorFunction<T, T> {
  return operate<T, T>((source, subscriber) => {
    const timers = new Set<Subscription>();
    const upstream = source.subscribe(
      operatorObserver<T>(subscriber, {
        next: (value) => {
          const timer = scheduler.schedule(() => {
            timers.delete(timer);
            fired.push(value);
            subscriber.next(value);
          }, delay);
          timers.add(timer);
        },
        complete: () => {
          if (timers.size === 0) subscriber.complete();
          else scheduler.schedule(() => subscriber.complete(), delay);
        },
      }),
    );
    return () => {
      upstream.unsubscribe();
      for (const timer of timers) timer.unsubscribe();
    };
  });
}

describe('operate and operatorObserver', () => {
  it('pass values and completion on, and unsubscribe the source when it completes', () => {
    const teardowns: string[] = [];
    newScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('-a-b-|');
      expectObservable(source.pipe(through({}, teardowns))).toBe('-a-b-|');
      expectSubscriptions(source.subscriptions).toBe('^----!');
    });
    expect(teardowns).toEqual(['teardown']);
  });

  it("pass the source's error on by default, and run the teardown", () => {
    const teardowns: string[] = [];
    newScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('-a-#', undefined, boom);
      expectObservable(source.pipe(through({}, teardowns))).toBe('-a-#', undefined, boom);
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
    expect(teardowns).toEqual(['teardown']);
  });

  it('run the teardown on unsubscribe: the source is unsubscribed and pending timers are cancelled', () => {
    const scheduler = newScheduler();
    const fired: string[] = [];
    scheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('-a-b----c');
      expectObservable(source.pipe(delayEach(3, scheduler, fired)), '^----!').toBe('----a');
      expectSubscriptions(source.subscriptions).toBe('^----!');
    });
    // b's timer (due at 6) never ran.
    expect(fired).toEqual(['a']);
  });

  it('turn a throw in next into the error of the subscriber, and unsubscribe the source then', () => {
    const teardowns: string[] = [];
    newScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('-a-b-c');
      const failing = through<string>(
        {
          next: (value) => {
            if (value === 'b') throw boom;
          },
        },
        teardowns,
      );
      expectObservable(source.pipe(failing)).toBe('---#', undefined, boom);
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
    expect(teardowns).toEqual(['teardown']);
  });

  it('turn a throw in complete into the error of the subscriber', () => {
    newScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('-a-|');
      const failing = through<string>({
        complete: () => {
          throw boom;
        },
      });
      expectObservable(source.pipe(failing)).toBe('-a-#', undefined, boom);
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('let an error handler handle the error, and turn what it throws into the error of the subscriber', () => {
    const other = new Error('other');
    newScheduler().run(({ hot, expectObservable }) => {
      const recovering = through<string>({ error: () => undefined });
      expectObservable(hot('-a-#', undefined, boom).pipe(recovering)).toBe('-a--');
      const rethrowing = through<string>({
        error: () => {
          throw other;
        },
      });
      expectObservable(hot('-a-#', undefined, boom).pipe(rethrowing)).toBe('-a-#', undefined, other);
    });
  });

  it('turn a throw while setting the operator up into the error of the subscriber, before any subscription to the source', () => {
    newScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('-a-|');
      const broken = operate<string, string>((_source: Observable<string>) => {
        throw boom;
      });
      expectObservable(source.pipe(broken)).toBe('#', undefined, boom);
      expectSubscriptions(source.subscriptions).toBe([]);
    });
  });

  it('keep each subscription apart: the operator is cold', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-b|');
      const piped = source.pipe(through({}));
      expectObservable(piped).toBe('-a-b|');
      expectObservable(piped, '--^').toBe('---a-b|');
      expectSubscriptions(source.subscriptions).toBe(['^---!', '--^---!']);
    });
  });
});
