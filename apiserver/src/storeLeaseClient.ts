import { Observable, type SchedulerLike, type Subscription } from 'rxjs';
import type { LeaseClient } from 'rx-informer/leader-election';
import { leases, type Lease } from 'rx-informer';
import { NetworkError, StatusError } from 'rx-informer';
import { ClusterStoreImpl, type ClusterStore } from './clusterStore';
import { jsonOf } from './history';
import { createObject, getObject, parseObjectBody } from './objectHandlers';
import { ApiStatusError } from './status';
import { builtinResources, LEASE_UPDATE_STRATEGY, resourceId } from './builtinResources';
import { updateWithStrategy } from './updateStrategy';

/**
 * A {@link LeaseClient} over a loopback store, without HTTP, for leader-election tests in virtual
 * time: requests take `latency` on a scheduler and hit the same store code as the loopback
 * server's Lease endpoints (201, 409 AlreadyExists or Conflict, 422 without a resourceVersion,
 * create on a PUT to a missing name), with the same bodies. Give each candidate its own client,
 * with its own latency, faults and scheduler (a skewed clock), over one shared store.
 */

/** One request a {@link storeLeaseClient} is asked to make. */
export interface LeaseRequest {
  readonly verb: 'get' | 'create' | 'update';
  readonly namespace: string;
  readonly name: string;
}

/**
 * What goes wrong with one request:
 * - `'unreachable'`: it never reaches the store and fails after its latency (ECONNREFUSED);
 * - `'hang'`: it never reaches the store and never answers (the caller's timeout ends it);
 * - `'lostResponse'`: the store applies it, but the answer never arrives.
 */
export type LeaseFault = 'unreachable' | 'hang' | 'lostResponse';

/** A round trip in ms, or its two legs. */
export type Latency = number | { readonly there: number; readonly back: number };

/** Options of {@link storeLeaseClient}. */
export interface StoreLeaseClientOptions {
  /** Where requests wait out their latency. Use the candidate's scheduler. */
  readonly scheduler: SchedulerLike;
  /**
   * How long a request takes, ms: a round trip the store applies halfway through, or the two legs
   * (`there` until the store applies it, `back` until the answer arrives). A value, or one per
   * request. Default 0.
   */
  readonly latency?: Latency | ((request: LeaseRequest) => Latency);
  /** A fault for a request, or undefined to serve it. Asked once per request, when it is sent. */
  readonly fault?: (request: LeaseRequest) => LeaseFault | undefined;
}

/**
 * A {@link LeaseClient} on `store` (from `createClusterStore()` or a loopback server's `store`).
 *
 * ## Example
 * ```ts
 * import { TestScheduler } from 'rxjs/testing';
 * import { leaderElectionFrom } from 'rx-informer';
 * import { createClusterStore, storeLeaseClient } from 'rx-informer-apiserver';
 *
 * const scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
 * const store = createClusterStore();
 * let partitioned = false;
 * const client = storeLeaseClient(store, { scheduler, latency: 20, fault: () => (partitioned ? 'unreachable' : undefined) });
 * const leader$ = leaderElectionFrom(client, { namespace: 'default', name: 'demo', identity: 'a', scheduler });
 * ```
 *
 * @throws TypeError when `store` is not a store this package made.
 */
export function storeLeaseClient(store: ClusterStore, options: StoreLeaseClientOptions): LeaseClient {
  if (!(store instanceof ClusterStoreImpl)) throw new TypeError('storeLeaseClient needs a store from createClusterStore() or a loopback server');
  const { scheduler, latency = 0, fault } = options;
  const legsOf = (request: LeaseRequest): { readonly there: number; readonly back: number } => {
    const value = typeof latency === 'function' ? latency(request) : latency;
    return typeof value === 'number' ? { there: Math.max(0, value) / 2, back: Math.max(0, value) / 2 } : { there: Math.max(0, value.there), back: Math.max(0, value.back) };
  };

  const send = (request: LeaseRequest, apply: () => Lease): Observable<Lease> =>
    new Observable<Lease>((subscriber) => {
      const failure = fault?.(request);
      if (failure === 'hang') return undefined;
      const { there, back } = legsOf(request);
      let answer: Subscription | undefined;
      const arrive = scheduler.schedule(() => {
        if (failure === 'unreachable') {
          const error = new NetworkError(`${request.verb} lease ${request.namespace}/${request.name} failed: connect ECONNREFUSED`, 'ECONNREFUSED');
          answer = scheduler.schedule(() => subscriber.error(error), back);
          return;
        }
        let outcome: { readonly lease: Lease } | { readonly error: unknown };
        try {
          outcome = { lease: apply() };
        } catch (error) {
          outcome = { error: error instanceof ApiStatusError ? new StatusError(error.status) : error };
        }
        if (failure === 'lostResponse') return;
        answer = scheduler.schedule(() => {
          if ('lease' in outcome) {
            subscriber.next(outcome.lease);
            subscriber.complete();
          } else subscriber.error(outcome.error);
        }, back);
      }, there);
      return () => {
        arrive.unsubscribe();
        answer?.unsubscribe();
      };
    });

  // The manager rx-informer's Lease client is recorded as over HTTP (its User-Agent is `rx-informer`).
  const manager = 'rx-informer';
  const served = builtinResources.find((s) => resourceId(s.resource) === resourceId(leases))!;
  // Through JSON both ways, as over HTTP: the caller never shares an object with the store.
  const body = (lease: Lease) => parseObjectBody(leases, 'application/json', Buffer.from(JSON.stringify(lease)));
  const answer = (json: string): Lease => JSON.parse(json) as Lease;
  return {
    get: (namespace, name) => send({ verb: 'get', namespace, name }, () => answer(jsonOf(getObject(store, leases, namespace, name)))),
    create: (lease) =>
      send({ verb: 'create', namespace: lease.metadata.namespace ?? '', name: lease.metadata.name }, () =>
        answer(jsonOf(createObject(store, served, lease.metadata.namespace, body(lease), manager))),
      ),
    update: (lease) =>
      send({ verb: 'update', namespace: lease.metadata.namespace ?? '', name: lease.metadata.name }, () =>
        answer(jsonOf(updateWithStrategy(store, served, lease.metadata.namespace, lease.metadata.name, body(lease), LEASE_UPDATE_STRATEGY, manager).entry)),
      ),
  };
}
