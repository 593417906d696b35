import fc from 'fast-check';
import { ChangeRun, RUN_LIMIT } from '../../lib/handlers/changeRun';
import { CoalescingQueue } from '../../lib/handlers/handlerQueue';
import { toNotification, type HandlerNotification } from '../../lib/handlers/notifications';
import { PendingChanges } from '../../lib/handlers/pendingChanges';
import type { Delta } from '../../lib/reflector/delta';
import type { Snapshot } from '../../lib/store/snapshot';
import { batched, obj, replace, snapshotsOf } from './handleFixtures';

/**
 * PendingChanges reads a handler's changes in place while it keeps up and moves them into a
 * queue only when it must. Short of an overflow, it must hand out exactly what the plain model
 * does: a CoalescingQueue into which every change is pushed as it arrives. Reaching the sync point
 * must agree too.
 */

/** The model: every received change pushed into one coalescing queue. */
class QueueModel {
  private readonly queue = new CoalescingQueue();
  private syncSeq: number | undefined;

  receive(snapshot: Snapshot): void {
    for (const change of snapshot.changes) {
      const notification = toNotification(change);
      if (notification !== undefined) this.queue.push(notification);
    }
  }

  markSync(): void {
    this.syncSeq ??= this.queue.lastSeq;
  }

  syncReached(): boolean {
    return this.syncSeq !== undefined && this.queue.headSeq() > this.syncSeq;
  }

  next(): HandlerNotification | undefined {
    return this.queue.shift();
  }
}

const names = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
/** A delta without its resourceVersion; a relist keeps `a` at version 1, so some of its updates are relist resyncs. */
type DeltaShape = { readonly type: 'Added' | 'Updated' | 'Deleted'; readonly name: string } | { readonly type: 'Replace'; readonly keep: readonly string[] };
const deltaArb: fc.Arbitrary<DeltaShape> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ type: fc.constantFrom('Added' as const, 'Updated' as const, 'Deleted' as const), name: fc.constantFrom(...names) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('Replace' as const), keep: fc.subarray(names) }) },
);

/** `skip`: the stream drops this snapshot (a filtered `informer$`), so the next one's changes do not follow from the last received. */
type Op = { readonly op: 'receive'; readonly skip: boolean } | { readonly op: 'take'; readonly count: number } | { readonly op: 'markSync' };
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant('receive' as const), skip: fc.boolean() }) },
  { weight: 4, arbitrary: fc.integer({ min: 1, max: 4 }).map((count) => ({ op: 'take' as const, count })) },
  { weight: 1, arbitrary: fc.constant({ op: 'markSync' as const }) },
);

/** Runs the ops on both; returns what each handed out, with the sync flag after each take. */
function compare(snapshots: readonly Snapshot[], ops: readonly Op[]): void {
  const pending = new PendingChanges(snapshots[0]!, 1_000_000, () => {
    throw new Error('overflow');
  });
  const model = new QueueModel();
  let received = 1;
  for (const step of ops) {
    if (step.op === 'receive') {
      if (received >= snapshots.length) continue;
      const snapshot = snapshots[received++]!;
      if (step.skip) continue;
      pending.receive(snapshot);
      model.receive(snapshot);
    } else if (step.op === 'markSync') {
      pending.markSync();
      model.markSync();
    } else {
      for (let i = 0; i < step.count; i++) expect(pending.next()).toEqual(model.next());
    }
    expect(pending.syncReached()).toBe(model.syncReached());
  }
  for (let notification = model.next(); notification !== undefined; notification = model.next()) expect(pending.next()).toEqual(notification);
  expect(pending.next()).toBeUndefined();
  expect(pending.syncReached()).toBe(model.syncReached());
}

function snapshotsFrom(shapes: readonly DeltaShape[]): Snapshot[] {
  const deltas = shapes.map((shape, i): Delta => {
    const rv = String(i + 2);
    return shape.type === 'Replace' ? replace(shape.keep.map((name) => obj(name, name === 'a' ? '1' : rv)), rv) : { type: shape.type, object: obj(shape.name, rv) };
  });
  return snapshotsOf([replace([obj('a', '1'), obj('b', '1')], '1'), ...deltas]);
}

describe('PendingChanges', () => {
  it('hands out exactly what a coalescing queue fed every change would, and syncs with it, even when the stream skips snapshots', () => {
    const moves = jest.spyOn(ChangeRun.prototype, 'moveInto');
    fc.assert(
      fc.property(fc.array(deltaArb, { minLength: 1, maxLength: 60, size: 'large' }), fc.array(opArb, { maxLength: 200, size: 'large' }), (deltas, ops) => compare(snapshotsFrom(deltas), ops)),
      { numRuns: 250 },
    );
    // Worth something only if runs did turn into queues, and back, many times.
    expect(moves.mock.calls.length).toBeGreaterThan(250);
    moves.mockRestore();
  });

  it('agrees with the queue when snapshots carry several changes of one key (batches of deltas)', () => {
    fc.assert(
      fc.property(
        fc.array(deltaArb, { minLength: 1, maxLength: 60, size: 'large' }),
        fc.array(fc.integer({ min: 1, max: 5 }), { maxLength: 8 }),
        fc.array(opArb, { maxLength: 200, size: 'large' }),
        (deltas, sizes, ops) => compare(batched(snapshotsFrom(deltas), sizes), ops),
      ),
      { numRuns: 250 },
    );
  });

  it('agrees with the queue beyond RUN_LIMIT snapshots behind', () => {
    const deltas = Array.from({ length: RUN_LIMIT + 50 }, (_, i): DeltaShape => ({ type: 'Added', name: `n${i}` }));
    const snapshots = snapshotsFrom(deltas);
    const receiveAll: Op[] = snapshots.slice(1).map(() => ({ op: 'receive', skip: false }));
    compare(snapshots, [{ op: 'take', count: 0 }, ...receiveAll.slice(0, 10), { op: 'take', count: 3 }, ...receiveAll.slice(10), { op: 'markSync' }]);
  });
});
