import { SEQUENCE_WINDOW, type SequencePosition } from '../store/changeSequence';
import type { KubeObject } from '../base/object';
import type { Snapshot } from '../store/snapshot';
import type { CoalescingQueue } from './handlerQueue';
import { toNotification, type HandlerNotification } from './notifications';

/**
 * The most snapshots a handler reads in place. Each keeps alive the trie paths its writes copied
 * (docs/performance-notes.md, "The persistent map": bytes per write), so a handler further behind moves
 * its changes into a queue, which holds only notifications. Within the indexer's window, so that
 * `touchedSince` sees back to the first of them.
 */
export const RUN_LIMIT = SEQUENCE_WINDOW / 2;

/**
 * The snapshots a handler has received and not yet fully delivered, read in place: a cursor walks
 * each snapshot's own `changes` array, so a handler that keeps up costs an array slot per snapshot
 * and nothing per change (no queue entry, no map operation, no copy).
 *
 * Reading in place delivers exactly what a coalescing queue would, as long as no key has two
 * changes in the run: {@link ChangeRun.tryAppend} refuses a snapshot that changes a key the run
 * changes, or that changes one key twice itself (a batch of several deltas may), and the owner then moves the run into a `CoalescingQueue` (see `PendingChanges`). The
 * indexer numbers its snapshots and notes when each one's keys last changed (`ChangeSequencer`),
 * so the check costs two comparisons per snapshot, whatever the number of handlers. A snapshot
 * the indexer did not number (another `Snapshot` implementation), or that does not follow the
 * last one (the stream skipped one), is refused too, and the queue takes over.
 */
export class ChangeRun<T extends KubeObject> {
  /**
   * The run's snapshots, in order, from index 0 to `tail`; those before `head` are delivered (kept
   * until the run empties, which spares a write per snapshot). The array is reused.
   */
  private readonly snapshots: (Snapshot<T> | undefined)[] = [];
  private head = 0;
  private tail = 0;
  /** Index in the head snapshot's changes of the next change to deliver. */
  private cursor = 0;
  /** Changes appended since the run was last empty, delivered or not: what `maxPending` bounds. */
  private appended = 0;
  /** The indexer's numbers (see `ChangeSequencer`) of the run's first and last snapshots; -1 when unknown. */
  private firstSequence = -1;
  private lastSequence = -1;

  /**
   * @param startNumber the number, among the snapshots received (the first is 0), of the last
   *   snapshot whose changes are all delivered.
   */
  constructor(private startNumber: number) {}

  /** Starts over, empty, after snapshot number `startNumber`. */
  reset(startNumber: number): void {
    this.startNumber = startNumber;
    this.snapshots.fill(undefined, 0, this.tail);
    this.head = this.tail = this.cursor = this.appended = 0;
  }

  /** The number of the last snapshot whose changes are all delivered. */
  deliveredThrough(): number {
    this.skipUnchanged();
    return this.startNumber + this.head;
  }

  /**
   * Appends `snapshot` if it keeps the run within `maxPending` changes (counting those delivered
   * since it was last empty) and {@link RUN_LIMIT} snapshots, and changes no key the run changes;
   * otherwise returns false, and the owner moves the run into a queue.
   */
  tryAppend(snapshot: Snapshot<T>, maxPending: number): boolean {
    const tail = this.tail;
    const changes = snapshot.changes.length;
    if (this.appended + changes > maxPending || tail >= RUN_LIMIT) return false;
    const position = snapshot as Partial<SequencePosition>;
    const sequence = position.sequence ?? -1;
    if (tail === this.head) {
      // A snapshot that changes a key twice itself (a batch of deltas) is coalesced in a queue.
      if (sequence >= 0 && position.touchedSince! >= sequence) return false;
      this.firstSequence = sequence;
    }
    // Read in place only what follows the last snapshot and changes no key the run changes.
    else if (this.lastSequence < 0 || sequence !== this.lastSequence + 1 || position.touchedSince! >= this.firstSequence) return false;
    this.lastSequence = sequence;
    if (tail < this.snapshots.length) this.snapshots[tail] = snapshot;
    else this.snapshots.push(snapshot);
    this.tail = tail + 1;
    this.appended += changes;
    return true;
  }

  /** The next change to deliver, as a notification; undefined once the run is delivered. */
  next(): HandlerNotification<T> | undefined {
    while (this.head < this.tail) {
      const changes = this.snapshots[this.head]!.changes;
      const at = this.cursor;
      if (at >= changes.length) {
        this.advance();
        continue;
      }
      // A snapshot counts as delivered as soon as its last change is taken, as a queue entry does.
      if (at + 1 < changes.length) this.cursor = at + 1;
      else this.advance();
      const change = changes[at]!;
      // The indexer's own updates say whether they changed anything (`isResync`): passed as they are.
      if (change.type !== 'update' || change.isResync === false) return change as HandlerNotification<T>;
      const notification = toNotification(change);
      if (notification !== undefined) return notification;
    }
    return undefined;
  }

  /**
   * Pushes what is undelivered into `queue`, in order, and empties the run; `pushed(number)` is
   * called after each snapshot's changes, so that the owner can tell which pushes a snapshot ends.
   */
  moveInto(queue: CoalescingQueue<T>, pushed: (snapshotNumber: number) => void): void {
    let number = this.startNumber + this.head;
    for (let index = this.head; index < this.tail; index++) {
      const changes = this.snapshots[index]!.changes;
      for (let at = index === this.head ? this.cursor : 0; at < changes.length; at++) {
        const notification = toNotification(changes[at]!);
        if (notification !== undefined) queue.push(notification);
      }
      pushed(++number);
    }
    this.reset(number);
  }

  /** Moves past changes that deliver nothing, so that a fully delivered snapshot counts as such. */
  private skipUnchanged(): void {
    while (this.head < this.tail) {
      const changes = this.snapshots[this.head]!.changes;
      while (this.cursor < changes.length) {
        if (toNotification(changes[this.cursor]!) !== undefined) return;
        this.cursor++;
      }
      this.advance();
    }
  }

  /** The head snapshot is delivered; when it was the last, the run starts over, empty. */
  private advance(): void {
    this.cursor = 0;
    if (++this.head === this.tail) this.reset(this.startNumber + this.head);
  }
}
