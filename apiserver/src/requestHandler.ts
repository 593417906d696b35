import type * as http from 'node:http';
import type { SchedulerLike } from 'rxjs';
import type { Status } from 'rx-informer';
import type { KubeObject } from 'rx-informer';
import { authenticate, authorize, type DenyRule, type Verb } from './auth';
import type { ServedResource } from './builtinResources';
import type { ClusterStoreImpl } from './clusterStore';
import type { Fault, FaultQueue } from './faults';
import { jsonOf, type StoredObject } from './history';
import { serveList, writeListPage, type ContinueTokens } from './listHandler';
import { checkKindForVerb, metadataFormOf, negotiateConversion, type ResponseForm } from './mediaTypeConversion';
import { parseListQuery, queryBoolean } from './listOptions';
import { createObject, getObject, parseObjectBody, readBody, updateObject } from './objectHandlers';
import { checkWriteOptions, managerOf } from './objectWrites';
import { patchObject } from './patchHandler';
import { updateWithStrategy } from './updateStrategy';
import type { RequestLogImpl, RequestRecord } from './requestLog';
import { sendJson, sendStatus, sendText } from './respond';
import { acceptsGzip } from './responseBody';
import { route, type Route } from './routes';
import { ShardSelectorError, withShardSelector } from './shardSelector';
import type { ServerProfile } from './serverVersion';
import { ApiStatusError, failure, methodNotAllowed, pathNotFound, statusForCode, tooLargeResourceVersion } from './status';
import { tableRequest, TableWriter } from './table';
import { printerFor } from './tablePrinters';
import { WatchSession } from './watchHandler';

/**
 * Answers one request of the loopback API server: routing, faults, authentication and
 * authorization, then the verb's handler, every answer logged (PROTOCOL.md).
 */

/** Everything a request needs, shared by the handlers of one server. */
export interface ServerState {
  readonly store: ClusterStoreImpl;
  readonly served: readonly ServedResource[];
  readonly faults: FaultQueue;
  readonly requests: RequestLogImpl;
  readonly tokens: ContinueTokens;
  readonly watches: Set<WatchSession>;
  readonly token: string | undefined;
  readonly deny: readonly DenyRule[];
  readonly bookmarkIntervalMs: number;
  readonly profile: ServerProfile;
  readonly versionDocument: unknown;
  readonly watchCacheWaitMs: number;
  readonly scheduler: SchedulerLike;
  /** Serves KEP-5866's `shardSelector` (the `ShardedListAndWatch` gate). */
  readonly shardedListAndWatch: boolean;
  /** False plays a server that cannot convert to PartialObjectMetadata (`mediaTypeConversion.ts`). */
  readonly convertsMetadata: boolean;
  /** Each stored version's metadata JSON, rendered once for PartialObjectMetadata answers. */
  readonly metadataJson: WeakMap<StoredObject, string>;
}

function verbOf(method: string, target: Extract<Route, { kind: 'resource' }>, watch: boolean): Verb | undefined {
  const named = target.name !== undefined;
  switch (method) {
    case 'GET':
      // A GET of one object with ?watch watches that object (the field selector metadata.name=NAME).
      return watch ? 'watch' : named ? 'get' : 'list';
    case 'POST':
      return named ? undefined : 'create';
    case 'PUT':
    case 'PATCH':
      // Verb has no 'patch': a patch is authorized, faulted and logged as the update it is.
      return named ? 'update' : undefined;
    case 'DELETE':
      return named ? 'delete' : undefined;
    default:
      return undefined;
  }
}

function answerFault(response: http.ServerResponse, fault: Fault, store: ClusterStoreImpl): number {
  switch (fault.kind) {
    case 'status': {
      const status = statusForCode(fault.code, fault.reason, fault.message, fault.retryAfterSeconds);
      sendStatus(response, status);
      return fault.code;
    }
    case 'plainText429':
      sendText(response, 429, 'Too many requests, please try again later.\n', { 'Retry-After': String(fault.retryAfterSeconds) });
      return 429;
    case 'tooLargeResourceVersion':
      sendStatus(response, tooLargeResourceVersion(store.currentRv + 1, store.currentRv));
      return 504;
    default:
      return 0;
  }
}

export async function handle(state: ServerState, request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://loopback');
  const query: Record<string, string> = {};
  for (const [key, value] of url.searchParams) if (!(key in query)) query[key] = value;
  const method = request.method ?? 'GET';
  const target = route(url.pathname, state.served, state.versionDocument);
  const isResource = target.kind === 'resource';
  const watch = query.watch !== undefined && queryBoolean(query.watch);
  const verb = isResource ? verbOf(method, target, watch) : undefined;
  const record = {
    method,
    path: url.pathname,
    query,
    verb: verb ?? (target.kind === 'discovery' ? 'discovery' : 'other'),
    resource: isResource ? target.served.resource.plural : undefined,
    namespace: isResource ? target.namespace : undefined,
    fault: undefined as Fault['kind'] | undefined,
    time: Date.now(),
  } satisfies Omit<RequestRecord, 'status'>;
  const log = (status: number): void => state.requests.add({ ...record, status });
  const gzip = acceptsGzip(request.headers);
  const fail = (status: Status): void => {
    sendStatus(response, status, gzip);
    log(status.code ?? 500);
  };
  const answer = (code: number, json: string): void => {
    sendJson(response, code, json, {}, gzip);
    log(code);
  };

  try {
    const fault = state.faults.take(verb, record.resource);
    if (fault !== undefined) {
      record.fault = fault.kind;
      const code = answerFault(response, fault, state.store);
      if (code !== 0) return log(code);
    }
    if (target.kind === 'unknown') return fail(pathNotFound());
    const authentication = authenticate(request, state.token);
    // A wrong credential is refused everywhere; no credential still reads the public endpoints.
    const isPublic = target.kind === 'health' || (target.kind === 'discovery' && target.public === true);
    if ('status' in authentication && (!isPublic || request.headers.authorization !== undefined)) return fail(authentication.status);
    if (target.kind === 'health') {
      sendText(response, 200, 'ok');
      return log(200);
    }
    if (target.kind === 'discovery') return answer(200, JSON.stringify(target.document));
    if ('status' in authentication) return fail(authentication.status);
    const resource = target.served.resource;
    const statusRoute = target.subresource === 'status' && target.served.statusSubresource;
    if (verb === undefined || (target.subresource !== undefined && (!statusRoute || (verb !== 'get' && verb !== 'update')))) {
      return fail(target.subresource === undefined ? methodNotAllowed(method) : pathNotFound());
    }
    const denied = authorize(state.deny, authentication.user, verb, resource, target.namespace, target.name);
    if (denied !== undefined) return fail(denied);

    const { store } = state;
    const reads = verb === 'list' || verb === 'get' || verb === 'watch';
    const conversion = reads ? negotiateConversion(request.headers.accept, state.convertsMetadata) : undefined;
    // One negotiation decides between a Table, PartialObjectMetadata and the plain object, as in the API server.
    const form: ResponseForm | undefined =
      conversion?.kind === 'Table'
        ? new TableWriter(tableRequest(conversion.version, query), printerFor(resource))
        : conversion !== undefined && reads
          ? metadataFormOf(conversion, verb, state.metadataJson)
          : undefined;
    switch (verb) {
      case 'list': {
        const gone = new AbortController();
        response.once('close', () => gone.abort());
        const page = await serveList(store, state.tokens, {
          resource,
          namespace: target.namespace,
          query: withShardSelector(parseListQuery(target.served, query, state.profile), query.shardSelector, state.shardedListAndWatch),
          profile: state.profile,
          waitForRv: (rv) => store.waitForRv(rv, state.watchCacheWaitMs, state.scheduler, gone.signal),
        });
        if (response.destroyed) return;
        if (conversion !== undefined) checkKindForVerb(conversion, resource, 'list');
        log(200);
        return writeListPage(response, page, gzip, form);
      }
      case 'watch': {
        const parsed = withShardSelector(parseListQuery(target.served, query, state.profile), query.shardSelector, state.shardedListAndWatch);
        const name = target.name;
        const listQuery =
          name === undefined ? parsed : { ...parsed, selective: true, matches: (object: KubeObject) => object.metadata.name === name && parsed.matches(object) };
        const session = WatchSession.open({
          store,
          resource,
          namespace: target.namespace,
          query: listQuery,
          response,
          fault: fault !== undefined && fault.kind !== 'status' ? fault : undefined,
          bookmarkIntervalMs: state.bookmarkIntervalMs,
          form,
          onEnd: (ended) => state.watches.delete(ended),
        });
        if (session.isOpen) state.watches.add(session);
        return log(200);
      }
      case 'get': {
        const entry = getObject(store, resource, target.namespace, target.name!);
        if (conversion !== undefined) checkKindForVerb(conversion, resource, 'get');
        return answer(200, form === undefined ? jsonOf(entry) : form.single(entry));
      }
      case 'delete':
        return answer(200, JSON.stringify(store.delete(resource, target.namespace, target.name!)));
      case 'update':
      case 'create': {
        const subresource = target.subresource === 'status' ? 'status' : undefined;
        const manager = managerOf(query.fieldManager, request.headers['user-agent']);
        if (method === 'PATCH') {
          const body = await readBody(request);
          const { entry, created } = patchObject(store, target.served, target.namespace, target.name!, body, subresource, {
            contentType: request.headers['content-type'],
            query,
            manager,
          });
          return answer(created ? 201 : 200, jsonOf(entry));
        }
        const body = await readBody(request);
        checkWriteOptions(verb === 'create' ? 'CreateOptions' : 'UpdateOptions', query);
        const object = parseObjectBody(resource, request.headers['content-type'], body);
        const strategy = verb === 'update' && subresource === undefined ? target.served.updateStrategy : undefined;
        if (strategy !== undefined) {
          const { entry, created } = updateWithStrategy(store, target.served, target.namespace, target.name!, object, strategy, manager);
          return answer(created ? 201 : 200, jsonOf(entry));
        }
        const result =
          verb === 'create'
            ? createObject(store, target.served, target.namespace, object, manager)
            : updateObject(store, target.served, target.namespace, target.name!, object, subresource, manager);
        return answer(verb === 'create' ? 201 : 200, jsonOf(result));
      }
    }
  } catch (error) {
    const status = error instanceof ApiStatusError ? error.status : error instanceof ShardSelectorError ? failure(500, 'InternalError', error.message) : internalError(error);
    if (response.headersSent) response.destroy();
    else fail(status);
  }
}

export function internalError(error: unknown): Status {
  const message = error instanceof Error ? error.message : String(error);
  return failure(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
}

