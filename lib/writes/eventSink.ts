import type { KubeConfig } from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { catchError, defer, map, Observable, throwError } from 'rxjs';
import { StatusError } from '../base/errors';
import { events, eventsV1, type EventsV1Event } from '../resources/builtins';
import { resourcePath } from '../resources/resource';
import { toCoreEvent } from './eventObjects';
import { sendWrite } from './writeRequest';

/** The API an Event went to: events.k8s.io/v1, or core/v1 on a server without that group. */
export type EventApi = 'events.k8s.io/v1' | 'v1';

/**
 * Where an event recorder writes: two requests, as cold Observables that emit the API that took
 * the write and complete, or fail with the sources' typed errors (a 404 `StatusError` from
 * `patchSeries` when the Event is gone, a 409 AlreadyExists from `create`). {@link kubeEventSink}
 * writes over HTTP; tests can hand {@link eventRecorderFrom} their own.
 */
export interface EventSink {
  /** Creates the Event (with its series, when it has one). */
  create(event: EventsV1Event): Observable<EventApi>;
  /** Writes an existing Event's series (`series.count`, `series.lastObservedTime`). */
  patchSeries(event: EventsV1Event): Observable<EventApi>;
}

/**
 * An {@link EventSink} through a KubeConfig: events.k8s.io/v1 (POST, and a merge patch of
 * `series`), and from the first 404 that says the server does not serve that group (a Status
 * that names no object) on, core/v1 for good: the same Event as `tools/record` writes it, its
 * series as `count` and `lastTimestamp`.
 *
 * ## Example
 * ```ts
 * import type { KubeConfig } from '@kubernetes/client-node';
 * import { eventRecorderFrom, kubeEventSink } from 'rx-informer/writes';
 *
 * declare const kubeConfig: KubeConfig;
 * const recorder = eventRecorderFrom(kubeEventSink(kubeConfig), { reportingController: 'example.com/widgets' });
 * ```
 */
export function kubeEventSink(kubeConfig: KubeConfig): EventSink {
  let api: EventApi = 'events.k8s.io/v1';
  const onEither = (v1: () => Observable<unknown>, core: () => Observable<unknown>): Observable<EventApi> =>
    defer(() => {
      if (api === 'v1') return core().pipe(map(() => 'v1' as const));
      return v1().pipe(
        map(() => 'events.k8s.io/v1' as const),
        catchError((error: unknown) => {
          if (!groupNotServed(error)) return throwError(() => error);
          api = 'v1';
          return core().pipe(map(() => 'v1' as const));
        }),
      );
    });
  const namespaced = (event: EventsV1Event, resource: typeof events | typeof eventsV1, name?: string): string =>
    resourcePath(resource, { namespace: event.metadata.namespace, ...(name === undefined ? {} : { name }) });
  const write = (method: 'POST' | 'PATCH', path: string, body: unknown, contentType: string): Observable<unknown> =>
    sendWrite(kubeConfig, { method, path, query: '', contentType, body: JSON.stringify(body), kind: method === 'PATCH' ? 'merge-patch' : 'other' });
  return {
    create: (event) =>
      onEither(
        () => write('POST', namespaced(event, eventsV1), event, 'application/json'),
        () => write('POST', namespaced(event, events), toCoreEvent(event), 'application/json'),
      ),
    patchSeries: (event) =>
      onEither(
        () => write('PATCH', namespaced(event, eventsV1, event.metadata.name), { series: event.series }, 'application/merge-patch+json'),
        () => {
          const core = toCoreEvent(event);
          return write('PATCH', namespaced(event, events, event.metadata.name), { count: core.count, lastTimestamp: core.lastTimestamp }, 'application/merge-patch+json');
        },
      ),
  };
}

/**
 * A 404 about the path, not an object: the API server's answer for a group it does not serve
 * ("the server could not find the requested resource", details without a kind), where a missing
 * Event or namespace names its kind (`events`, `namespaces`).
 */
function groupNotServed(error: unknown): boolean {
  return error instanceof StatusError && error.code === 404 && (error.status.details?.kind ?? '') === '';
}
