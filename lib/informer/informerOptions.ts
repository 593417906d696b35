import type { SchedulerLike } from 'rxjs';
import type { Logger } from '../base/logger';
import type { KubeObject } from '../base/object';
import type { BackoffConfig } from '../reflector/backoff';
import type { IncrementalDecoding } from '../sources/list';
import type { MetadataOnlyOptions, PartialObjectMetadata } from '../sources/partialObjectMetadata';
import type { IndexFunc } from '../store/indexers';
import type { NamespaceSet } from './namespaceRuns';

/**
 * The options of the informer functions (`informer`, `informerFrom`, `informerFromNamespaces`):
 * declarations only, beside the functions they configure (informer.ts).
 */

/** Options of `informerFrom`: everything but where the objects come from. All optional. */
export interface InformerFromOptions<T extends KubeObject = KubeObject> {
  /** Names the informer in log lines and errors. Default: the resource (`pods`, `deployments.apps@ns`) or `'informer'`. */
  readonly name?: string;
  /** Named index functions. Default: the namespace index only (see `indexer`). */
  readonly indexers?: Readonly<Record<string, IndexFunc<T>>>;
  /**
   * Runs once per object before it is cached (and on the final state of a deleted one), e.g.
   * `dropManagedFields`. Must not mutate its input. An object it throws on is left out of the cache
   * (an update keeps the cached version), counted on `health$` and logged; the informer goes on.
   */
  readonly transform?: (object: T) => T;
  /**
   * Deep-freeze cached objects so that mutating one throws. Default false: freezing walks every
   * new object again after its parse (docs/PERFORMANCE.md, "Freezing"); an update shared with its
   * cached version freezes only its changed paths (see `indexer`).
   */
  readonly freeze?: boolean;
  /**
   * Share the unchanged subtrees of each update with the cached version it replaces, so that
   * `oldObject.spec === object.spec` exactly when the spec did not change and the cache keeps
   * only changed paths, and give all cached objects one frozen `{}` for their empty objects
   * (see `shareUnchanged`). Default true; it costs one walk of each stored object.
   */
  readonly shareUnchanged?: boolean;
  /**
   * List with a streaming list (`sendInitialEvents`, served by API servers from 1.34, and from
   * 1.27 where the WatchList gate is on), falling back to paged lists where it cannot be served.
   * Default: on for `informer()`, and for `informerFrom` when the lister-watcher says it supports
   * streaming lists (`supportsStreamingList`), as client-go does since 1.35.
   */
  readonly streamingList?: boolean;
  /**
   * Runs every timer: backoff, idle timeout, handler resync. Default `asyncScheduler`. It also
   * closes each batch of watch deltas with an action of 0 ms (see `IndexerBatchConfig`); left
   * unset, a microtask (`asapScheduler`) does, so the events of one network chunk make one
   * snapshot. In virtual time the events of one instant make one snapshot.
   */
  readonly scheduler?: SchedulerLike;
  /**
   * Where log lines go (pino-compatible). Default `defaultLogger`: warnings and errors (retried
   * failures, failures that need a person, objects that cannot be cached, throwing handlers) to
   * stderr, one line each; `silentLogger` for none.
   */
  readonly logger?: Logger;
  /** Retry delays. Default client-go's: 800 ms doubling to a 30 s cap, each wait drawn from [d, 2d), reset after 2 min healthy. */
  readonly backoff?: BackoffConfig;
  /**
   * Retry delays while the resource is not served: a 404 on its list or watch (its
   * CustomResourceDefinition deleted, or not installed yet), shown on `health$` as a
   * `ResourceGoneError` (`lastError.kind === 'resourceGone'`) until the resource is served again
   * and the informer resumes with a new list. Default 5 s doubling to a 2 min cap, each wait drawn
   * from [d, 2d): at most one list every 2 to 4 min while it lasts.
   */
  readonly resourceGoneBackoff?: BackoffConfig;
  /**
   * Items per list page. Default 500 (client-go's). A page is parsed in one piece, so smaller
   * pages shorten the longest event-loop stall of a large sync and lower its peak memory, for a
   * little more sync time (docs/guides/memory.md; docs/PERFORMANCE.md, "What limits what").
   */
  readonly pageSize?: number;
  /**
   * Server-side watch timeout, drawn per watch in [min, max) seconds (client-go's spread, so many
   * informers do not reconnect in step). Default [300, 600). The idle timeout is this plus 5 s.
   */
  readonly watchTimeoutSeconds?: { readonly min: number; readonly max: number };
  /** Bounded wait (ms) for a streaming list's initial-events-end bookmark. Default 60 000. */
  readonly initialEventsTimeoutMs?: number;
  /** A list page that takes longer than this (ms) means a dead connection: retry. Default 60 000. */
  readonly listPageTimeoutMs?: number;
  /** Default resync period (ms) of handlers added with `informer.handle()`. Default 0 (never). */
  readonly resyncPeriod?: number;
  /**
   * How long (ms) the watch and the cache outlive their last subscriber: a subscriber that comes
   * back within it finds the running cache instead of starting a new list. Default 0: they stop
   * when the current task ends (a timer of 0 ms), which is enough for a resubscription in the same
   * tick and for `await waitForSync([informer])` followed by a subscription. Longer keeps the
   * request and the cache (and the process) alive that much longer after everyone has left.
   */
  readonly gracePeriodMs?: number;
}

/** Options of `informer`: the scope of the watch, and everything `informerFrom` takes. */
export interface InformerOptions<T extends KubeObject = KubeObject> extends InformerFromOptions<T> {
  /** Watch one namespace. Default: all namespaces (ignored for cluster-scoped resources). */
  readonly namespace?: string;
  /** Server-side label selector (`app=web,tier!=db`). */
  readonly labelSelector?: string;
  /** Server-side field selector (`spec.nodeName=node-1`). */
  readonly fieldSelector?: string;
  /**
   * Request the next list page while this one is received and parsed. Default true: it hides one
   * round trip and the API server's time per page. Turn it off when the API server runs on the
   * client's own cores (a local cluster): see docs/PERFORMANCE.md.
   */
  readonly listReadAhead?: boolean;
  /** Leave the server's bytes out of ProtocolError excerpts. Default: true for core `secrets` only. */
  readonly withholdExcerpts?: boolean;
  /**
   * Ask for gzip-compressed lists and watches (`Accept-Encoding: gzip`), as client-go does.
   * Default true. It saves most of the bytes of a large list at the cost of the API server's CPU
   * time spent compressing: turn it off when the API server is near (a local cluster); see
   * docs/PERFORMANCE.md, "Compression".
   */
  readonly compression?: boolean;
  /**
   * When a list response is decoded as it arrives instead of parsed whole: past 3 MiB, in pages of
   * 256 KiB by default (see `IncrementalDecoding`). A lower `afterChars` decodes ordinary pages
   * that way too, for shorter stalls.
   */
  readonly incrementalDecoding?: IncrementalDecoding;
  /**
   * Default false: cache whole objects. Set it (to `true`, or to what to keep of the metadata) to
   * cache objects' metadata only: see {@link MetadataInformerOptions}.
   */
  readonly metadataOnly?: false;
}

/**
 * Options of a metadata-only `informer`: `metadataOnly` set, and everything else typed for
 * the {@link PartialObjectMetadata} the cache holds (index functions, transform).
 */
export interface MetadataInformerOptions extends Omit<InformerOptions<PartialObjectMetadata>, 'metadataOnly'> {
  /**
   * Ask for and cache objects' metadata only (`PartialObjectMetadata`, see `metadataListerWatcher`),
   * as client-go's `metadatainformer` does: `true`, or what to keep of each object's metadata
   * (default: all but `managedFields`). The informer is an `Informer<PartialObjectMetadata>`, and
   * its default name has a ` (metadata)` suffix (`pods@default (metadata)`).
   */
  readonly metadataOnly: true | MetadataOnlyOptions;
}

/**
 * The set of namespaces `informer()` may watch instead of one (`namespace`) or all. Apart from
 * {@link InformerOptions}, which other informers extend (a sharded informer's options) without
 * watching a set.
 */
export interface InformerNamespacesOptions {
  /**
   * Watch a set of namespaces, into one cache with one index: a list of names, or an Observable of
   * lists, each of which replaces the set while the informer runs. Not with `namespace`, and for
   * namespaced resources only. One list and watch per namespace (the API server has no selector
   * for a set); a relist of one namespace replaces only its objects; the cache is synced once every
   * namespace has listed. A namespace added later arrives as adds, one removed leaves as deletes,
   * both marked `namespaceSet`. `health$` shows the least healthy watch, `metrics$` every watch.
   * The cache always has the namespace index (added to the `indexers` given when they lack it):
   * relists of a namespace read it. See `informerFromNamespaces` (rx-informer/pipeline).
   */
  readonly namespaces?: NamespaceSet;
}
