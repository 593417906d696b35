import type { IncomingMessage } from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { Observable } from 'rxjs';
import type { KubeObject } from '../store/object';
import { apiVersionOf, resourcePath, type Resource } from '../resources/resource';
import { excerptGuard, ProtocolError } from './errors';
import type { ListOptions, ListPage, Scope } from './listerWatcher';
import { excerptOf, statusErrorFromResponse } from './statusError';
import { encodeQuery, isJsonContentType, kubeRequest, readBody, readText } from './transport';

/**
 * Options of {@link list$}: the list query and its scope.
 *
 * ## Example
 * ```ts
 * const options: ListStreamOptions = { namespace: 'default', labelSelector: 'app=web', limit: 100 };
 * ```
 */
export interface ListStreamOptions extends ListOptions, Scope {
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
}

/**
 * The page size when `limit` is unset: client-go's pager default, big enough to keep requests few
 * and small enough to bound a page (500 pods of ~4 KB: ~2 MB).
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
  readonly metadata?: { readonly resourceVersion?: unknown; readonly continue?: unknown; readonly remainingItemCount?: unknown } | null;
  readonly items?: unknown;
}

/**
 * Lists a resource page by page: `limit` items per request, following `continue` tokens until
 * the last page, each page emitted as soon as it arrives so that a large list is never held twice.
 *
 * A cold Observable: each subscription runs its own list and unsubscribing aborts the requests in
 * flight. It reads one page ahead: the API server writes a page's `metadata` (with its continue
 * token) before its items, so the next page is requested as soon as that head has arrived, and
 * the server prepares it while this one is still being received and parsed. That hides one round
 * trip and the server's time per page; at most two pages are in flight. The whole page is the
 * authority: a read-ahead whose token the finished page contradicts is aborted and the right page
 * asked for, and a body whose head cannot be read is simply followed page after page.
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
 * 1. Pages after the first send only `continue`, `limit` and the selectors: the token carries the
 *    resourceVersion, and the server rejects one sent beside it.
 * 2. Items lacking `kind`/`apiVersion` (the API leaves them out of lists) get the resource's.
 * 3. Progress: every page carries `itemsSoFar` and the server's `remainingItemCount`.
 * 4. Failures are typed errors and end the list: StatusError for an HTTP error (410 when the
 *    continue token expired: relist from scratch), NetworkError, ProtocolError (`non-json-body`,
 *    `not-a-list`, `missing-metadata`), ConfigError. It never retries: that is the reflector's job.
 *
 * ## Example
 * ```ts
 * list$(kubeConfig, pods, { namespace: 'default', labelSelector: 'app=web', limit: 100 })
 *   .subscribe((page) => console.log(`${page.itemsSoFar} of ~${page.itemsSoFar + (page.remainingItemCount ?? 0)}`));
 * ```
 * @param kubeConfig the cluster and credentials, as client-node loaded them.
 * @param resource the resource type to list.
 * @param options the list query (`limit` defaults to 500; 0 asks for everything at once) and scope.
 * @returns the pages of one list, then completes.
 */
export function list$<T extends KubeObject = KubeObject>(
  kubeConfig: KubeConfig,
  resource: Resource<T>,
  options: ListStreamOptions = {},
): Observable<ListPage<T>> {
  return new Observable<ListPage<T>>((subscriber) => {
    const path = resourcePath(resource, { namespace: options.namespace });
    const apiVersion = apiVersionOf(resource);
    const inFlight = new Set<PageRequest<T>>();
    const accept = options.accept === undefined ? undefined : { Accept: options.accept };
    let itemsSoFar = 0;

    /** Starts the request for one page; it reads ahead (starts the next one) once it sees its token. */
    const request = (continueToken: string | undefined): PageRequest<T> => {
      const controller = new AbortController();
      const pageRequest: PageRequest<T> = { continueToken, controller, response: undefined, readAhead: undefined, done: undefined as unknown as Promise<ParsedPage<T>> };
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
      const res = await kubeRequest(kubeConfig, { path, query: listQuery(options, pageRequest.continueToken), signal: pageRequest.controller.signal, headers: accept });
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
      const body = await readText(res, path, undefined, (textSoFar) => {
        if (!looking) return;
        const head = continueTokenOfHead(textSoFar);
        if (head === null && textSoFar.length < HEAD_SEARCH_CHARS) return;
        looking = false;
        if (typeof head === 'string' && options.readAhead !== false) readAhead(head);
      });
      pageRequest.response = undefined;
      return toPage<T>(body, path, resource.kind, apiVersion);
    };

    // A loop, not a recursion: an async call awaiting the next page would keep its own frame (and
    // so its page's text, megabytes each) alive until the whole list ends.
    const fetchAll = async (): Promise<void> => {
      let current: PageRequest<T> | undefined = request(undefined);
      while (current !== undefined) {
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
    timeoutSeconds: options.timeoutSeconds,
  });
}

/** Parses and checks one page; `next` is the continue token of the page after it. */
function toPage<T extends KubeObject>(
  body: string,
  path: string,
  kind: string,
  apiVersion: string,
): ParsedPage<T> {
  let list: RawList;
  try {
    list = JSON.parse(body) as RawList;
  } catch {
    throw new ProtocolError('non-json-body', `the list of ${path} is not JSON`, excerptOf(body.slice(0, 1000)));
  }
  if (typeof list !== 'object' || list === null || (list.kind !== undefined && !(typeof list.kind === 'string' && list.kind.endsWith('List')))) {
    throw new ProtocolError('not-a-list', `the list of ${path} answered a ${describeKind(list)}, not a list`);
  }
  const items = list.items === null ? [] : list.items;
  if (!Array.isArray(items)) throw new ProtocolError('not-a-list', `the list of ${path} has no items array`);
  for (const item of items as { kind?: unknown; apiVersion?: unknown; metadata?: unknown }[]) {
    if (!hasName(item)) {
      throw new ProtocolError('missing-metadata', `the list of ${path} holds an item without metadata.name`, excerptOf(JSON.stringify(item) ?? ''));
    }
    // Freshly parsed and not yet shared: completing them in place costs no copy.
    if (item.kind === undefined) item.kind = kind;
    if (item.apiVersion === undefined) item.apiVersion = apiVersion;
  }
  const metadata = typeof list.metadata === 'object' && list.metadata !== null ? list.metadata : {};
  const next = typeof metadata.continue === 'string' && metadata.continue !== '' ? metadata.continue : undefined;
  const page = {
    items: items as T[],
    resourceVersion: typeof metadata.resourceVersion === 'string' ? metadata.resourceVersion : '',
    last: next === undefined,
    remainingItemCount: typeof metadata.remainingItemCount === 'number' ? metadata.remainingItemCount : undefined,
  };
  return { page, next };
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
