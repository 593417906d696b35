import type { KubeObject } from '../base/object';
import type { Event, EventsV1Event } from '../resources/builtins';

/**
 * The Event objects the recorder writes: events.k8s.io/v1 as client-go's `tools/events` makes them
 * (`event_recorder.go`, `makeEvent`), the same as a core/v1 Event for servers without that group
 * (as `tools/record` writes it), and the limits the API server validates them against
 * (kubernetes `pkg/apis/core/validation/events.go`).
 */

/** What an Event is about: a `core/v1` ObjectReference. */
export interface EventReference {
  /** `apps/v1`, `v1`, `example.com/v1`. */
  readonly apiVersion: string;
  /** `Deployment`, `Pod`, `Widget`. */
  readonly kind: string;
  /** The object's `metadata.name`. */
  readonly name: string;
  /** Empty or absent for a cluster-scoped object. */
  readonly namespace?: string;
  /** Tells this object from an earlier one of the same name. */
  readonly uid?: string;
  /** The version the event saw; not part of what makes repeats one series. */
  readonly resourceVersion?: string;
  /** A part of the object (`spec.containers{app}`). */
  readonly fieldPath?: string;
}

/** One occurrence to record (client-go's `Eventf(regarding, related, eventtype, reason, action, note)`). */
export interface EventDetails {
  /** `Normal`, or `Warning` for what someone should look at. */
  readonly type: 'Normal' | 'Warning';
  /** Why, in CamelCase, for machines (`ScalingReplicaSet`, `FailedCreate`); at most 128 characters. */
  readonly reason: string;
  /** What the controller did or failed to do (`Scale`, `Create`); at most 128 characters. */
  readonly action: string;
  /** For people; cut to the API server's limit (`NoteLengthLimit`, 1024, counted in bytes of UTF-8). */
  readonly note?: string;
  /** A second object involved (the child created for the regarding object). */
  readonly related?: KubeObject | EventReference;
}

/** The API server's limits on an Event's fields (`ReasonLengthLimit`, `ActionLengthLimit`, `NoteLengthLimit`, `ReportingInstanceLengthLimit`). */
export const EVENT_LIMITS = Object.freeze({ reason: 128, action: 128, noteBytes: 1024, reportingInstance: 128 });

/**
 * The reference to an object or a reference given as such: what `reference.GetReference` makes of
 * an object (its apiVersion, kind, name, namespace, uid, resourceVersion).
 *
 * @throws TypeError for an object without `apiVersion`, `kind` or `metadata.name` (objects from an
 *   informer have all three).
 */
export function referenceOf(target: KubeObject | EventReference): EventReference {
  if (!('metadata' in target)) return target;
  const { apiVersion, kind, metadata } = target;
  if (apiVersion === undefined || apiVersion === '' || kind === undefined || kind === '' || metadata.name === '') {
    throw new TypeError('an Event needs the apiVersion, kind and metadata.name of the object it is about');
  }
  return {
    apiVersion,
    kind,
    name: metadata.name,
    ...(metadata.namespace === undefined || metadata.namespace === '' ? {} : { namespace: metadata.namespace }),
    ...(metadata.uid === undefined ? {} : { uid: metadata.uid }),
    ...(metadata.resourceVersion === undefined ? {} : { resourceVersion: metadata.resourceVersion }),
  };
}

/**
 * The key under which repeats of an event form one series: `tools/events`'s `eventKey` (type,
 * action, reason, reporting controller and instance, regarding and related objects), except that
 * a reference's `resourceVersion` is left out, as `tools/record`'s aggregation key leaves it out:
 * a repeat about an object that changed meanwhile is still the same event. The note is not part
 * of it, as in `tools/events`: the series keeps the first occurrence's note.
 */
export function seriesKey(event: EventsV1Event): string {
  return JSON.stringify([
    event.type,
    event.action,
    event.reason,
    event.reportingController,
    event.reportingInstance,
    referenceKey(event.regarding),
    referenceKey(event.related),
  ]);
}

/**
 * The key of what a spam filter's token bucket is per: the source and the object
 * (`tools/record`'s `getSpamKey`: source, and the object's kind, namespace, name, uid and apiVersion).
 */
export function spamKey(event: EventsV1Event): string {
  const regarding = event.regarding ?? {};
  return JSON.stringify([event.reportingController, event.reportingInstance, regarding.kind, regarding.namespace, regarding.name, regarding.uid, regarding.apiVersion]);
}

function referenceKey(reference: EventsV1Event['regarding'] | undefined): unknown {
  if (reference === undefined) return null;
  return [reference.apiVersion, reference.kind, reference.namespace, reference.name, reference.uid, reference.fieldPath];
}

/** What {@link makeEvent} needs besides the occurrence. */
export interface EventSource {
  readonly reportingController: string;
  readonly reportingInstance: string;
}

/**
 * The events.k8s.io/v1 Event for a first occurrence at `nowMs`, as `makeEvent` builds it: named
 * `<regarding name>.<unique hex>`, in the regarding object's namespace (`default` for a
 * cluster-scoped one), `eventTime` in microseconds.
 */
export function makeEvent(regarding: EventReference, details: EventDetails, source: EventSource, nowMs: number, uniqueHex: string): EventsV1Event {
  const related = details.related === undefined ? undefined : referenceOf(details.related);
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: `${regarding.name}.${uniqueHex}`, namespace: regarding.namespace === undefined || regarding.namespace === '' ? 'default' : regarding.namespace },
    eventTime: microTime(nowMs),
    reportingController: source.reportingController,
    reportingInstance: source.reportingInstance,
    action: details.action,
    reason: details.reason,
    regarding,
    ...(related === undefined ? {} : { related }),
    note: truncateNote(details.note ?? ''),
    type: details.type,
  };
}

/** The event with its series at `count` occurrences, the last at `lastObservedMs`. */
export function withSeries(event: EventsV1Event, count: number, lastObservedMs: number): EventsV1Event {
  return count < 2 ? event : { ...event, series: { count, lastObservedTime: microTime(lastObservedMs) } };
}

/**
 * The same event as a core/v1 Event, as `tools/record` writes one (no `eventTime`, so the API
 * server validates it as a legacy event): `count`, `firstTimestamp` and `lastTimestamp` carry
 * the series, `source.component` and `reportingComponent` the reporting controller.
 */
export function toCoreEvent(event: EventsV1Event): Event {
  const first = event.eventTime ?? '';
  const last = event.series?.lastObservedTime ?? first;
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: event.metadata,
    involvedObject: event.regarding ?? {},
    ...(event.related === undefined ? {} : { related: event.related }),
    reason: event.reason ?? '',
    message: event.note ?? '',
    type: event.type ?? 'Normal',
    action: event.action ?? '',
    source: { component: event.reportingController },
    reportingComponent: event.reportingController,
    reportingInstance: event.reportingInstance ?? '',
    firstTimestamp: metaTime(first),
    lastTimestamp: metaTime(last),
    count: event.series?.count ?? 1,
  };
}

/** `metav1.MicroTime` on the wire: RFC 3339 in UTC with six fractional digits. */
export function microTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 23)}000Z`;
}

/** A MicroTime cut to `metav1.Time`: whole seconds. */
function metaTime(micro: string): string {
  return micro === '' ? micro : `${micro.slice(0, 19)}Z`;
}

/** The note cut to `NoteLengthLimit`, which counts the bytes of its UTF-8, on a character boundary and marked with an ellipsis. */
export function truncateNote(note: string): string {
  if (Buffer.byteLength(note, 'utf8') <= EVENT_LIMITS.noteBytes) return note;
  const suffix = ' ...';
  let kept = '';
  let bytes = 0;
  for (const character of note) {
    const size = Buffer.byteLength(character, 'utf8');
    if (bytes + size > EVENT_LIMITS.noteBytes - suffix.length) break;
    kept += character;
    bytes += size;
  }
  return kept + suffix;
}

/** `validation.IsQualifiedName`: an optional DNS subdomain prefix and `/`, then a name of at most 63 characters. */
export function isQualifiedName(value: string): boolean {
  const slash = value.lastIndexOf('/');
  const prefix = slash < 0 ? undefined : value.slice(0, slash);
  const name = slash < 0 ? value : value.slice(slash + 1);
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(prefix))) return false;
  return name.length > 0 && name.length <= 63 && /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/.test(name);
}
