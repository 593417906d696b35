import { filter, map, merge, Subject, type Observable } from 'rxjs';
import type { Delta } from '../reflector/delta';
import { MIN_HEALTHY_WATCH_MS } from '../reflector/reflectorState';
import { requestStopped } from '../reflector/reflectorReports';
import type { RequestEvent, RequestOpened, RequestOutcome } from '../reflector/requestEvent';
import { isExpired, isTooLargeResourceVersion, type InformerError } from '../base/errors';
import type { KubeObject } from '../base/object';

/** Why a relist happened: the error that ended the request before it. */
export type RelistCause =
  /** 410 Gone / Expired: the resourceVersion fell out of the watch cache or etcd's history. */
  | 'expired'
  /** 504 "Too large resource version": the server had not reached the version asked for. */
  | 'tooLargeResourceVersion'
  /** Anything else: an HTTP error, a cut connection, a streaming list the server would not finish. */
  | 'error';

/** The type of a watch event, as the API server names it. */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';

/**
 * One measurement of an informer, as plain values (`informer.metrics$`): what client-go's
 * reflector metrics count, and relists by cause and watch events by type. Durations are in seconds
 * of the informer's scheduler.
 */
export type InformerMetricEvent =
  /** A list started: paged, or `streaming` (`sendInitialEvents`). `relist` says why, for a list after the cache had synced. */
  | { readonly type: 'listStarted'; readonly streaming: boolean; readonly relist: RelistCause | undefined }
  /** A list ended: `items` objects received in `seconds`. */
  | { readonly type: 'listEnded'; readonly streaming: boolean; readonly outcome: RequestOutcome; readonly seconds: number; readonly items: number }
  /** A watch started; `continued` when it is a streaming list going on past its initial events (no new request). */
  | { readonly type: 'watchStarted'; readonly continued: boolean }
  /**
   * A watch ended after `seconds` with `events` events. `short`: the server closed it within 1 s
   * without any event (client-go's short watch, which the reflector treats as a failure); a watch
   * refused with an error is not short.
   */
  | { readonly type: 'watchEnded'; readonly outcome: RequestOutcome; readonly seconds: number; readonly events: number; readonly short: boolean }
  /** A watch event reached the cache; `resourceVersion` is the one it carried ('' if none). */
  | { readonly type: 'watchEvent'; readonly eventType: WatchEventType; readonly resourceVersion: string };

/**
 * The request in flight of an informer's reflector runs, for `metrics$`: each run's request
 * reports pass on as they come (to `events$`, only while someone listens), and a run stopped with
 * a request in flight reports it `stopped`, since the run's own stream is closed by then. The
 * stopped request's items are counted here from the run's deltas: a list's objects, a streaming
 * list's objects as its pages hold them, a watch's deltas.
 */
export class RequestsInFlight {
  private opened: RequestOpened | undefined;
  private items = 0;
  /** The request reports, stopped ones included. */
  readonly events$: Observable<RequestEvent>;

  /** @param bus where the reports go: its own, or one that several runs' reports share. */
  constructor(private readonly bus = new Subject<RequestEvent>()) {
    this.events$ = bus.asObservable();
  }

  /** A request report of the run. */
  report(event: RequestEvent): void {
    this.opened = event.type === 'opened' ? event : undefined;
    this.items = 0;
    this.emit(event);
  }

  /** A delta of the run: items of the request in flight. */
  count(delta: Delta<KubeObject>): void {
    this.items += delta.type === 'Replace' ? delta.items.length + (delta.deleted?.length ?? 0) : 1;
  }

  /** The run was stopped at `at`. */
  stopped(at: number): void {
    if (this.opened === undefined) return;
    const ended = requestStopped(this.opened, this.items, at);
    this.opened = undefined;
    this.emit(ended);
  }

  private emit(event: RequestEvent): void {
    // Skipping an unobserved bus spares its iteration.
    if (this.bus.observed) this.bus.next(event);
  }
}

/**
 * The metric events of one informer, from its reflector's request reports and its delta stream.
 * Per event: one small object; per request: two. Subscribing starts nothing: it listens.
 *
 * @param requests the reflector's request reports.
 * @param deltas the deltas on their way to the cache.
 * @returns the events, in the order they happened.
 */
export function informerMetricEvents<T extends KubeObject>(requests: Observable<RequestEvent>, deltas: Observable<Delta<T>>): Observable<InformerMetricEvent> {
  return merge(
    requests.pipe(map(fromRequest)),
    deltas.pipe(
      filter((delta) => delta.type !== 'Replace'),
      map(fromWatchDelta),
    ),
  );
}

function fromRequest(event: RequestEvent): InformerMetricEvent {
  const isWatch = event.request.kind === 'watch';
  const streaming = event.request.kind === 'streamingList';
  if (event.type === 'opened') {
    if (isWatch) return { type: 'watchStarted', continued: event.continued };
    return { type: 'listStarted', streaming, relist: event.relist ? relistCause(event.after) : undefined };
  }
  const seconds = (event.at - event.startedAt) / 1000;
  if (!isWatch) return { type: 'listEnded', streaming, outcome: event.outcome, seconds, items: event.items };
  // client-go's short watch: a watch whose response ended by itself, at once and empty (not one that failed with an error).
  const short = event.closed && event.items === 0 && event.at - event.startedAt < MIN_HEALTHY_WATCH_MS;
  return { type: 'watchEnded', outcome: event.outcome, seconds, events: event.items, short };
}

function fromWatchDelta<T extends KubeObject>(delta: Exclude<Delta<T>, { type: 'Replace' }>): InformerMetricEvent {
  switch (delta.type) {
    case 'Bookmark':
      return { type: 'watchEvent', eventType: 'BOOKMARK', resourceVersion: delta.resourceVersion };
    case 'Added':
      return { type: 'watchEvent', eventType: 'ADDED', resourceVersion: versionOf(delta.object) };
    case 'Updated':
      return { type: 'watchEvent', eventType: 'MODIFIED', resourceVersion: versionOf(delta.object) };
    case 'Deleted':
      return { type: 'watchEvent', eventType: 'DELETED', resourceVersion: versionOf(delta.object) };
  }
}

/** The relist cause an error stands for (an unknown one counts as `error`). */
function relistCause(error: InformerError | undefined): RelistCause {
  if (isExpired(error)) return 'expired';
  if (isTooLargeResourceVersion(error)) return 'tooLargeResourceVersion';
  return 'error';
}

function versionOf(object: KubeObject): string {
  const meta = object.metadata as Partial<KubeObject['metadata']> | undefined;
  return meta?.resourceVersion ?? '';
}
