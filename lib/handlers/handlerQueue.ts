import type { KubeObject } from '../base/object';
import type { AddChange } from '../store/change';
import type { HandlerNotification } from './notifications';

/**
 * The pending queue of a `handle()` subscription that has fallen behind: at most one entry per
 * object key, so it holds memory in proportion to the objects that changed meanwhile, never to
 * the number of events (client-go gives each listener an unbounded ring buffer that can grow until
 * the process runs out of memory, kubernetes #121474). Its owner bounds it (`maxPending`).
 */

/**
 * What is pending for one key. `first` is delivered before `then`; `then` is only ever set when
 * an object the handler saw was deleted and a new object took its key: that pair is kept as a
 * delete followed by an add, because folding it into one update would hide the re-creation.
 */
interface PendingEntry<T extends KubeObject> {
  readonly key: string;
  first: HandlerNotification<T>;
  then: AddChange<T> | undefined;
  /** Sequence number of the push that made this key pending: entries leave in this order. */
  readonly seq: number;
  /** False once folded away (an add then its delete): the line skips it. */
  live: boolean;
}

/** Folded-away entries tolerated in the line before it is compacted. */
const COMPACT_AFTER = 1024;

/**
 * A FIFO of handler notifications that coalesces per key. Keys leave in the order they became
 * pending; a later notification for a pending key folds into the entry in place:
 * - add then update → add of the newer state; add then delete → nothing (never seen, never gone)
 * - update then update → one update from the oldest to the newest state
 * - update then delete → delete; delete then add → delete, then add
 * - an update stays a resync only while every folded update was one.
 *
 * Every operation is O(1) amortized: a `Map` finds a key's entry, an array with a head index keeps
 * the line (no iterator is allocated per notification, a cost that grows with the number of
 * handlers). The queue itself is unbounded: `PendingChanges` checks `maxPending` before pushing.
 */
export class CoalescingQueue<T extends KubeObject = KubeObject> {
  private entries = new Map<string, PendingEntry<T>>();
  /** Entries in the order their keys became pending, from `head` on; may hold folded-away ones. */
  private line: (PendingEntry<T> | undefined)[] = [];
  private head = 0;
  private dead = 0;
  private pushes = 0;

  /** Keys with something pending. */
  get size(): number {
    return this.entries.size;
  }

  /** Sequence number of the latest push; compare with {@link headSeq} to know what was delivered. */
  get lastSeq(): number {
    return this.pushes;
  }

  /** Sequence number of the oldest pending entry, or Infinity when empty. */
  headSeq(): number {
    const entry = this.first();
    return entry === undefined ? Infinity : entry.seq;
  }

  /** True when `key` has something pending. */
  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** Queues a notification, folding it into what is pending for its key. */
  push(notification: HandlerNotification<T>): void {
    const seq = ++this.pushes;
    const entry = this.entries.get(notification.key);
    if (entry !== undefined) {
      this.fold(entry, notification);
      return;
    }
    const created: PendingEntry<T> = { key: notification.key, first: notification, then: undefined, seq, live: true };
    this.entries.set(notification.key, created);
    this.line.push(created);
  }

  /**
   * The next notification of each pending key, in line order: what the handler is owed first
   * for that key, which tells what it saw of it last (nothing before an add, the old object of an
   * update, the object of a delete).
   */
  *owed(): IterableIterator<HandlerNotification<T>> {
    for (let i = this.head; i < this.line.length; i++) {
      const entry = this.line[i];
      if (entry?.live === true) yield entry.first;
    }
  }

  /** Takes the next notification in FIFO order. */
  shift(): HandlerNotification<T> | undefined {
    const entry = this.first();
    if (entry === undefined) return undefined;
    const notification = entry.first;
    if (entry.then === undefined) this.take(entry);
    else {
      // The add of a re-created object follows its delete at the same place in line.
      entry.first = entry.then;
      entry.then = undefined;
    }
    return notification;
  }

  /** The oldest live entry, skipping (and dropping) folded-away ones at the head of the line. */
  private first(): PendingEntry<T> | undefined {
    while (this.head < this.line.length) {
      const entry = this.line[this.head]!;
      if (entry.live) return entry;
      this.line[this.head++] = undefined;
      this.dead--;
    }
    if (this.head > 0) this.restart();
    return undefined;
  }

  /** Removes the head entry, which `first` just returned. */
  private take(entry: PendingEntry<T>): void {
    this.entries.delete(entry.key);
    this.line[this.head++] = undefined;
    if (this.head === this.line.length) {
      this.restart();
    } else if (this.head >= COMPACT_AFTER && this.head * 2 >= this.line.length) {
      this.line = this.line.slice(this.head);
      this.head = 0;
    }
  }

  /** Empties the queue, with a fresh map. */
  private restart(): void {
    // Start over with a fresh map rather than emptying the old one. A map that lives
    // long has its hash tables in the old generation; as it grows and shrinks it retires
    // tables that still point at young entries, and a scavenge treats those pointers as roots,
    // so notifications (and the objects they carry) survive and get promoted. A fresh map
    // promotes nothing and costs what the cache alone costs (docs/performance-notes.md, "Rounds
    // of changes": the fresh `Map` row). Reusing the line array costs nothing.
    this.entries = new Map();
    this.line.length = 0;
    this.head = 0;
    this.dead = 0;
  }

  /** Drops an entry folded away in the middle of the line; compacts when they pile up. */
  private forget(entry: PendingEntry<T>): void {
    entry.live = false;
    this.entries.delete(entry.key);
    if (++this.dead > COMPACT_AFTER && this.dead > this.entries.size) {
      this.line = this.line.slice(this.head).filter((pending) => pending?.live === true);
      this.head = 0;
      this.dead = 0;
    }
  }

  private fold(entry: PendingEntry<T>, next: HandlerNotification<T>): void {
    const key = next.key;
    if (entry.then !== undefined) {
      // Pending: delete(seen) then add(new). Fold into the add half.
      if (next.type === 'delete') entry.then = undefined;
      else entry.then = { ...entry.then, object: next.object }; // keeps isInInitialList and its handover or namespace-set mark
      return;
    }
    const first = entry.first;
    switch (first.type) {
      case 'add':
        if (next.type === 'delete') this.forget(entry);
        else entry.first = { ...first, object: next.object };
        return;
      case 'update':
        if (next.type === 'delete') entry.first = next;
        else
          entry.first = {
            type: 'update',
            key,
            oldObject: first.oldObject,
            object: next.object,
            isResync: first.isResync && next.type === 'update' && next.isResync,
          };
        return;
      case 'delete':
        // A duplicate delete collapses into the first; anything else re-creates the key.
        if (next.type !== 'delete') entry.then = next.type === 'add' ? next : { type: 'add', key, object: next.object, isInInitialList: false };
        return;
    }
  }
}
