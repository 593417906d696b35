import type { AddedDelta, BookmarkDelta, DeletedDelta, UpdatedDelta } from './delta';
import type { KubeObject } from '../base/object';
import type { WatchEvent } from '../sources/listerWatcher';
import type { ReflectorRequest } from './reflectorState';

/**
 * What one watch event does, as a pure function of where its watch stream is: the delta it
 * becomes, the resourceVersion after it, and what else it means. `reflect` keeps a stream's phase
 * and the last resourceVersion, and passes every event through {@link watchEventStep}.
 *
 * The rules (the API's watch semantics, see PROTOCOL.md; client-go's `watchHandler`):
 * 1. ADDED, MODIFIED and DELETED become Added, Updated and Deleted; a BOOKMARK becomes a Bookmark
 *    at its resourceVersion, or nothing when it carries none.
 * 2. The resourceVersion advances to that of every event that carries one, bookmarks included:
 *    a watch resumed there neither repeats nor misses an event.
 * 3. A watch started at '' or '0' opens with synthetic ADDEDs of the current state, in no order of
 *    versions: they advance nothing. They end at the first event of another type.
 * 4. A streaming list's initial events are its list, in no order of versions: they advance nothing
 *    and go into Replace pages (a DELETED into a page's `deleted`). Only the bookmark annotated
 *    `k8s.io/initial-events-end: "true"` ends them, at its resourceVersion; any other bookmark
 *    among them means nothing.
 * 5. Each event is an item of its request, except the bookmarks among a streaming list's initial
 *    events: the list's items are its objects.
 */

/** The annotation that marks the bookmark ending a streaming list's initial events. */
export const INITIAL_EVENTS_END_ANNOTATION = 'k8s.io/initial-events-end';

/** Where a watch stream is, as far as its events go. */
export type WatchPhase =
  /** A streaming list before its initial-events-end bookmark (rule 4). */
  | 'initialEvents'
  /** A watch from '' or '0' before its first event that is not an ADDED (rule 3). */
  | 'syntheticAdds'
  /** Events in resourceVersion order. */
  | 'events';

/** What an event means besides its delta. */
export type WatchEventOutcome =
  /** An event of the watch (its delta, if any, in `delta`): the connection works. */
  | 'watched'
  /** An initial ADDED or MODIFIED: its object goes into the Replace page being filled. */
  | 'initialObject'
  /** An initial DELETED: its object goes into the page's `deleted`. */
  | 'initialDeletion'
  /** The initial-events-end bookmark: the streaming list is complete at `resourceVersion`; the stream goes on as a watch. */
  | 'initialEventsEnd'
  /** A bookmark among the initial events without the end annotation. */
  | 'ignored';

/** The delta a watch event becomes. */
export type WatchDelta<T extends KubeObject = KubeObject> = AddedDelta<T> | UpdatedDelta<T> | DeletedDelta<T> | BookmarkDelta;

/** The result of {@link watchEventStep}. */
export interface WatchEventStep<T extends KubeObject = KubeObject> {
  readonly phase: WatchPhase;
  readonly resourceVersion: string;
  readonly outcome: WatchEventOutcome;
  /** The delta to emit; only for `watched`, and not for a bookmark without a resourceVersion. */
  readonly delta: WatchDelta<T> | undefined;
}

/** The phase a stream opened by `request` starts in. */
export function watchPhaseOf(request: ReflectorRequest & { readonly kind: 'watch' | 'streamingList' }): WatchPhase {
  if (request.kind === 'streamingList') return 'initialEvents';
  return request.resourceVersion === '' || request.resourceVersion === '0' ? 'syntheticAdds' : 'events';
}

/**
 * One event of a stream in `phase`, after `resourceVersion`: what to emit and where the stream is
 * then. Allocates only the delta (and the result, which does not outlive its caller).
 */
export function watchEventStep<T extends KubeObject>(phase: WatchPhase, resourceVersion: string, event: WatchEvent<T>): WatchEventStep<T> {
  const { type, object } = event;
  // Malformed objects reach the indexer, which reports them; here a missing field is no version.
  const meta = object.metadata as Partial<KubeObject['metadata']> | undefined;
  const version = meta?.resourceVersion;
  if (phase === 'initialEvents') {
    if (type === 'DELETED') return { phase, resourceVersion, outcome: 'initialDeletion', delta: undefined };
    if (type !== 'BOOKMARK') return { phase, resourceVersion, outcome: 'initialObject', delta: undefined };
    if (meta?.annotations?.[INITIAL_EVENTS_END_ANNOTATION] !== 'true') return { phase, resourceVersion, outcome: 'ignored', delta: undefined };
    return { phase: 'events', resourceVersion: version ?? '', outcome: 'initialEventsEnd', delta: undefined };
  }
  if (type === 'ADDED') {
    const advanced = phase === 'events' && version ? version : resourceVersion;
    return { phase, resourceVersion: advanced, outcome: 'watched', delta: { type: 'Added', object } };
  }
  const advanced = version ? version : resourceVersion;
  if (type === 'MODIFIED') return { phase: 'events', resourceVersion: advanced, outcome: 'watched', delta: { type: 'Updated', object } };
  if (type === 'DELETED') return { phase: 'events', resourceVersion: advanced, outcome: 'watched', delta: { type: 'Deleted', object } };
  return { phase: 'events', resourceVersion: advanced, outcome: 'watched', delta: version ? { type: 'Bookmark', resourceVersion: version } : undefined };
}

/** Whether an event with this outcome counts as an item of its request (rule 5). */
export function isRequestItem(outcome: WatchEventOutcome): boolean {
  return outcome !== 'initialEventsEnd' && outcome !== 'ignored';
}
