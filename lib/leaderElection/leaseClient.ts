import type { KubeConfig } from '@kubernetes/client-node';
import { Observable } from 'rxjs';
import { leases, type Lease } from '../resources/builtins';
import { resourcePath } from '../resources/resource';
import { ProtocolError } from '../base/errors';
import { statusErrorFromResponse } from '../sources/statusError';
import { isJsonContentType, kubeRequest, readBody, readText } from '../sources/transport';

/**
 * The three Lease requests leader election makes, as cold Observables: each sends its request on
 * subscription, emits the API server's answer once and completes; unsubscribing aborts it.
 * Failures are the sources' typed errors: a `StatusError` (404 NotFound, 409 AlreadyExists or
 * Conflict, 422 Invalid ...), a `NetworkError`, a `ProtocolError`, a `ConfigError`.
 *
 * {@link kubeLeaseClient} speaks HTTP through a KubeConfig; the `rx-informer-apiserver` package has one over
 * an in-process store for tests in virtual time. Anything else with the API server's semantics
 * (optimistic concurrency on `metadata.resourceVersion`) will do.
 */
export interface LeaseClient {
  /** GET one Lease. Errors with a 404 `StatusError` when it does not exist. */
  get(namespace: string, name: string): Observable<Lease>;
  /** POST a new Lease. Errors with 409 AlreadyExists when the name is taken. */
  create(lease: Lease): Observable<Lease>;
  /**
   * PUT a Lease carrying the `metadata.resourceVersion` it was read at. Errors with 409 Conflict
   * when it changed since: that is how two candidates racing for one Lease learn that one lost.
   */
  update(lease: Lease): Observable<Lease>;
}

/** The longest body read from a Lease answer: a Lease is a few hundred bytes. */
const MAX_BODY_BYTES = 1024 * 1024;

/**
 * A {@link LeaseClient} over HTTP(S) through a `KubeConfig`, with its credentials applied per
 * request as the informers' requests are.
 *
 * ## Example
 * ```ts
 * import type { KubeConfig } from '@kubernetes/client-node';
 * import { firstValueFrom } from 'rxjs';
 * import { kubeLeaseClient } from 'rx-informer/leader-election';
 *
 * declare const kubeConfig: KubeConfig;
 * async function schedulerLeader(): Promise<string | undefined> {
 *   const lease = await firstValueFrom(kubeLeaseClient(kubeConfig).get('kube-system', 'kube-scheduler'));
 *   return lease.spec?.holderIdentity;
 * }
 * ```
 */
export function kubeLeaseClient(kubeConfig: KubeConfig): LeaseClient {
  const send = (method: 'GET' | 'POST' | 'PUT', path: string, body?: Lease): Observable<Lease> =>
    new Observable<Lease>((subscriber) => {
      const controller = new AbortController();
      const text = body === undefined ? undefined : JSON.stringify(body);
      kubeRequest(kubeConfig, {
        method,
        path,
        query: '',
        signal: controller.signal,
        ...(text === undefined ? {} : { body: text, headers: { 'Content-Type': 'application/json' } }),
      })
        .then(async (response) => {
          const code = response.statusCode ?? 0;
          if (code >= 400) throw statusErrorFromResponse(code, response.headers, await readBody(response, path, 64 * 1024));
          if (!isJsonContentType(response.headers['content-type'])) {
            response.destroy();
            throw new ProtocolError('non-json-body', `${method} ${path} answered ${response.headers['content-type']}, not JSON`);
          }
          const answer = parseLease(await readText(response, path, MAX_BODY_BYTES), `${method} ${path}`);
          subscriber.next(answer);
          subscriber.complete();
        })
        .catch((error: unknown) => subscriber.error(error));
      return () => controller.abort();
    });
  return {
    get: (namespace, name) => send('GET', resourcePath(leases, { namespace, name })),
    create: (lease) => send('POST', resourcePath(leases, { namespace: lease.metadata.namespace }), lease),
    update: (lease) => send('PUT', resourcePath(leases, { namespace: lease.metadata.namespace, name: lease.metadata.name }), lease),
  };
}

function parseLease(text: string, request: string): Lease {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ProtocolError('malformed-json', `${request} answered with a body that is not JSON`, text);
  }
  if (typeof parsed !== 'object' || parsed === null || typeof (parsed as { metadata?: unknown }).metadata !== 'object') {
    throw new ProtocolError('missing-metadata', `${request} answered with an object without metadata`, text);
  }
  return parsed as Lease;
}
