import type { InformerError } from '../base/errors';

/**
 * What the reflector reports about each request it makes, in its event stream (`reflectorEvents`):
 * when it opens and when it ends. Metrics are built on these (an informer's `metrics$`). Nothing
 * here is per event: a request's items are counted into one number.
 */

/** Which request: a list (paged or not), a streaming list, or a watch, from `resourceVersion`. */
export interface RequestSummary {
  readonly kind: 'list' | 'streamingList' | 'watch';
  readonly resourceVersion: string;
}

/** A request was opened (or, `continued`, a streaming list went on as a watch on the same stream). */
export interface RequestOpened {
  readonly type: 'opened';
  readonly request: RequestSummary;
  /**
   * A list (paged or streaming) made after the cache had synced once since the subscription
   * started: a relist. False for the first list and for the retries and fallbacks that lead to it.
   */
  readonly relist: boolean;
  /** The error that led to this request (the failure of the one before), if any. */
  readonly after: InformerError | undefined;
  /** True for the watch a streaming list turns into at its initial-events-end bookmark: no new request on the wire. */
  readonly continued: boolean;
  /** Scheduler time (ms). */
  readonly at: number;
}

/** How a request ended. */
export type RequestOutcome =
  /** A list delivered its last page, a streaming list its initial-events-end bookmark, or a watch closed cleanly. */
  | 'completed'
  /** It failed (an error, a cut, a missing bookmark, a watch that closed at once). */
  | 'failed'
  /** The subscription ended while it was in flight. */
  | 'stopped';

/** A request ended. */
export interface RequestEnded {
  readonly type: 'ended';
  readonly request: RequestSummary;
  readonly outcome: RequestOutcome;
  /** Why it failed, when the reflector has an error for it. */
  readonly error: InformerError | undefined;
  /** The response ended by itself, without an error (a list or streaming list cut short, a watch closed by the server). */
  readonly closed: boolean;
  /** Items received: a list's objects, a streaming list's initial events, a watch's events (bookmarks included). */
  readonly items: number;
  /** Scheduler time (ms) it was opened. */
  readonly startedAt: number;
  /** Scheduler time (ms) it ended. */
  readonly at: number;
}

/** One request report. */
export type RequestEvent = RequestOpened | RequestEnded;
