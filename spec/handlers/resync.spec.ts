import type { SchedulerAction, SchedulerLike } from 'rxjs';
import { resync, type ResyncTick } from '../../lib/handlers/resync';
import { settledSnapshot } from '../../lib/store/indexedSnapshot';
import { newTestScheduler, obj, replace, snapshotsOf, unschedulable } from './handleFixtures';

const [unsyncedSnapshot] = snapshotsOf([{ type: 'Added', object: obj('x', '1') }]);
const [first, second] = snapshotsOf([replace([obj('a', '1')]), { type: 'Updated', object: obj('a', '2') }]);
const ticks = {
  u: { type: 'snapshot', snapshot: unsyncedSnapshot },
  a: { type: 'snapshot', snapshot: first },
  b: { type: 'snapshot', snapshot: second },
  // A resync re-reads the state it last saw, without the changes that produced it (delivered already).
  A: { type: 'resync', snapshot: settledSnapshot(first!) },
  B: { type: 'resync', snapshot: settledSnapshot(second!) },
} satisfies Record<string, ResyncTick>;

describe('resync', () => {
  it('re-delivers the state it last saw without its changes, and passes snapshots through as they are', () => {
    expect(first!.changes).toHaveLength(1);
    const resynced = settledSnapshot(first!);
    expect({ changes: resynced.changes, keys: [...resynced.keys()], resourceVersion: resynced.resourceVersion, synced: resynced.synced }).toEqual({ changes: [], keys: [...first!.keys()], resourceVersion: first!.resourceVersion, synced: true });
  });

  it('passes every snapshot through and re-delivers the latest one each period once synced', () => {
    newTestScheduler().run(({ hot, expectObservable }) => {
      const source = hot('u 999ms a 1499ms b', { u: unsyncedSnapshot, a: first, b: second });
      expectObservable(source.pipe(resync({ period: 1000 })), '^ 3500ms !').toBe('u 999ms a 999ms A 499ms b 499ms B', ticks);
    });
  });

  it('never resyncs with period 0 (the default)', () => {
    newTestScheduler().run(({ hot, expectObservable }) => {
      expectObservable(hot('a', { a: first }).pipe(resync()), '^ 5s !').toBe('a', ticks);
    });
  });

  it('raises periods below one second to one second', () => {
    newTestScheduler().run(({ hot, expectObservable }) => {
      expectObservable(hot('a', { a: first }).pipe(resync({ period: 1 })), '^ 1500ms !').toBe('a 999ms A', ticks);
    });
  });

  it('stops its timer when the source completes or errors', () => {
    newTestScheduler().run(({ hot, expectObservable }) => {
      expectObservable(hot('a 1500ms |', { a: first }).pipe(resync({ period: 1000 }))).toBe('a 999ms A 500ms |', ticks);
      expectObservable(hot('a 1500ms #', { a: first }).pipe(resync({ period: 1000 }))).toBe('a 999ms A 500ms #', ticks);
    });
  });

  it('unsubscribes its source, and stops its timer, when the subscriber leaves', () => {
    const scheduler = newTestScheduler();
    let timerRuns = 0;
    // The virtual scheduler, counting each run of the work scheduled on it.
    const counting: SchedulerLike = {
      now: () => scheduler.now(),
      schedule: (work, delay, state) =>
        scheduler.schedule(function (this: SchedulerAction<unknown>, value) {
          timerRuns++;
          work.call(this as never, value as never);
        }, delay, state),
    };
    scheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      scheduler.maxFrames = 10_000; // a leaked timer would otherwise run forever
      const source = hot('a', { a: first });
      expectObservable(source.pipe(resync({ period: 1000, scheduler: counting })), '^ 1500ms !').toBe('a 999ms A', ticks);
      expectSubscriptions(source.subscriptions).toBe('^ 1500ms !');
    });
    expect(timerRuns).toBe(1);
  });

  it('unsubscribes its source when it completes or errors', () => {
    newTestScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const completed = hot('a-|', { a: first });
      const failed = hot('a-#', { a: first });
      expectObservable(completed.pipe(resync({ period: 1000 }))).toBe('a-|', ticks);
      expectObservable(failed.pipe(resync({ period: 1000 }))).toBe('a-#', ticks);
      expectSubscriptions(completed.subscriptions).toBe('^-!');
      expectSubscriptions(failed.subscriptions).toBe('^-!');
    });
  });

  it('fails with the error when its scheduler cannot start the timer, and unsubscribes its source', () => {
    const broken = new Error('broken');
    newTestScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('-a-b', { a: first, b: second });
      expectObservable(source.pipe(resync({ period: 1000, scheduler: unschedulable(broken) }))).toBe('-(a#)', ticks, broken);
      expectSubscriptions(source.subscriptions).toBe('^!');
    });
  });

  it('rejects a negative or NaN period with a RangeError', () => {
    expect(() => resync({ period: -5 })).toThrow(RangeError);
    expect(() => resync({ period: Number.NaN })).toThrow(RangeError);
  });
});
