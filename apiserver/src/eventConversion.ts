import type { KubeObject } from 'rx-informer';

/**
 * Events are one kind stored once and served in two versions, as in the API server: core `v1`
 * Events and `events.k8s.io/v1` Events are the same objects in etcd (kubernetes
 * `pkg/registry/events` serves the core registry's storage), so an Event a recorder writes through
 * events.k8s.io is listed by `kubectl get events` and found by `kubectl describe`. The loopback store
 * keeps the core form and shows the other through these conversions
 * (`pkg/apis/events/v1/conversion.go`: regarding is involvedObject, note is message,
 * reportingController is reportingComponent, deprecatedSource, deprecatedFirstTimestamp,
 * deprecatedLastTimestamp and deprecatedCount are source, firstTimestamp, lastTimestamp and count).
 *
 * Each form is written with the members its Go type always serializes: a struct member without
 * `omitempty` or of struct type is `{}` when empty, a zero `metav1.Time` is `null`, and core's
 * `reportingComponent` and `reportingInstance` are `""`.
 */

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A string member, or undefined when absent or empty (`omitempty`). */
function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** A time member: the value when set, else null (a zero `metav1.Time` marshals as null). */
function time(value: unknown): unknown {
  return typeof value === 'string' && value !== '' ? value : null;
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && value !== 0 ? value : undefined;
}

function optional(name: string, value: unknown): Json {
  return value === undefined ? {} : { [name]: value };
}

/** `omitempty` on a string keeps it out when empty; these two core members have no `omitempty`. */
function always(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** An events.k8s.io/v1 Event as the core v1 Event it is stored as. */
export function coreEventOf(event: KubeObject): KubeObject {
  const e = event as unknown as Json;
  const series = isObject(e['series']) ? e['series'] : undefined;
  return {
    kind: 'Event',
    apiVersion: 'v1',
    metadata: event.metadata,
    involvedObject: isObject(e['regarding']) ? e['regarding'] : {},
    ...optional('reason', text(e['reason'])),
    ...optional('message', text(e['note'])),
    source: isObject(e['deprecatedSource']) ? e['deprecatedSource'] : {},
    firstTimestamp: time(e['deprecatedFirstTimestamp']),
    lastTimestamp: time(e['deprecatedLastTimestamp']),
    ...optional('count', count(e['deprecatedCount'])),
    ...optional('type', text(e['type'])),
    eventTime: time(e['eventTime']),
    ...optional('series', series === undefined ? undefined : { ...optional('count', count(series['count'])), lastObservedTime: time(series['lastObservedTime']) }),
    ...optional('action', text(e['action'])),
    ...optional('related', isObject(e['related']) ? e['related'] : undefined),
    reportingComponent: always(e['reportingController']),
    reportingInstance: always(e['reportingInstance']),
  } as unknown as KubeObject;
}

/** A core v1 Event as events.k8s.io/v1 shows it. */
export function eventsV1EventOf(event: KubeObject): KubeObject {
  const e = event as unknown as Json;
  const series = isObject(e['series']) ? e['series'] : undefined;
  return {
    kind: 'Event',
    apiVersion: 'events.k8s.io/v1',
    metadata: event.metadata,
    eventTime: time(e['eventTime']),
    ...optional('series', series === undefined ? undefined : { count: typeof series['count'] === 'number' ? series['count'] : 0, lastObservedTime: time(series['lastObservedTime']) }),
    ...optional('reportingController', text(e['reportingComponent'])),
    ...optional('reportingInstance', text(e['reportingInstance'])),
    ...optional('action', text(e['action'])),
    ...optional('reason', text(e['reason'])),
    regarding: isObject(e['involvedObject']) ? e['involvedObject'] : {},
    ...optional('related', isObject(e['related']) ? e['related'] : undefined),
    ...optional('note', text(e['message'])),
    ...optional('type', text(e['type'])),
    deprecatedSource: isObject(e['source']) ? e['source'] : {},
    deprecatedFirstTimestamp: time(e['firstTimestamp']),
    deprecatedLastTimestamp: time(e['lastTimestamp']),
    ...optional('deprecatedCount', count(e['count'])),
  } as unknown as KubeObject;
}
