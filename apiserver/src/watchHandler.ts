import type { ServerResponse } from 'node:http';
import { Subscription } from 'rxjs';
import { apiVersionOf, type Resource } from 'rx-informer';
import type { KubeObject } from 'rx-informer';
import { longTimeout } from './longTimeout';
import type { ClusterStoreImpl } from './clusterStore';
import type { Fault } from './faults';
import { eventLine, jsonOf, objectLine, watchLine, type ChangeType, type StoreEvent, type WireLine } from './history';
import { parseResourceVersion, type ListQuery } from './listOptions';
import type { ResponseForm } from './mediaTypeConversion';
import { tooOldResourceVersion } from './status';
import { WatchWriter } from './watchWriter';

/**
 * Serves watches (PROTOCOL.md B.5, B.6): NDJSON over a chunked 200 response, replay from an exact
 * resourceVersion, synthetic ADDED events for the current state, streaming lists, bookmarks,
 * `timeoutSeconds`, and selector transitions (an object that starts matching arrives as ADDED,
 * one that stops matching as DELETED), each event costing O(1) per watch.
 */

/** The annotation of the BOOKMARK that ends a streaming list's initial events. */
export const INITIAL_EVENTS_END_ANNOTATION = 'k8s.io/initial-events-end';

/** Two seconds before the deadline, the API server sends a last bookmark (`cache_watcher.go`). */
const BOOKMARK_BEFORE_TIMEOUT_MS = 2_000;
/** Without timeoutSeconds the API server picks 30–60 minutes (`minRequestTimeout * (1 + rand)`). */
const MIN_REQUEST_TIMEOUT_MS = 1_800_000;

/** What a watch needs from the server. */
export interface WatchRequest {
  readonly store: ClusterStoreImpl;
  readonly resource: Resource<KubeObject>;
  readonly namespace: string | undefined;
  readonly query: ListQuery;
  readonly response: ServerResponse;
  readonly fault: Fault | undefined;
  readonly bookmarkIntervalMs: number;
  /** Send each event's object converted (`mediaTypeConversion.ts`): as a one-row Table (`table.ts`), as for `kubectl get -w`, or as PartialObjectMetadata. */
  readonly form?: ResponseForm;
  /** Called once when the watch ends, however it ends (possibly before `open` returns). */
  readonly onEnd: (session: WatchSession) => void;
}

/** Where a watch starts, decided before the 200 is sent so parameter errors can still be a 400. */
type Start =
  | { readonly kind: 'initial-state'; readonly endBookmark: boolean }
  | { readonly kind: 'from'; readonly rv: number }
  | { readonly kind: 'now' };

function startOf(query: ListQuery): Start {
  const rv = query.resourceVersion;
  const legacyStart = rv === undefined || rv === '0';
  if (query.sendInitialEvents === true) return { kind: 'initial-state', endBookmark: query.allowWatchBookmarks };
  if (query.sendInitialEvents === false) return legacyStart ? { kind: 'now' } : { kind: 'from', rv: parseResourceVersion(rv) };
  // A legacy watch: "Get State and Start at Most Recent/Any" sends the state as ADDED events, with
  // no bookmark to end them. (Where the WatchList gate is on, parseListQuery has already turned
  // such a watch into a streaming list, as SetListOptionsDefaults does.)
  if (legacyStart) return { kind: 'initial-state', endBookmark: false };
  return { kind: 'from', rv: parseResourceVersion(rv) };
}

/** One open watch. */
export class WatchSession {
  private readonly writer: WatchWriter;
  /** The timeout, its bookmark and the bookmark interval: a client may ask for any timeoutSeconds. */
  private readonly timers = new Subscription();
  private unsubscribe: (() => void) | undefined;
  private ended = false;

  private constructor(
    private readonly request: WatchRequest,
    private readonly start: Start,
  ) {
    this.writer = new WatchWriter(request.response, request.fault, {
      endCleanly: () => this.end(),
      destroy: () => this.destroy(),
    });
  }

  /**
   * Validates where the watch starts (throws ApiStatusError 400 for an unparsable resourceVersion,
   * before anything is written), then sends the 200 and starts streaming.
   */
  static open(request: WatchRequest): WatchSession {
    const session = new WatchSession(request, startOf(request.query));
    session.begin();
    return session;
  }

  /** The resource watched. */
  get resource(): Resource<KubeObject> {
    return this.request.resource;
  }

  /** False once the watch has ended. */
  get isOpen(): boolean {
    return !this.ended;
  }

  /** Ends the response cleanly (as on timeout). */
  end(): void {
    if (this.ended) return;
    this.writer.finish();
    // finish() may itself have ended the watch (a closeAfterEvents fault reached its count).
    if (this.ended) return;
    this.cleanup();
    this.request.response.end();
  }

  /** Drops the connection without ending the chunked body (a crash, a restart). */
  destroy(): void {
    if (this.ended) return;
    this.cleanup();
    this.request.response.destroy();
  }

  private cleanup(): void {
    if (this.ended) return;
    this.ended = true;
    this.writer.stop();
    this.timers.unsubscribe();
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.request.onEnd(this);
  }

  private begin(): void {
    const { response, store, resource, query } = this.request;
    response.on('close', () => this.cleanup());
    response.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache, private' });
    response.flushHeaders();

    const start = this.start;
    if (start.kind === 'from' && start.rv < store.currentRv) {
      const replay = store.watchCacheSince(resource, start.rv);
      if (replay === undefined) {
        // Past authentication and parameter parsing, errors travel as a watch ERROR event (B.6).
        const status = tooOldResourceVersion(start.rv, store.watchCacheOldestRv(resource));
        this.writer.send(watchLine('ERROR', JSON.stringify(status)));
        this.writer.endAfterQueued();
        return;
      }
      for (const event of replay) this.deliver(event);
    } else if (start.kind === 'initial-state') {
      const namespace = resource.namespaced ? this.request.namespace : undefined;
      const prefix = namespace === undefined ? undefined : `${namespace}/`;
      for (const entry of store.objectsAt(resource, store.currentRv)!) {
        if (prefix !== undefined && !entry.key.startsWith(prefix)) continue;
        if (query.selective && !query.matches(entry.object)) continue;
        const form = this.request.form;
        this.writer.send(form === undefined ? objectLine('ADDED', jsonOf(entry)) : watchLine('ADDED', form.single(entry)));
      }
      if (start.endBookmark) this.writer.send(this.bookmark(true));
    }
    const skipUpTo = start.kind === 'from' ? start.rv : 0;
    this.unsubscribe = store.subscribe(resource, (event) => {
      if (event.rv > skipUpTo) this.deliver(event);
    });
    this.startTimers();
    this.writer.begin();
  }

  private startTimers(): void {
    const { query, bookmarkIntervalMs } = this.request;
    // timeoutSeconds=0 means unset, as in handlers/get.go; a negative one has expired already.
    const seconds = query.timeoutSeconds ?? 0;
    const timeoutMs = seconds === 0 ? MIN_REQUEST_TIMEOUT_MS * (1 + Math.random()) : Math.max(0, seconds * 1000);
    this.timers.add(longTimeout(() => this.end(), timeoutMs));
    if (!query.allowWatchBookmarks) return;
    if (timeoutMs > BOOKMARK_BEFORE_TIMEOUT_MS) {
      this.timers.add(longTimeout(() => this.writer.send(this.bookmark(false)), timeoutMs - BOOKMARK_BEFORE_TIMEOUT_MS));
    }
    if (bookmarkIntervalMs > 0) {
      const interval = setInterval(() => this.writer.send(this.bookmark(false)), bookmarkIntervalMs);
      this.timers.add(() => clearInterval(interval));
    }
  }

  private bookmark(initialEventsEnd: boolean): WireLine {
    const { resource, store, form } = this.request;
    // A watch from a resourceVersion the store has not reached yet never bookmarks below it.
    const rv = Math.max(store.currentRv, this.start.kind === 'from' ? this.start.rv : 0);
    const annotations = initialEventsEnd ? `,"annotations":{"${INITIAL_EVENTS_END_ANNOTATION}":"true"}` : '';
    const object = `{"kind":"${resource.kind}","apiVersion":"${apiVersionOf(resource)}","metadata":{"resourceVersion":"${rv}"${annotations}}}`;
    // The API server converts bookmarks like any event object (`watchEmbeddedEncoder`); a Table prints it like any object of the kind.
    return watchLine('BOOKMARK', form === undefined ? object : form.single(JSON.parse(object) as KubeObject));
  }

  private send(event: StoreEvent, as: ChangeType | 'DELETED_PREV'): void {
    const form = this.request.form;
    if (form === undefined) {
      this.writer.send(eventLine(event, as));
      return;
    }
    if (as !== 'DELETED_PREV') {
      this.writer.send(watchLine(as, form.single(event.object)));
      return;
    }
    const prev = event.prev!.object;
    this.writer.send(watchLine('DELETED', form.single({ ...prev, metadata: { ...prev.metadata, resourceVersion: String(event.rv) } })));
  }

  private deliver(event: StoreEvent): void {
    const { namespace, query, resource } = this.request;
    if (resource.namespaced && namespace !== undefined && event.namespace !== namespace) return;
    if (!query.selective) {
      this.send(event, event.type);
      return;
    }
    const wasIn = event.prev !== undefined && query.matches(event.prev.object);
    if (event.type === 'DELETED') {
      if (wasIn) this.send(event, 'DELETED');
      return;
    }
    const isIn = query.matches(event.object.object);
    if (isIn) this.send(event, wasIn ? event.type : 'ADDED');
    else if (wasIn) this.send(event, 'DELETED_PREV');
  }
}
