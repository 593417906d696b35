import type { Change } from './change';
import type { KubeObject } from '../base/object';

/**
 * How far back, in snapshots, {@link ChangeSequencer} remembers when each key last changed. A
 * `handle()` subscription reads at most half as many snapshots in place (`RUN_LIMIT`).
 */
export const SEQUENCE_WINDOW = 2048;

/**
 * Snapshots with more changes than this (relists) are not remembered key by key: they count as
 * touching every key before them, and every later snapshot within the window counts as touching
 * them. A handler then simply does not read them in place next to others, and the map stays small.
 */
export const RECORD_LIMIT = 256;

/** A snapshot's place in its indexer's stream, as {@link ChangeSequencer} numbered it. */
export interface SequencePosition {
  /** The snapshot's number in its indexer subscription, from 0; -1 when it was not numbered. */
  readonly sequence: number;
  /**
   * The number of the latest earlier snapshot that changed one of the keys this one changes (not
   * counting updates that changed nothing), or -1 when none did within {@link SEQUENCE_WINDOW}.
   * Larger (never smaller) around snapshots of more than {@link RECORD_LIMIT} changes. Equal to
   * `sequence` when the snapshot itself changes a key twice.
   */
  readonly touchedSince: number;
}

/** A snapshot the sequencer can number (`IndexedSnapshot`). */
export interface NumberedSnapshot<T extends KubeObject> extends SequencePosition {
  readonly changes: readonly Change<T>[];
  /** Records the snapshot's position; called once, before the snapshot is emitted. */
  numbered(sequence: number, touchedSince: number): void;
}

/**
 * Numbers an indexer's snapshots and notes, for each, when the keys it changes last changed
 * before. With it, a handler that holds snapshots `a..b` unread can tell in O(1) whether snapshot
 * `b + 1` changes a key one of them changes (`touchedSince >= a`), which is when their changes
 * must be coalesced; without it, every handler would look every key up itself.
 *
 * It costs one map read and write per change of a watch event, once per informer, and holds the
 * keys changed in the last {@link SEQUENCE_WINDOW} to twice as many snapshots, at most
 * {@link RECORD_LIMIT} per snapshot: a few thousand keys, whatever the size of the cache.
 */
export class ChangeSequencer {
  private next = 0;
  private readonly lastChanged = new Map<string, number>();
  private prunedAt = 0;
  /** The latest snapshot whose keys were not remembered, or -1. */
  private unrecorded = -1;

  /**
   * Numbers the next snapshot of the stream. A snapshot that changes one key twice (a batch of
   * deltas may) gets its own number as `touchedSince`, so that a handler coalesces its changes.
   * Above {@link RECORD_LIMIT} changes the keys are not looked at: such a snapshot counts as
   * changing a key twice unless `distinctKeys` says each key appears once (a relist's snapshot).
   */
  stamp<T extends KubeObject>(snapshot: NumberedSnapshot<T>, distinctKeys = false): void {
    const sequence = this.next++;
    const changes = snapshot.changes;
    if (changes.length > RECORD_LIMIT) {
      this.unrecorded = sequence;
      snapshot.numbered(sequence, distinctKeys ? sequence - 1 : sequence);
    } else {
      let touchedSince = this.unrecorded;
      for (const change of changes) {
        if (change.type === 'update' && change.isResync === true) continue;
        const before = this.lastChanged.get(change.key);
        if (before !== undefined && before > touchedSince) touchedSince = before;
        this.lastChanged.set(change.key, sequence);
      }
      snapshot.numbered(sequence, touchedSince);
    }
    if (sequence - this.prunedAt >= SEQUENCE_WINDOW) this.prune(sequence);
  }

  /** Forgets keys that last changed more than a window ago. */
  private prune(sequence: number): void {
    const floor = sequence - SEQUENCE_WINDOW;
    for (const [key, at] of this.lastChanged) if (at < floor) this.lastChanged.delete(key);
    this.prunedAt = sequence;
  }
}
