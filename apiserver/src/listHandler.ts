import type { ServerResponse } from 'node:http';
import { apiVersionOf, type Resource } from 'rx-informer';
import type { KubeObject } from 'rx-informer';
import type { ClusterStoreImpl } from './clusterStore';
import { decodeContinueToken, encodeContinueToken, InvalidContinueTokenError, LATEST } from './continueToken';
import { jsonOf, type StoredObject } from './history';
import { parseResourceVersion, type ListQuery } from './listOptions';
import { planList } from './listPlan';
import { ChunkBuilder } from './respond';
import { ResponseBody } from './responseBody';
import type { ResponseForm } from './mediaTypeConversion';
import type { ServerProfile } from './serverVersion';
import {
  ApiStatusError,
  badRequest,
  CONTINUE_EXPIRED_MESSAGE,
  CONTINUE_INCONSISTENT_MESSAGE,
  etcdFutureRevision,
  expired,
  LIST_TOO_OLD_MESSAGE,
  tooLargeResourceVersion,
} from './status';

/**
 * Serves lists (PROTOCOL.md B.2–B.4): resourceVersion semantics as the profile's version decides
 * them (`listPlan.ts`), and `limit`/`continue` paging where every page is cut from one snapshot at
 * the first page's resourceVersion.
 */

interface Snapshot {
  readonly items: readonly StoredObject[];
  readonly createdAt: number;
}

/** Most snapshots a server keeps for live continue tokens; older ones are rebuilt from history. */
const MAX_SNAPSHOTS = 32;

/**
 * Paged-list snapshots, keyed by what was listed and at which resourceVersion. A token whose snapshot
 * was dropped is served by rebuilding the state at its resourceVersion from history.
 */
export class ContinueTokens {
  private readonly snapshots = new Map<string, Snapshot>();
  private generation = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** Every token issued so far gets 410 from now on. */
  expireAll(): void {
    this.generation++;
    this.snapshots.clear();
  }

  get currentGeneration(): number {
    return this.generation;
  }

  get ttl(): number {
    return this.ttlMs;
  }

  clock(): number {
    return this.now();
  }

  lookup(id: string): Snapshot | undefined {
    const found = this.snapshots.get(id);
    if (found !== undefined && this.now() - found.createdAt > this.ttlMs) {
      this.snapshots.delete(id);
      return undefined;
    }
    return found;
  }

  keep(id: string, items: readonly StoredObject[]): void {
    const now = this.now();
    for (const [key, snapshot] of this.snapshots) if (now - snapshot.createdAt > this.ttlMs) this.snapshots.delete(key);
    while (this.snapshots.size >= MAX_SNAPSHOTS) this.snapshots.delete(this.snapshots.keys().next().value!);
    this.snapshots.set(id, { items, createdAt: now });
  }
}

/** What a list request resolved to. */
export interface ListScope {
  readonly resource: Resource<KubeObject>;
  readonly namespace: string | undefined;
  readonly query: ListQuery;
  readonly profile: ServerProfile;
  /**
   * Waits, as the watch cache does (`waitUntilFreshAndBlock`), until the store reaches `rv`:
   * resolves true once it has, false when the wait timed out.
   */
  readonly waitForRv: (rv: number) => Promise<boolean>;
}

function firstIndexAtOrAfter(items: readonly StoredObject[], start: string): number {
  let low = 0;
  let high = items.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (items[mid]!.key < start) low = mid + 1;
    else high = mid;
  }
  return low;
}

function select(store: ClusterStoreImpl, scope: ListScope, rv: number, tooOld: () => ApiStatusError): StoredObject[] {
  const all = store.objectsAt(scope.resource, rv);
  if (all === undefined) throw tooOld();
  const prefix = scope.resource.namespaced && scope.namespace !== undefined ? `${scope.namespace}/` : undefined;
  if (prefix === undefined && !scope.query.selective) return all;
  return all.filter((entry) => (prefix === undefined || entry.key.startsWith(prefix)) && scope.query.matches(entry.object));
}

/** One page of a list, ready to write: the JSON around the items, and the items. */
export interface ListPage {
  /** `{"kind":...,"metadata":{...},"items":[` */
  readonly head: string;
  /** The list metadata inside its braces: `"resourceVersion":...` (a Table or a PartialObjectMetadataList carries the same). */
  readonly metadata: string;
  readonly items: readonly StoredObject[];
  readonly from: number;
  readonly to: number;
}

/**
 * The state at `rv` for an exact read; a `rv` the server has not reached is refused as the
 * version's storage refuses it (PROTOCOL.md B.3).
 */
async function exactItems(store: ClusterStoreImpl, scope: ListScope, rv: number): Promise<StoredObject[]> {
  if (rv > store.currentRv) {
    // 1.34+: the watch cache serves Exact lists and waits for the version; before, etcd refuses it.
    if (!scope.profile.exactListsWaitForFreshness) throw new ApiStatusError(etcdFutureRevision());
    if (!(await scope.waitForRv(rv))) throw new ApiStatusError(tooLargeResourceVersion(rv, store.currentRv, 1));
  }
  return select(store, scope, rv, () => new ApiStatusError(expired(LIST_TOO_OLD_MESSAGE)));
}

/**
 * Resolves a list request to one page of a `<Kind>List`.
 * @throws ApiStatusError 400 (continue with a resourceVersion, forged token), 410 (expired), 500/504 (too large rv)
 */
export async function serveList(store: ClusterStoreImpl, tokens: ContinueTokens, scope: ListScope): Promise<ListPage> {
  const { query, resource } = scope;
  const snapshotId = (rv: number): string => `${resource.group}/${resource.plural}\u0000${scope.namespace ?? ''}\u0000${query.selectorKey}\u0000${rv}`;
  const plan = planList(query, scope.profile, parseResourceVersion);
  let listRv: number;
  let start = '';
  let items: readonly StoredObject[];
  let limit = query.limit;

  if (plan.kind === 'continue') {
    if (query.resourceVersion !== undefined && query.resourceVersion !== '0') {
      throw new ApiStatusError(badRequest('specifying resource version is not allowed when using continue'));
    }
    let token;
    try {
      token = decodeContinueToken(query.continueToken!);
    } catch (error) {
      if (error instanceof InvalidContinueTokenError) throw new ApiStatusError(badRequest(error.message));
      throw error;
    }
    if (token.generation < tokens.currentGeneration || tokens.clock() - token.issuedAt > tokens.ttl) {
      throw new ApiStatusError(expired(CONTINUE_EXPIRED_MESSAGE));
    }
    start = token.start;
    // etcd has compacted the token's revision: 410, with a token that goes on at the latest one.
    const compacted = (): ApiStatusError => {
      const latest = encodeContinueToken({ rv: LATEST, start, issuedAt: tokens.clock(), generation: tokens.currentGeneration });
      return new ApiStatusError(expired(CONTINUE_INCONSISTENT_MESSAGE, latest));
    };
    listRv = token.rv === LATEST ? store.currentRv : Math.min(token.rv, store.currentRv);
    if (!store.etcdHas(listRv)) throw compacted();
    const id = snapshotId(listRv);
    const kept = tokens.lookup(id);
    if (kept !== undefined) items = kept.items;
    else {
      items = select(store, scope, listRv, compacted);
      tokens.keep(id, items);
    }
  } else {
    if (plan.kind === 'exact') {
      listRv = plan.rv;
      items = await exactItems(store, scope, plan.rv);
    } else {
      const minimum = plan.minimumRv;
      if (minimum !== undefined && minimum > store.currentRv) {
        // The watch cache waits for the version (then Retry-After: 1); etcd refuses it at once.
        if (plan.from === 'etcd') throw new ApiStatusError(tooLargeResourceVersion(minimum, store.currentRv, 0));
        if (!(await scope.waitForRv(minimum))) throw new ApiStatusError(tooLargeResourceVersion(minimum, store.currentRv, 1));
      }
      if (!plan.paged) limit = 0;
      listRv = store.currentRv;
      items = select(store, scope, listRv, () => new ApiStatusError(expired(LIST_TOO_OLD_MESSAGE)));
    }
    if (limit > 0 && items.length > limit) tokens.keep(snapshotId(listRv), items);
  }

  const from = start === '' ? 0 : firstIndexAtOrAfter(items, start);
  const to = limit > 0 ? Math.min(items.length, from + limit) : items.length;
  let metadata = `"resourceVersion":"${listRv}"`;
  if (to < items.length) {
    const next = encodeContinueToken({ rv: listRv, start: `${items[to - 1]!.key}\u0000`, issuedAt: tokens.clock(), generation: tokens.currentGeneration });
    metadata += `,"continue":"${next}"`;
    if (!query.selective) metadata += `,"remainingItemCount":${items.length - to}`;
  }
  if (query.shardSelector !== undefined) metadata += `,"shardInfo":{"selector":${JSON.stringify(query.shardSelector)}}`;
  return { head: `{"kind":"${resource.kind}List","apiVersion":"${apiVersionOf(resource)}","metadata":{${metadata}},"items":[`, metadata, items, from, to };
}

/** Bytes per write: big lists go out in pieces, never as one giant string or buffer. */
const WRITE_BATCH_BYTES = 1 << 20;

/**
 * Writes a page as a chunked 200 response: the head, then each item's cached JSON, encoded into
 * chunks of `WRITE_BATCH_BYTES`, waiting for `drain` when the client reads slower than we write.
 * Nothing is serialized here but objects never serialized before (once, cached for every later
 * reader). `gzip` (the client accepts it) compresses a page longer than 128 KiB, as the API server
 * does; `form` writes the page converted: as a Table of the same items (`table.ts`), or a
 * PartialObjectMetadataList (`mediaTypeConversion.ts`).
 */
export async function writeListPage(response: ServerResponse, page: ListPage, gzip: boolean, form?: ResponseForm): Promise<void> {
  const body = new ResponseBody(response, 200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' }, gzip);
  const chunks = new ChunkBuilder(WRITE_BATCH_BYTES);
  const writeAll = (): boolean => {
    let more = true;
    for (const chunk of chunks.take()) more = body.write(chunk);
    return more;
  };
  chunks.add(form === undefined ? page.head : form.head(page.metadata));
  for (let i = page.from; i < page.to; i++) {
    if (i !== page.from) chunks.add(',');
    chunks.add(form === undefined ? jsonOf(page.items[i]!) : form.row(page.items[i]!));
    if (chunks.size >= WRITE_BATCH_BYTES && !writeAll()) {
      if (response.destroyed) return;
      await body.drained();
      if (response.destroyed) return;
    }
  }
  chunks.add(']}');
  const last = chunks.take();
  for (const chunk of last.slice(0, -1)) body.write(chunk);
  body.end(last[last.length - 1]);
}
