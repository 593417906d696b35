import type { IncomingMessage } from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { Observable } from 'rxjs';
import type { KubeObject } from '../base/object';
import { apiVersionOf, resourcePath, type Resource } from '../resources/resource';
import { excerptGuard, ProtocolError } from '../base/errors';
import type { ListOptions, ListPage, WatchScope } from './listerWatcher';
import { readListBody } from './listBody';
import { excerptOf, statusErrorFromResponse } from './statusError';
import { encodeQuery, isJsonContentType, kubeRequest, readBody, responseBody } from './transport';

/**
 * Options of {@link list$}: the list query and its scope.
 *
 * ## Example
 * ```ts
 * import type { KubeConfig } from '@kubernetes/client-node';
 * import { pods } from 'rx-informer';
 * import { list$, type ListStreamOptions } from 'rx-informer/pipeline';
 *
 * declare const kubeConfig: KubeConfig;
 * const options: ListStreamOptions = { namespace: 'default', labelSelector: 'app=web', limit: 100 };
 * list$(kubeConfig, pods, options).subscribe((page) => console.log(page.items.length));
 * ```
 */
export interface ListStreamOptions extends ListOptions, WatchScope {
  /**
   * Leave the server's bytes out of ProtocolError excerpts (the message says they were withheld),
   * so a malformed item cannot carry an object's data into logs. Default: true for core
   * `secrets`, false otherwise.
   */
  readonly withholdExcerpts?: boolean;
  /**
   * Request the next page as soon as this page's head names its continue token (see {@link list$}).
   * Default true. Turn it off to list one page after another, as client-go does: when the API
   * server shares the client's CPU cores (a local kind or minikube cluster), its work on the next
   * page then never competes with the client's garbage collector.
   */
  readonly readAhead?: boolean;
  /**
   * The request's `Accept` header. Default `application/json`. Metadata-only lists ask for
   * `PartialObjectMetadataList` with it (see `metadataListerWatcher`); the answer must still be JSON.
   */
  readonly accept?: string;
  /**
   * Ask for gzip-compressed responses (`Accept-Encoding: gzip`), as client-go does. Default true.
   * The API server compresses a response over 128 KiB: far fewer bytes on the wire, paid for in
   * the API server's CPU time (this process's barely changes). Next to the API server (a local
   * cluster), where the bytes cost nothing to move, turn it off: see docs/PERFORMANCE.md,
   * "Compression". A gzip body is decoded either way.
   */
  readonly compression?: boolean;
  /** When a response is decoded as it arrives instead of parsed whole. Defaults: {@link IncrementalDecoding}. */
  readonly incrementalDecoding?: IncrementalDecoding;
}

/**
 * When and how {@link list$} decodes a list response as it arrives instead of parsing it whole:
 * an API server before Kubernetes 1.34 answers the informer's first list (resourceVersion "0")
 * from its watch cache, which ignores `limit`, so the whole collection comes in one response.
 *
 * ## Example
 * ```ts
 * import type { KubeConfig } from '@kubernetes/client-node';
 * import { informer, pods, type IncrementalDecoding } from 'rx-informer';
 *
 * declare const kubeConfig: KubeConfig;
 * // Shorter event-loop turns for a first list that arrives in one response, for more JSON.parse calls.
 * const incrementalDecoding: IncrementalDecoding = { batchChars: 64 * 1024 };
 * const podInformer = informer(kubeConfig, pods, { incrementalDecoding });
 * ```
 */
export interface IncrementalDecoding {
  /**
   * A response longer than this many characters is decoded as it arrives; a shorter one (such as
   * a default page of 500 ordinary pods) is parsed whole, with one `JSON.parse`, when it has
   * arrived. Default 3 MiB (3 × 1024 × 1024 characters).
   */
  readonly afterChars?: number;
  /**
   * Items are parsed in batches of at least this many characters, one `JSON.parse` and one
   * emitted page each: the batch bounds the work of one event-loop turn. Default
   * 256 KiB (256 × 1024 characters).
   */
  readonly batchChars?: number;
}

/**
 * The defaults of {@link IncrementalDecoding}: past 3 MiB a response is decoded as it arrives, in
 * batches of 256 KiB. The threshold sits above a default 500-item page of pods, so paged lists are
 * parsed whole as before; the batch is the smallest that costs no more CPU in all, and a larger
 * one lengthens the longest event-loop turn. Decoding pages too (`afterChars: 256 * 1024`)
 * shortens a paged sync's longest turn and its peak RSS for a little more CPU time: worth it
 * where stalls matter. The figures behind each choice: docs/PERFORMANCE.md, "Lists in one
 * response".
 *
 * ## Example
 * ```ts
 * list$(kubeConfig, pods, { incrementalDecoding: { ...defaultIncrementalDecoding, afterChars: 256 * 1024 } });
 * ```
 */
export const defaultIncrementalDecoding: Required<IncrementalDecoding> = { afterChars: 3 * 1024 * 1024, batchChars: 256 * 1024 };

/**
 * The page size when `limit` is unset: client-go's pager default, big enough to keep requests few
 * and small enough to bound a page (a few megabytes of ordinary pods).
 *
 * ## Example
 * ```ts
 * list$(kubeConfig, pods, { limit: defaultPageSize * 2 });
 * ```
 */
export const defaultPageSize = 500;

/** A list body as parsed, before it is checked. */
interface RawList {
  readonly kind?: unknown;
  readonly metadata?: { readonly resourceVersion?: unknown; readonly continue?: unknown; readonly remainingItemCount?: unknown; readonly shardInfo?: { readonly selector?: unknown } | null } | null;
  readonly items?: unknown;
}

/**
 * Lists a resource page by page: `limit` items per request, following `continue` tokens until
 * the last page, each page emitted as soon as it arrives so that a large list is never held twice.
 *
 * A cold Observable: each subscription runs its own list and unsubscribing aborts the requests in
 * flight. It reads one page ahead: the API server writes a page's `metadata` (with its continue
 * token) before its items, so the next page is requested as soon as that head has arrived, and the
 * server prepares it while this one is still being received and parsed. That hides one round trip
 * and the server's time to answer per page; at most two pages are in flight. The page read ahead is
 * not read before its turn: its body stays paused (TCP backpressure holds the server's writes)
 * until the pages before it are emitted, so its text and items are never held beside theirs (they
 * would outlive the scavenges of the page before and die in the old generation, raising the bytes
 * promoted and the peak RSS: docs/performance-notes.md, "The paged 100k sync's longest stall").
 * The whole page is the authority: a read-ahead whose token the finished page contradicts is
 * aborted and the right page asked for, and a body whose head cannot be read is simply followed
 * page after page.
 *
 * ```
 * server:  page 1 (continue=t1) ── page 2 (continue=t2) ── page 3 (last)
 * requests: 1──2(on p1's head)──3(on p2's head)
 * list$:   ──p1─────────────────────p2─────────────────────p3|
 *
 * server:  page 1 (continue=t1) ── 410 Expired (token too old)
 * list$:   ──p1─────────────────────#  StatusError (code 410)
 * ```
 *
 * A response of any size is fine. One up to `incrementalDecoding.afterChars` (3 MiB, above a
 * default page of pods) is parsed whole when it has arrived. A longer one (the API server's watch
 * cache answers a list at resourceVersion "0" with the whole collection, ignoring `limit`) is
 * decoded as it arrives and emitted in pages of about `incrementalDecoding.batchChars` (256 KiB),
 * one `JSON.parse` each, so it is never held as one string (V8's longest is 2^29 − 24 characters)
 * and no event-loop turn handles more than one such page:
 *
 * ```
 * server:  one response of 100k pods ──────────────────────────────────────|
 * list$:   ──p(60)──p(60)──p(60)── … ──p(last, last: true)|   every page at the list's RV
 * ```
 *
 * 1. Pages after the first send only `continue`, `limit` and the selectors: the token carries the
 *    resourceVersion, and the server rejects one sent beside it.
 * 2. Items lacking `kind`/`apiVersion` (the API leaves them out of lists) get the resource's.
 * 3. Progress: every page carries `itemsSoFar`, and the server's `remainingItemCount` where the
 *    server's page ends (the parts of a response decoded as it arrives leave it undefined).
 * 4. Every page carries the list's resourceVersion, which the API server writes before the items;
 *    a response that writes it after them is emitted at its end, in one page.
 * 5. Responses are gzip-compressed when the server offers it (`compression`, default on, as in
 *    client-go) and decompressed as they arrive.
 * 6. Failures are typed errors and end the list: StatusError for an HTTP error (410 when the
 *    continue token expired: relist from scratch), NetworkError, ProtocolError (`non-json-body`,
 *    also for gzip that does not decompress; `not-a-list`, `missing-metadata`), ConfigError. It
 *    never retries: that is the reflector's job. A page already emitted stays emitted: a failure
 *    inside a long response comes after the pages of it that were good.
 *
 * ## Example
 * ```ts
 * import type { KubeConfig } from '@kubernetes/client-node';
 * import { pods } from 'rx-informer';
 * import { list$ } from 'rx-informer/pipeline';
 *
 * declare const kubeConfig: KubeConfig;
 * list$(kubeConfig, pods, { namespace: 'default', labelSelector: 'app=web', limit: 100 })
 *   .subscribe((page) => {
 *     const soFar = page.itemsSoFar ?? 0; // list$ sets it on every page
 *     console.log(`${soFar} of ~${soFar + (page.remainingItemCount ?? 0)}`);
 *   });
 * ```
 * @param kubeConfig the cluster and credentials, as client-node loaded them.
 * @param resource the resource type to list.
 * @param options the list query (`limit` defaults to 500; 0 asks for everything at once), scope,
 *   read-ahead, compression and incremental decoding.
 * @returns the pages of one list, then completes.
 * @throws RangeError at call time for `incrementalDecoding` settings below 0 (`afterChars`) or 1 (`batchChars`).
 */
export function list$<T extends KubeObject = KubeObject>(
  kubeConfig: KubeConfig,
  resource: Resource<T>,
  options: ListStreamOptions = {},
): Observable<ListPage<T>> {
  const afterChars = options.incrementalDecoding?.afterChars ?? defaultIncrementalDecoding.afterChars;
  const batchChars = options.incrementalDecoding?.batchChars ?? defaultIncrementalDecoding.batchChars;
  if (!(afterChars >= 0) || !(batchChars >= 1)) throw new RangeError(`list$ incremental decoding needs afterChars >= 0 and batchChars >= 1, got ${afterChars} and ${batchChars}`);
  return new Observable<ListPage<T>>((subscriber) => {
    const path = resourcePath(resource, { namespace: options.namespace });
    const apiVersion = apiVersionOf(resource);
    const inFlight = new Set<PageRequest<T>>();
    const accept = options.accept === undefined ? undefined : { Accept: options.accept };
    let itemsSoFar = 0;

    /** Starts the request for one page; it reads ahead (starts the next one) once it sees its token. */
    const request = (continueToken: string | undefined): PageRequest<T> => {
      const controller = new AbortController();
      let reach: () => void = () => undefined;
      const reached = new Promise<void>((resolve) => (reach = resolve));
      const pageRequest: PageRequest<T> = { continueToken, controller, response: undefined, readAhead: undefined, current: false, reached, reach, done: undefined as unknown as Promise<ParsedPage<T>> };
      inFlight.add(pageRequest);
      const readAhead = (next: string): void => {
        if (pageRequest.readAhead === undefined && !subscriber.closed) pageRequest.readAhead = request(next);
      };
      pageRequest.done = fetchPage(pageRequest, readAhead).finally(() => inFlight.delete(pageRequest));
      // A page read ahead may fail before it is awaited; its error is rethrown when it is.
      pageRequest.done.catch(() => undefined);
      return pageRequest;
    };

    /** Requests, reads and parses one page; keeps nothing of it once returned. */
    const fetchPage = async (pageRequest: PageRequest<T>, readAhead: (next: string) => void): Promise<ParsedPage<T>> => {
      const res = await kubeRequest(kubeConfig, { path, query: listQuery(options, pageRequest.continueToken), signal: pageRequest.controller.signal, compression: options.compression, headers: accept });
      pageRequest.response = res;
      const statusCode = res.statusCode ?? 0;
      if (statusCode < 200 || statusCode > 299) {
        throw statusErrorFromResponse(statusCode, res.headers, await readBody(res, path, 64 * 1024), `GET ${path}`);
      }
      if (!isJsonContentType(res.headers['content-type'])) {
        const body = await readBody(res, path, 64 * 1024);
        throw new ProtocolError('non-json-body', `the list of ${path} answered ${String(res.headers['content-type'])}, not JSON`, excerptOf(body.toString('utf8', 0, 1000)));
      }
      let looking = true;
      // Items handed over before the list named its resourceVersion (its metadata came after them).
      let early: T[] | undefined;
      const list = await readListBody(responseBody(res, path), {
        path,
        wholeBodyChars: afterChars,
        batchChars,
        turn: { now: () => pageRequest.current, promise: pageRequest.reached },
        onProgress: (textSoFar) => {
          if (!looking) return;
          const head = continueTokenOfHead(textSoFar);
          if (head === null && textSoFar.length < HEAD_SEARCH_CHARS) return;
          looking = false;
          if (typeof head === 'string' && options.readAhead !== false) readAhead(head);
        },
        onItems: (items, head) => {
          checkList(head, path);
          const checked = checkItems<T>(items, path, resource.kind, apiVersion);
          const resourceVersion = metadataOf(head).resourceVersion;
          if (typeof resourceVersion !== 'string' || early !== undefined) {
            early ??= [];
            for (const item of checked) early.push(item);
          } else if (!subscriber.closed) {
            itemsSoFar += checked.length;
            subscriber.next({ items: checked, resourceVersion, last: false, remainingItemCount: undefined, itemsSoFar, ...shardInfoOf(metadataOf(head)) });
          }
        },
      });
      pageRequest.response = undefined;
      return toPage<T>(list, path, resource.kind, apiVersion, early);
    };

    // A loop, not a recursion: an async call awaiting the next page would keep its own frame (and
    // so its page's text, megabytes each) alive until the whole list ends.
    const fetchAll = async (): Promise<void> => {
      let current: PageRequest<T> | undefined = request(undefined);
      while (current !== undefined) {
        current.current = true;
        current.reach();
        const { page: parsed, next } = await current.done;
        const readAhead: PageRequest<T> | undefined = current.readAhead;
        if (subscriber.closed) return;
        let following: PageRequest<T> | undefined;
        if (next !== undefined) {
          // The token read from the page's head is the one its end confirms; if not, ask again.
          if (readAhead !== undefined && readAhead.continueToken === next) following = readAhead;
          else {
            readAhead?.controller.abort();
            following = request(next);
          }
        } else {
          readAhead?.controller.abort();
        }
        itemsSoFar += parsed.items.length;
        subscriber.next({ ...parsed, itemsSoFar });
        current = following;
      }
      subscriber.complete();
    };

    const guard = excerptGuard(resource, options.withholdExcerpts);
    fetchAll().catch((error: unknown) => {
      if (!subscriber.closed) subscriber.error(guard(error));
    });

    return () => {
      for (const pageRequest of inFlight) {
        pageRequest.controller.abort();
        pageRequest.response?.destroy();
      }
      inFlight.clear();
    };
  });
}

/** A page parsed, before its position in the list (`itemsSoFar`) is known. */
interface ParsedPage<T extends KubeObject> {
  readonly page: Omit<ListPage<T>, 'itemsSoFar'>;
  readonly next: string | undefined;
}

/** One page request in flight. */
interface PageRequest<T extends KubeObject> {
  readonly continueToken: string | undefined;
  readonly controller: AbortController;
  response: IncomingMessage | undefined;
  /** The next page's request, started as soon as this page's head named its continue token. */
  readAhead: PageRequest<T> | undefined;
  /** The list has reached this page: it may emit the items it decodes as they arrive. */
  current: boolean;
  readonly reached: Promise<void>;
  readonly reach: () => void;
  done: Promise<ParsedPage<T>>;
}

/** How far into a page to look for its head (kind, apiVersion, metadata) before giving up. */
const HEAD_SEARCH_CHARS = 64 * 1024;

/**
 * The continue token a list body names before its items, read from the first bytes of the body:
 * the API server writes `kind`, `apiVersion` and `metadata` (with `continue`) before `items`, so
 * the next page can be requested while this one is still arriving. Returns the token; undefined
 * when the head names none (the last page) or cannot be read (then nothing is read ahead); null
 * while the head has not fully arrived.
 */
function continueTokenOfHead(textSoFar: string): string | undefined | null {
  const itemsAt = textSoFar.indexOf('"items":');
  if (itemsAt === -1) return null;
  const head = textSoFar.slice(0, itemsAt).trimEnd();
  if (!head.endsWith(',')) return undefined;
  try {
    const parsed = JSON.parse(`${head.slice(0, -1)}}`) as RawList;
    const token = typeof parsed === 'object' && parsed !== null ? parsed.metadata?.continue : undefined;
    return typeof token === 'string' && token !== '' ? token : undefined;
  } catch {
    return undefined;
  }
}

/** The query of one page request; parameters left unset stay out of the URL. */
function listQuery(options: ListOptions, continueToken: string | undefined): string {
  const limit = options.limit ?? defaultPageSize;
  return encodeQuery({
    limit: limit > 0 ? limit : undefined,
    continue: continueToken,
    resourceVersion: continueToken === undefined ? options.resourceVersion : undefined,
    resourceVersionMatch: continueToken === undefined ? options.resourceVersionMatch : undefined,
    labelSelector: options.labelSelector === '' ? undefined : options.labelSelector,
    fieldSelector: options.fieldSelector === '' ? undefined : options.fieldSelector,
    shardSelector: options.shardSelector === '' ? undefined : options.shardSelector,
    timeoutSeconds: options.timeoutSeconds,
  });
}

/**
 * Checks one page, parsed; `next` is the continue token of the page after it. `early` are items
 * of the same response already checked, which come first.
 */
function toPage<T extends KubeObject>(list: unknown, path: string, kind: string, apiVersion: string, early?: T[]): ParsedPage<T> {
  checkList(list, path);
  const raw = list as RawList;
  const items = raw.items === null ? [] : raw.items;
  if (!Array.isArray(items)) throw new ProtocolError('not-a-list', `the list of ${path} has no items array`);
  const checked = checkItems<T>(items, path, kind, apiVersion);
  const metadata = metadataOf(raw);
  const next = typeof metadata.continue === 'string' && metadata.continue !== '' ? metadata.continue : undefined;
  const page = {
    items: early === undefined ? checked : early.concat(checked),
    resourceVersion: typeof metadata.resourceVersion === 'string' ? metadata.resourceVersion : '',
    last: next === undefined,
    remainingItemCount: typeof metadata.remainingItemCount === 'number' ? metadata.remainingItemCount : undefined,
    ...shardInfoOf(metadata),
  };
  return { page, next };
}

/** The list's `metadata.shardInfo` (KEP-5866), as a page carries it: absent unless the server applied a shard selector. */
function shardInfoOf(metadata: NonNullable<RawList['metadata']>): { readonly shardInfo?: { readonly selector: string } } {
  const selector = metadata.shardInfo?.selector;
  return typeof selector === 'string' ? { shardInfo: { selector } } : {};
}

/** Throws unless `list` is an object that may be a list: no `kind`, or one ending in `List`. */
function checkList(list: unknown, path: string): void {
  if (Array.isArray(list)) throw new ProtocolError('not-a-list', `the list of ${path} answered a JSON array, not a list object with items`);
  const kindOf = typeof list === 'object' && list !== null ? (list as RawList).kind : undefined;
  if (typeof list !== 'object' || list === null || (kindOf !== undefined && !(typeof kindOf === 'string' && kindOf.endsWith('List')))) {
    throw new ProtocolError('not-a-list', `the list of ${path} answered a ${describeKind(list)}, not a list`);
  }
}

/** The list's metadata, or an empty one. */
function metadataOf(list: unknown): NonNullable<RawList['metadata']> {
  const metadata = (list as RawList).metadata;
  return typeof metadata === 'object' && metadata !== null ? metadata : {};
}

/** Checks that every item has a name, completing `kind` and `apiVersion` (the API leaves them out of lists). */
function checkItems<T extends KubeObject>(items: unknown[], path: string, kind: string, apiVersion: string): T[] {
  for (const item of items as { kind?: unknown; apiVersion?: unknown; metadata?: unknown }[]) {
    if (!hasName(item)) {
      throw new ProtocolError('missing-metadata', `the list of ${path} holds an item without metadata.name`, excerptOf(JSON.stringify(item) ?? ''));
    }
    // Freshly parsed and not yet shared: completing them in place costs no copy.
    if (item.kind === undefined) item.kind = kind;
    if (item.apiVersion === undefined) item.apiVersion = apiVersion;
  }
  return items as T[];
}

function describeKind(value: unknown): string {
  if (typeof value !== 'object' || value === null) return typeof value;
  const kind = (value as { kind?: unknown }).kind;
  return typeof kind === 'string' ? excerptOf(kind) : 'object without kind';
}

/** True when the value is an object with a non-empty string `metadata.name`: it has a cache key. */
function hasName(item: unknown): boolean {
  if (typeof item !== 'object' || item === null) return false;
  const metadata = (item as { metadata?: unknown }).metadata;
  if (typeof metadata !== 'object' || metadata === null) return false;
  const name = (metadata as { name?: unknown }).name;
  return typeof name === 'string' && name !== '';
}
