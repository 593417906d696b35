import type { KubeObject } from 'rx-informer';
import { coreEventOf } from './eventConversion';
import { ageOf } from './humanDuration';
import { column, NAME_DESCRIPTION, type TablePrinter } from './tableColumns';

/**
 * The columns of `kubectl get events`, as the API server's event printer fills them (kubernetes
 * `pkg/printers/internalversion/printers.go`, `printEvent`; the same printer for core and
 * events.k8s.io Events, which are one kind): the last time seen (the series' last observation, or
 * the last timestamp, or the first one, or the event time), type, reason, the object as
 * `kind/name` in lower case, the message trimmed; with `-o wide` the sub-object, the source
 * (component or reporting controller, then host or reporting instance), the first time seen, the
 * count (1 for a new-style event without a series) and the name.
 */

type Json = Record<string, unknown>;

function record(value: unknown): Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {};
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function isSet(time: unknown): boolean {
  return typeof time === 'string' && time !== '';
}

/** `formatEventSource`: component (or reporting controller), then `, host` (or reporting instance) when there is one. */
function source(event: Json): string {
  const from = record(event['source']);
  const component = text(from['component']) || text(event['reportingComponent']);
  const instance = text(from['host']) || text(event['reportingInstance']);
  return instance === '' ? component : `${component}, ${instance}`;
}

/** The printer of core Events. */
export const eventPrinter: TablePrinter = {
  columns: [
    column('Last Seen', 'string', 'The time at which the most recent occurrence of this event was recorded.'),
    column('Type', 'string', 'Type of this event (Normal, Warning), new types could be added in the future'),
    column('Reason', 'string', "This should be a short, machine understandable string that gives the reason for the transition into the object's current status."),
    column('Object', 'string', 'The object that this event is about.'),
    column('Subobject', 'string', 'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2].', 1),
    column('Source', 'string', 'The component reporting this event.', 1),
    column('Message', 'string', 'A human-readable description of the status of this operation.'),
    column('First Seen', 'string', 'The time at which the event was first recorded.', 1),
    column('Count', 'string', 'The number of times this event has occurred.', 1),
    { name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION, priority: 1 },
  ],
  row(object, now) {
    const event = object as unknown as Json;
    const firstSeen = isSet(event['firstTimestamp']) ? ageOf(event['firstTimestamp'], now) : ageOf(event['eventTime'], now);
    let lastSeen = isSet(event['lastTimestamp']) ? ageOf(event['lastTimestamp'], now) : firstSeen;
    const series = event['series'];
    let count = typeof event['count'] === 'number' ? event['count'] : 0;
    if (typeof series === 'object' && series !== null) {
      lastSeen = ageOf(record(series)['lastObservedTime'], now);
      count = typeof record(series)['count'] === 'number' ? (record(series)['count'] as number) : 0;
    } else if (count === 0) {
      // Singleton events don't have a count set in the new API.
      count = 1;
    }
    const involved = record(event['involvedObject']);
    const kind = text(involved['kind']).toLowerCase();
    const target = text(involved['name']) === '' ? kind : `${kind}/${text(involved['name'])}`;
    return {
      cells: [lastSeen, text(event['type']), text(event['reason']), target, text(involved['fieldPath']), source(event), text(event['message']).trim(), firstSeen, count, object.metadata.name],
    };
  },
};

/** The printer of events.k8s.io Events: the same, on the core form. */
export const eventsV1Printer: TablePrinter = {
  columns: eventPrinter.columns,
  row: (object: KubeObject, now: number) => eventPrinter.row(coreEventOf(object), now),
};
