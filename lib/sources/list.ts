import type { IncomingMessage } from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node';
import { Observable } from 'rxjs';
import type { KubeObject } from '../store/object';
import { apiVersionOf, resourcePath, type Resource } from '../resource';
import { ProtocolError } from './errors';
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
export interface ListStreamOptions extends ListOptions, Scope {}

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
 * A cold Observable: each subscription runs its own list and unsubscribing aborts the request in
 * flight. The next page is requested only after the current one has been emitted.
 *
 * ```
 * server:  page 1 (continue=t1) ── page 2 (continue=t2) ── page 3 (last)
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
    const controller = new AbortController();
    const path = resourcePath(resource, { namespace: options.namespace });
    const apiVersion = apiVersionOf(resource);
    let response: IncomingMessage | undefined;
    let itemsSoFar = 0;

    /** Requests, reads and parses one page; keeps nothing of it once returned. */
    const fetchPage = async (continueToken: string | undefined): Promise<{ page: ListPage<T>; next: string | undefined }> => {
      const res = await kubeRequest(kubeConfig, { path, query: listQuery(options, continueToken), signal: controller.signal });
      response = res;
      const statusCode = res.statusCode ?? 0;
      if (statusCode < 200 || statusCode > 299) {
        const body = await readBody(res, path, 64 * 1024);
        response = undefined;
        throw statusErrorFromResponse(statusCode, res.headers, body);
      }
      const body = await readText(res, path);
      response = undefined;
      if (!isJsonContentType(res.headers['content-type'])) {
        throw new ProtocolError('non-json-body', `the list of ${path} answered ${String(res.headers['content-type'])}, not JSON`, excerptOf(body.slice(0, 1000)));
      }
      return toPage<T>(body, path, resource.kind, apiVersion, itemsSoFar);
    };

    // A loop, not a recursion: an async call awaiting the next page would keep its own frame (and
    // so its page's text, megabytes each) alive until the whole list ends.
    const fetchAll = async (): Promise<void> => {
      let continueToken: string | undefined;
      do {
        const { page, next } = await fetchPage(continueToken);
        itemsSoFar += page.items.length;
        if (subscriber.closed) return;
        subscriber.next(page);
        continueToken = next;
      } while (continueToken !== undefined && !subscriber.closed);
      subscriber.complete();
    };

    fetchAll().catch((error: unknown) => {
      if (!subscriber.closed) subscriber.error(error);
    });

    return () => {
      controller.abort();
      response?.destroy();
    };
  });
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
  itemsBefore: number,
): { page: ListPage<T>; next: string | undefined } {
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
  const page: ListPage<T> = {
    items: items as T[],
    resourceVersion: typeof metadata.resourceVersion === 'string' ? metadata.resourceVersion : '',
    last: next === undefined,
    remainingItemCount: typeof metadata.remainingItemCount === 'number' ? metadata.remainingItemCount : undefined,
    itemsSoFar: itemsBefore + items.length,
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
