import type { SchedulerAction, SchedulerLike } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { KubeObject } from '../../lib/base/object';
import type { Delta } from '../../lib/reflector/delta';
import { deltaBatches } from '../../lib/store/deltaBatches';
import { unschedulable } from '../handlers/handleFixtures';

/**
 * deltaBatches(), the step that groups the delta stream into what one step of the store's reducer
 * receives, in virtual time: its batching rules and its teardown, as marbles.
 */

function newScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

const pod = (name: string, resourceVersion: string): KubeObject => ({ metadata: { name, namespace: 'ns', resourceVersion } });

const deltas = {
  a: { type: 'Added', object: pod('a', '1') },
  b: { type: 'Updated', object: pod('a', '2') },
  c: { type: 'Deleted', object: pod('a', '3') },
  d: { type: 'Added', object: pod('d', '4') },
  e: { type: 'Added', object: pod('e', '5') },
  f: { type: 'Bookmark', resourceVersion: '6' },
  R: { type: 'Replace', items: [pod('r', '7')], first: true, last: true, resourceVersion: '7' },
} satisfies Record<string, Delta>;
const { a, b, c, d, e, f, R } = deltas;

/** `scheduler`, with each action put off by `frames` and each run counted in `runs.count`. */
function putOff(scheduler: TestScheduler, frames: number, runs: { count: number }): SchedulerLike {
  return {
    now: () => scheduler.now(),
    schedule: (work, _delay, state) =>
      scheduler.schedule(
        function (this: SchedulerAction<unknown>, value) {
          runs.count++;
          work.call(this as never, value as never);
        },
        frames,
        state,
      ),
  };
}

describe('deltaBatches', () => {
  it('makes one batch of the deltas that arrive in one task, closed at the end of it', () => {
    const scheduler = newScheduler();
    scheduler.run(({ hot, expectObservable }) => {
      const source = hot('-(ab)--c--', deltas);
      expectObservable(source.pipe(deltaBatches(scheduler, 10))).toBe('-x-----y--', { x: [a, b], y: [c] });
    });
  });

  it('closes a batch at maxDeltas at once, and the deltas after it make the next', () => {
    const scheduler = newScheduler();
    scheduler.run(({ hot, expectObservable }) => {
      const source = hot('-(def)-', deltas);
      expectObservable(source.pipe(deltaBatches(scheduler, 2))).toBe('-(zw)-', { z: [d, e], w: [f] });
    });
  });

  it('emits a Replace page alone and at once, after closing the open batch', () => {
    const scheduler = newScheduler();
    scheduler.run(({ hot, expectObservable }) => {
      const source = hot('-(aRb)-R-', deltas);
      expectObservable(source.pipe(deltaBatches(scheduler, 10))).toBe('-(xRy)-R-', { x: [a], R, y: [b] });
    });
  });

  it('emits the open batch before it completes or errors, holding nothing back', () => {
    const failure = new Error('failure');
    const scheduler = newScheduler();
    const runs = { count: 0 };
    scheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // The close is put off by 5 frames, so only the flush can emit the batch at 2.
      const completing = hot('-a-(b|)', deltas);
      const failing = hot('-a-(b#)', deltas, failure);
      expectObservable(completing.pipe(deltaBatches(putOff(scheduler, 5, runs), 10))).toBe('---(x|)', { x: [a, b] });
      expectObservable(failing.pipe(deltaBatches(putOff(scheduler, 5, runs), 10))).toBe('---(x#)', { x: [a, b] }, failure);
      expectSubscriptions(completing.subscriptions).toBe('^--!');
      expectSubscriptions(failing.subscriptions).toBe('^--!');
    });
    // The flush cancelled the pending closes: neither ran.
    expect(runs.count).toBe(0);
  });

  it('unsubscribes its source and cancels the pending close when the subscriber leaves', () => {
    const scheduler = newScheduler();
    const runs = { count: 0 };
    scheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('-a-----b', deltas);
      expectObservable(source.pipe(deltaBatches(putOff(scheduler, 5, runs), 10)), '^--!').toBe('');
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
    // The close of [a], due at 6, never ran.
    expect(runs.count).toBe(0);
  });

  it('fails with the error, and unsubscribes its source, when its scheduler cannot schedule a close', () => {
    const broken = new Error('broken');
    const scheduler = newScheduler();
    scheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('-R-a-b', deltas);
      expectObservable(source.pipe(deltaBatches(unschedulable(broken), 10))).toBe('-R-#', { R }, broken);
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('keeps each subscription apart', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const batches = cold('-(ab)', deltas).pipe(deltaBatches(scheduler, 10));
      expectObservable(batches).toBe('-x', { x: [a, b] });
      expectObservable(batches, '--^').toBe('---x', { x: [a, b] });
    });
  });
});
