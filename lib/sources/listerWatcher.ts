import type { Observable } from 'rxjs';
import type { KubeObject } from '../base/object';

/**
 * The seam between the informer and the API server. `list$`/`watch$` over HTTP implement it;
 * so can anything else (a file, a test double, another cluster), and the reflector and informer
 * work the same on top.
 */

/** Options of one list request (a Kubernetes `ListOptions`, list half). */
export interface ListOptions {
  readonly resourceVersion?: string;
  readonly resourceVersionMatch?: 'Exact' | 'NotOlderThan';
  /** Page size. Default 500. 0 means unpaged. */
  readonly limit?: number;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /** KEP-5866's `shardSelector` (`shardRange(object.metadata.uid, '0x…', '0x…') || …`); a server without the feature ignores it. */
  readonly shardSelector?: string;
  readonly timeoutSeconds?: number;
}

/** One page of a list. */
export interface ListPage<T extends KubeObject = KubeObject> {
  readonly items: readonly T[];
  /** The list's resourceVersion; the same on every page of one list. */
  readonly resourceVersion: string;
  /** True when no page follows. */
  readonly last: boolean;
  /** The server's estimate of the items still to come, when it gives one. */
  readonly remainingItemCount: number | undefined;
  /**
   * Items received so far in this list, this page included: with `remainingItemCount`, the
   * progress of a large list. Set by `list$`; other ListerWatchers may leave it out.
   */
  readonly itemsSoFar?: number;
  /**
   * What the server echoed of a `shardSelector` (`metadata.shardInfo`): present only when it
   * applied one (KEP-5866). Absent after a list with a `shardSelector` means the server ignored it.
   */
  readonly shardInfo?: { readonly selector: string };
}

/**
 * Which objects of a resource a list or watch covers: one namespace (or all when unset, and
 * always all for cluster-scoped resources), narrowed by label and field selectors.
 */
export interface WatchScope {
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /** KEP-5866's `shardSelector`: only objects whose hashed uid or namespace falls in its ranges (servers without the feature ignore it). */
  readonly shardSelector?: string;
}

/** Options of one watch request (a Kubernetes `ListOptions`, watch half). */
export interface WatchOptions {
  readonly resourceVersion?: string;
  readonly allowWatchBookmarks?: boolean;
  readonly timeoutSeconds?: number;
  readonly sendInitialEvents?: boolean;
  readonly resourceVersionMatch?: 'NotOlderThan';
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /** KEP-5866's `shardSelector`, as on lists. */
  readonly shardSelector?: string;
}

/** One watch event. ERROR events never appear here: they become a thrown `StatusError`. */
export interface WatchEvent<T extends KubeObject = KubeObject> {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';
  readonly object: T;
}

/**
 * A list/watch pair of cold Observable factories.
 * - `list` emits the pages of one consistent list, then completes; it errors with a typed
 *   `InformerError` (a 410 mid-way when the continue token expired).
 * - `watch` emits events until the server ends the stream (complete) or it fails (error).
 * Unsubscribing aborts the request.
 */
export interface ListerWatcher<T extends KubeObject = KubeObject> {
  /**
   * True when `watch` passes `sendInitialEvents` on to a Kubernetes API server, so that `reflect()`
   * tries streaming lists by default (it falls back to paged lists when the server cannot serve
   * them). `kubeListerWatcher` sets it; a test double that scripts only lists and plain watches
   * leaves it out (client-go's `IsWatchListSemanticsUnSupported`, the other way round).
   */
  readonly supportsStreamingList?: boolean;
  /** The pages of one consistent list; completes after the last page. */
  list(options: ListOptions): Observable<ListPage<T>>;
  /** The events of one watch; completes when the server ends it cleanly. */
  watch(options: WatchOptions): Observable<WatchEvent<T>>;
}
