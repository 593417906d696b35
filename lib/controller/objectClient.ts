import type { KubeConfig } from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { Observable } from 'rxjs';
import { ProtocolError } from '../base/errors';
import type { KubeObject } from '../base/object';
import { resourcePath, type Resource } from '../resources/resource';
import { statusErrorFromResponse } from '../sources/statusError';
import { isJsonContentType, kubeRequest, readBody, readText, type KubeRequest } from '../sources/transport';
import type { JsonPatchOperation } from '../writes/patches';
import { writeErrorOf } from '../writes/writeErrors';
import { sendWrite } from '../writes/writeRequest';

export type { JsonPatchOperation } from '../writes/patches';

/**
 * The writes a controller makes, as cold Observables: each sends its request on subscription,
 * emits the API server's answer once and completes; unsubscribing aborts it. Failures are the
 * sources' typed errors: a `StatusError` (404, 409 AlreadyExists, 422 Invalid ...), a
 * `ConflictError` from rx-informer/writes for a lost race (a stale merge patch's 409, a JSON
 * Patch whose `test` no longer holds), a `NetworkError`, a `ProtocolError`, a `ConfigError`.
 *
 * The writes a controller makes through `request.writes` (creates, JSON merge patches and JSON
 * Patches with a resourceVersion precondition, deletes, and `/version`). An `edit()` from
 * rx-informer/writes gives both patch forms of a change. {@link kubeObjectClient} speaks HTTP
 * through a KubeConfig; anything with the API server's semantics will do: a test may hand the
 * controller one over an in-process store.
 */
export interface ObjectClient {
  /** POST a new object to its collection. Errors with 409 AlreadyExists when the name is taken. */
  create<T extends KubeObject>(resource: Resource<T>, object: T): Observable<T>;
  /**
   * PATCH one object. A `metadata.resourceVersion` in a merge patch, or a `test` of
   * `/metadata/resourceVersion` in a JSON Patch, is a precondition: a merge patch against a newer
   * object fails with 409 Conflict, a JSON Patch whose test fails with 422; both reach you as a
   * `ConflictError` (rx-informer/writes). `edit(cached, recipe).writes` holds both forms of a change.
   */
  patch<T extends KubeObject>(resource: Resource<T>, target: ObjectRef, patch: ObjectPatch): Observable<T>;
  /**
   * DELETE one object. Emits the object when the server answers with it (an object held by
   * finalizers, marked with its `deletionTimestamp`; most custom resources), `undefined` when it
   * answers with a Status (built-in resources deleted at once). Errors with 404 when it is gone.
   */
  delete<T extends KubeObject>(resource: Resource<T>, target: ObjectRef, options?: DeleteOptions): Observable<T | undefined>;
  /** GET `/version`: which Kubernetes version the server is (whether it orders resourceVersions). */
  version(): Observable<ServerVersion>;
}

/** One object by name: `namespace` for namespaced resources. */
export interface ObjectRef {
  readonly namespace?: string;
  readonly name: string;
}

/**
 * A patch: an RFC 7386 JSON merge patch (`application/merge-patch+json`: objects merge key by key,
 * `null` deletes, arrays are replaced whole) or an RFC 6902 JSON Patch
 * (`application/json-patch+json`). Both are accepted by built-in and custom resources alike.
 */
export type ObjectPatch =
  | { readonly type: 'merge'; readonly patch: Readonly<Record<string, unknown>> }
  | { readonly type: 'json'; readonly operations: readonly JsonPatchOperation[] };

/** Options of a delete: `metav1.DeleteOptions` preconditions (409 Conflict when they do not hold). */
export interface DeleteOptions {
  readonly preconditions?: { readonly uid?: string; readonly resourceVersion?: string };
}

/** What `/version` says (`{"major":"1","minor":"35",...}`; some providers write `"35+"`). */
export interface ServerVersion {
  readonly major: string;
  readonly minor: string;
}

/** The longest answer read: an object is at most the API server's 3 MiB request limit, as JSON. */
const MAX_ANSWER_CHARS = 8 * 1024 * 1024;

/**
 * An {@link ObjectClient} over HTTP(S) through a `KubeConfig`, with its credentials applied per
 * request as the informers' requests are.
 *
 * ## Example
 * ```ts
 * import type { KubeConfig } from '@kubernetes/client-node';
 * import { firstValueFrom } from 'rxjs';
 * import { configMaps } from 'rx-informer';
 * import { kubeObjectClient } from 'rx-informer/controller';
 *
 * declare const kubeConfig: KubeConfig;
 * const client = kubeObjectClient(kubeConfig);
 * const created = await firstValueFrom(client.create(configMaps, { metadata: { name: 'settings', namespace: 'shop' }, data: { mode: 'fast' } }));
 * await firstValueFrom(
 *   client.patch(configMaps, { namespace: 'shop', name: 'settings' }, { type: 'merge', patch: { metadata: { resourceVersion: created.metadata.resourceVersion }, data: { mode: 'safe' } } }),
 * );
 * ```
 *
 * @param kubeConfig the cluster and credentials.
 * @returns the client; nothing is requested until one of its Observables is subscribed.
 */
export function kubeObjectClient(kubeConfig: KubeConfig): ObjectClient {
  const send = <R>(request: Omit<KubeRequest, 'signal' | 'query'>, read: (text: string) => R): Observable<R> =>
    new Observable<R>((subscriber) => {
      const controller = new AbortController();
      const described = `${request.method ?? 'GET'} ${request.path}`;
      kubeRequest(kubeConfig, { ...request, query: '', signal: controller.signal })
        .then(async (response) => {
          const code = response.statusCode ?? 0;
          if (code >= 400) throw writeErrorOf(statusErrorFromResponse(code, response.headers, await readBody(response, request.path, 64 * 1024), described), 'other');
          if (!isJsonContentType(response.headers['content-type'])) {
            response.destroy();
            throw new ProtocolError('non-json-body', `${described} answered ${response.headers['content-type']}, not JSON`);
          }
          return read(await readText(response, request.path, MAX_ANSWER_CHARS));
        })
        .then(
          (answer) => {
            subscriber.next(answer);
            subscriber.complete();
          },
          (error: unknown) => subscriber.error(error),
        );
      return () => controller.abort();
    });
  const json = (body: unknown, contentType = 'application/json'): Pick<KubeRequest, 'body' | 'headers'> => ({ body: JSON.stringify(body), headers: { 'Content-Type': contentType } });
  function remove<T extends KubeObject>(resource: Resource<T>, target: ObjectRef, options: DeleteOptions = {}): Observable<T | undefined> {
    const request = `DELETE ${resource.plural}`;
    const preconditions = options.preconditions === undefined ? {} : json({ kind: 'DeleteOptions', apiVersion: 'v1', preconditions: options.preconditions });
    return send({ method: 'DELETE', path: resourcePath(resource, target), ...preconditions }, (text) => {
      const answer = parseJson(text, request);
      // A Status ("Success") instead of the object: the built-in registries' answer.
      return isRecord(answer) && answer.kind === 'Status' ? undefined : parseObject<T>(text, request);
    });
  }
  return {
    // Creates and patches are rx-informer/writes' requests: one transport, one reading of a lost race.
    create: (resource, object) =>
      sendWrite(kubeConfig, {
        method: 'POST',
        path: resourcePath(resource, { namespace: object.metadata.namespace }),
        query: '',
        contentType: 'application/json',
        body: JSON.stringify(object),
        kind: 'other',
      }),
    patch: (resource, target, patch) =>
      sendWrite(kubeConfig, {
        method: 'PATCH',
        path: resourcePath(resource, target),
        query: '',
        ...(patch.type === 'merge'
          ? { contentType: 'application/merge-patch+json', body: JSON.stringify(patch.patch), kind: 'merge-patch' as const }
          : { contentType: 'application/json-patch+json', body: JSON.stringify(patch.operations), kind: 'json-patch' as const }),
      }),
    delete: remove,
    version: () =>
      send({ method: 'GET', path: '/version' }, (text) => {
        const answer = parseJson(text, 'GET /version');
        if (!isRecord(answer) || typeof answer.major !== 'string' || typeof answer.minor !== 'string') {
          throw new ProtocolError('missing-metadata', 'GET /version answered without major and minor strings', text);
        }
        return { major: answer.major, minor: answer.minor };
      }),
  };
}

function parseJson(text: string, request: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ProtocolError('malformed-json', `${request} answered with a body that is not JSON`, text);
  }
}

function parseObject<T extends KubeObject>(text: string, request: string): T {
  const parsed = parseJson(text, request);
  if (!isRecord(parsed) || !isRecord(parsed.metadata)) throw new ProtocolError('missing-metadata', `${request} answered with an object without metadata`, text);
  return parsed as unknown as T;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
