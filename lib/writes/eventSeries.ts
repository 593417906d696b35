import type { EventsV1Event } from '../resources/builtins';

/**
 * The recorder's memory of recent events, `tools/events`'s `eventCache` (`event_broadcaster.go`):
 * one entry per series key, the first occurrence's Event (its name is the series' for good) and
 * how many times it occurred. A second occurrence turns the Event into a series, later ones only
 * count; what the server has is written when the series is refreshed or ends. Bounded: beyond
 * `maxEntries` the least recently seen entry is forgotten (client-go clears its cache only on its
 * periodic pass; the bound is `tools/record`'s LRU size).
 */

/** One event the recorder remembers. Mutable: the recorder counts occurrences into it. */
export interface SeriesEntry {
  readonly key: string;
  /** The Event of the first occurrence: its name, note and eventTime stay the series'. */
  readonly event: EventsV1Event;
  /** Occurrences so far: 1 for a single event, 2 and more for a series. */
  count: number;
  readonly firstObservedMs: number;
  lastObservedMs: number;
  /** The count the server has: 0 before the Event was created. */
  written: number;
}

export class EventSeriesCache {
  private readonly entries = new Map<string, SeriesEntry>();

  constructor(private readonly maxEntries: number) {}

  /** The entry of `key`, marked as the most recently seen. O(1). */
  touch(key: string): SeriesEntry | undefined {
    const entry = this.entries.get(key);
    if (entry !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    return entry;
  }

  /**
   * Remembers a first occurrence and returns its entry, with the entry forgotten to make room
   * (the least recently seen), if any. O(1).
   */
  add(key: string, event: EventsV1Event, nowMs: number): { readonly entry: SeriesEntry; readonly evicted: SeriesEntry | undefined } {
    const entry: SeriesEntry = { key, event, count: 1, firstObservedMs: nowMs, lastObservedMs: nowMs, written: 0 };
    this.entries.set(key, entry);
    let evicted: SeriesEntry | undefined;
    if (this.entries.size > this.maxEntries) {
      evicted = this.entries.values().next().value!;
      this.entries.delete(evicted.key);
    }
    return { entry, evicted };
  }

  /** Forgets `entry` if it is still the one remembered under its key. */
  forget(entry: SeriesEntry): void {
    if (this.entries.get(entry.key) === entry) this.entries.delete(entry.key);
  }

  /**
   * `finishSeries`: a series not seen for `finishMs` has ended, and a single event that old will
   * not become one; both are forgotten. Returns the ended series whose count the server lacks,
   * for a last write. O(entries), run every `finishMs`.
   */
  finish(nowMs: number, finishMs: number): SeriesEntry[] {
    const ended: SeriesEntry[] = [];
    for (const entry of this.entries.values()) {
      if (entry.lastObservedMs > nowMs - finishMs) continue;
      this.entries.delete(entry.key);
      if (entry.count >= 2 && entry.count > entry.written) ended.push(entry);
    }
    return ended;
  }

  /**
   * `refreshExistingEventSeries`: the series whose count the server lacks, to write (which also
   * renews the Event's time to live on the server). O(entries), run every refresh interval.
   */
  unwritten(): SeriesEntry[] {
    const due: SeriesEntry[] = [];
    for (const entry of this.entries.values()) if (entry.count >= 2 && entry.count > entry.written) due.push(entry);
    return due;
  }

  /** Entries remembered. */
  get size(): number {
    return this.entries.size;
  }
}
