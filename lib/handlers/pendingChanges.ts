import type { Change } from '../store/change';
import type { KubeObject } from '../base/object';
import { settledSnapshot } from '../store/indexedSnapshot';
import type { Snapshot } from '../store/snapshot';
import { CatchUp } from './catchUp';
import { ChangeRun } from './changeRun';
import { CoalescingQueue } from './handlerQueue';
import { toNotification, type HandlerNotification } from './notifications';

/**
 * What one handler has received and not yet delivered, after its initial pass, held in one of
 * three ways that deliver the same notifications:
 *
 * - **run** (a handler that keeps up): the snapshots themselves, read in place (`ChangeRun`);
 * - **queue** (a handler behind by a key changed twice, or by over `RUN_LIMIT` snapshots): a
 *   `CoalescingQueue`, one entry per key, folding later changes into earlier ones;
 * - **catch-up** (a handler that would have more than `maxPending` keys queued): no queue at all;
 *   what it has seen, compared with the latest snapshot when it is ready (`CatchUp`).
 *
 * A run becomes a queue by pushing what it has not delivered into an empty one, which builds the
 * very queue that pushing each change on arrival would have built; a queue or a catch-up that
 * runs dry becomes an empty run again. So, short of an overflow, a handler receives exactly what
 * its own coalescing queue would give it; with one, it receives the difference, and loses nothing.
 *
 * Snapshots are numbered as received, the first (the one the initial pass delivers) 0, so that the
 * owner can ask when every change up to one of them is delivered (`markSync`, `syncReached`).
 */
export class PendingChanges<T extends KubeObject> {
  private current: Snapshot<T>;
  private received = 0;
  private readonly run: ChangeRun<T>;
  private queue: CoalescingQueue<T> | undefined;
  private catchUp: CatchUp<T> | undefined;
  /** The number of the snapshot to watch for (the first synced one), once marked. */
  private syncAt: number | undefined;
  /** In queue mode: the push that ends the watched snapshot's changes. */
  private syncSeq = 0;
  private syncDone = false;

  /**
   * @param first the snapshot the initial pass delivers: the changes received after it are pending.
   * @param maxPending the most distinct keys held pending before the handler stops queuing.
   * @param overflowed told (with the first change that did not fit) each time the handler stops queuing.
   */
  constructor(
    first: Snapshot<T>,
    private readonly maxPending: number,
    private readonly overflowed: (notification: HandlerNotification<T>) => void,
  ) {
    this.current = settledSnapshot(first);
    this.run = new ChangeRun(0);
  }

  /** The latest snapshot received. */
  get latest(): Snapshot<T> {
    return this.current;
  }

  receive(snapshot: Snapshot<T>): void {
    const previous = this.current;
    // Kept settled: the run, queue or catch-up holds what is still to deliver, and nothing holds
    // the changes once delivered. The same snapshot again (a stream that replays it) brings no change.
    const settled = settledSnapshot(snapshot);
    if (settled === previous) return;
    this.current = settled;
    this.received++;
    if (this.catchUp !== undefined) return; // it will compare with the latest snapshot when ready
    if (this.queue === undefined) {
      if (this.run.tryAppend(snapshot, this.maxPending)) return;
      this.queue = this.runToQueue();
    }
    this.enqueue(this.queue, previous, snapshot);
  }

  /** Watches for every change up to the latest snapshot received to be delivered (see syncReached). */
  markSync(): void {
    if (this.syncAt !== undefined) return;
    this.syncAt = this.received;
    if (this.queue !== undefined) this.syncSeq = this.queue.lastSeq;
  }

  /** True once every change up to the marked snapshot has been delivered. */
  syncReached(): boolean {
    if (this.syncDone) return true;
    const syncAt = this.syncAt;
    if (syncAt === undefined) return false;
    if (this.catchUp !== undefined) this.syncDone = this.catchUp.deliveredThrough() >= syncAt;
    else if (this.queue !== undefined) this.syncDone = this.queue.headSeq() > this.syncSeq;
    else this.syncDone = this.run.deliveredThrough() >= syncAt;
    return this.syncDone;
  }

  /** The next notification to deliver, or undefined when the handler has everything it received. */
  next(): HandlerNotification<T> | undefined {
    const catchUp = this.catchUp;
    if (catchUp !== undefined) {
      const notification = catchUp.next(this.current, this.received, !this.syncReached());
      if (notification !== undefined) return notification;
      this.catchUp = undefined;
      this.run.reset(this.received);
      return undefined;
    }
    const queue = this.queue;
    if (queue !== undefined) {
      const notification = queue.shift();
      if (notification !== undefined) return notification;
      this.syncReached(); // latched before the queue, which knows where the sync point is, goes
      this.queue = undefined;
      this.run.reset(this.received);
      return undefined;
    }
    return this.run.next();
  }

  /** Moves the run into a fresh queue, noting where the watched snapshot's changes end. */
  private runToQueue(): CoalescingQueue<T> {
    const queue = new CoalescingQueue<T>();
    const watching = this.syncAt !== undefined && !this.syncReached();
    this.run.moveInto(queue, (number) => {
      if (watching && number === this.syncAt) this.syncSeq = queue.lastSeq;
    });
    return queue;
  }

  /** Queues the snapshot's changes, or, when they would take the queue past `maxPending` keys, stops queuing. */
  private enqueue(queue: CoalescingQueue<T>, previous: Snapshot<T>, snapshot: Snapshot<T>): void {
    const overflow = this.firstBeyondBound(queue, snapshot.changes);
    if (overflow === undefined) {
      for (const change of snapshot.changes) {
        const notification = toNotification(change);
        if (notification !== undefined) queue.push(notification);
      }
      return;
    }
    // Everything up to `previous` is queued: the handler has seen `previous`, but for the keys it
    // is owed something for, where the first notification owed tells what it saw.
    this.syncReached();
    const owed = new Map<string, HandlerNotification<T>>();
    for (const notification of queue.owed()) owed.set(notification.key, notification);
    this.queue = undefined;
    this.catchUp = new CatchUp(previous, this.received - 1, owed);
    this.overflowed(overflow);
  }

  /** The first change that would make the queue hold more than `maxPending` keys, if any. */
  private firstBeyondBound(queue: CoalescingQueue<T>, changes: readonly Change<T>[]): HandlerNotification<T> | undefined {
    if (queue.size + changes.length <= this.maxPending) return undefined;
    let size = queue.size;
    for (const change of changes) {
      const notification = toNotification(change);
      if (notification !== undefined && !queue.has(change.key) && ++size > this.maxPending) return notification;
    }
    return undefined;
  }
}
