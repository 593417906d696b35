import type { InformerError, RejectedObjectError } from '../base/errors';

/**
 * What the reflector is doing, for `health$`. Each state says since when it holds (the
 * scheduler's clock, ms), so a stale cache is visible: watching since long ago with no error is
 * healthy; backingOff with a 403 is not.
 */
export type ReflectorPhase =
  /** Not started, or stopped. */
  | 'idle'
  /** A list (paged or streaming) is in flight; the cache is not yet replaced. */
  | 'listing'
  /** A watch is open from `resourceVersion`. */
  | 'watching'
  /** The last attempt failed; the next starts after `retryInMs`. */
  | 'backingOff';

/** One health report. A new one is emitted on every phase change and on list progress. */
export interface Health {
  readonly phase: ReflectorPhase;
  /** Failed attempts in a row (0 when healthy). */
  readonly attempt: number;
  /** The last error, kept until the next successful list or watch event. */
  readonly lastError: InformerError | undefined;
  /** The last resourceVersion the cache is known to be complete at ('' before the first list). */
  readonly resourceVersion: string;
  /** Scheduler time (ms) the phase was entered. */
  readonly since: number;
  /** While backing off: the delay before the next attempt. */
  readonly retryInMs: number | undefined;
  /** While listing: items received so far in this list. */
  readonly listedItems: number | undefined;
  /** While listing: the server's estimate of the items still to come. */
  readonly remainingItemCount: number | undefined;
}

/** What an informer's cache could not take, counted over the informer's life. */
export interface CacheHealth {
  /** Objects (or versions of them) the indexer rejected since the informer was made: see `RejectedObjectError`. */
  readonly rejectedObjects: number;
  /** The latest of them: the object's key, the step that failed and what the cache did instead. */
  readonly lastRejection: RejectedObjectError | undefined;
}

/** An informer's health (`informer.health$`): the reflector's, and what its cache rejected. */
export interface InformerHealth extends Health, CacheHealth {}
