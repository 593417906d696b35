import type { KubeObject } from 'rx-informer';
import { invalidField, requiredField, type FieldError } from './status';

/**
 * The API server's validation of Events (kubernetes `pkg/apis/core/validation/events.go`), on the
 * core form every Event is stored in (`eventConversion.ts`), so its field paths are the internal
 * type's (`involvedObject`, `message`, `reportingController`) whichever version was written:
 *
 * - every write passes the legacy checks: an Event with an `eventTime` (a new-style one) needs
 *   `reportingController`, `reportingInstance`, `action` and `reason`, within their lengths, and one
 *   about a cluster-scoped object lives in `default` or `kube-system`; an old-style one's namespace
 *   matches its involved object's;
 * - a create through events.k8s.io/v1 also needs `eventTime`, a `type` of Normal or Warning, no
 *   deprecated fields, and a series of at least 2 with a `lastObservedTime`;
 * - an update through events.k8s.io/v1 may change nothing but the series (and metadata).
 */

type Json = Record<string, unknown>;

/** The version an Event was written through. */
export type EventsVersion = 'v1' | 'events.k8s.io/v1';

const REPORTING_INSTANCE_LENGTH_LIMIT = 128;
const ACTION_LENGTH_LIMIT = 128;
const REASON_LENGTH_LIMIT = 128;
const NOTE_LENGTH_LIMIT = 1024;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function isSet(time: unknown): boolean {
  return typeof time === 'string' && time !== '';
}

const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const QUALIFIED_NAME_FORMAT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_SUBDOMAIN_FORMAT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*';

/** `validation.RegexError`. */
function regexError(message: string, format: string, ...examples: string[]): string {
  return `${message} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${format}')`;
}

/** `validation.IsDNS1123Subdomain`. */
function dns1123SubdomainErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 253) errors.push('must be no more than 253 characters');
  if (!DNS1123_SUBDOMAIN.test(value)) {
    errors.push(regexError("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character", DNS1123_SUBDOMAIN_FORMAT, 'example.com'));
  }
  return errors;
}

/** `validation.IsQualifiedName`: an optional DNS subdomain prefix and `/`, then a name of at most 63 characters. */
function qualifiedNameErrors(value: string): string[] {
  const nameError = regexError("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", QUALIFIED_NAME_FORMAT, 'MyName', 'my.name', '123-abc');
  const parts = value.split('/');
  const errors: string[] = [];
  if (parts.length > 2) return [`a qualified name ${nameError} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  const name = parts.length === 2 ? parts[1]! : parts[0]!;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix === '') errors.push('prefix part must be non-empty');
    else errors.push(...dns1123SubdomainErrors(prefix).map((e) => `prefix part ${e}`));
  }
  if (name === '') errors.push('name part must be non-empty');
  else if (name.length > 63) errors.push('name part must be no more than 63 characters');
  if (!QUALIFIED_NAME.test(name)) errors.push(`name part ${nameError}`);
  return errors;
}

/** `legacyValidateEvent`. */
function legacyErrors(event: Json, namespace: string): FieldError[] {
  const errors: FieldError[] = [];
  const involved = isObject(event['involvedObject']) ? event['involvedObject'] : {};
  const involvedNamespace = str(involved['namespace']);
  const mismatch = (): FieldError => invalidField('involvedObject.namespace', JSON.stringify(involvedNamespace), 'does not match event.namespace');
  if (!isSet(event['eventTime'])) {
    if (involvedNamespace === '') {
      if (namespace !== '' && namespace !== 'default') errors.push(mismatch());
    } else if (namespace !== involvedNamespace) errors.push(mismatch());
  } else {
    if (involvedNamespace === '' && namespace !== 'default' && namespace !== 'kube-system') errors.push(mismatch());
    const controller = str(event['reportingComponent']);
    if (controller === '') errors.push(requiredField('reportingController', ''));
    for (const message of qualifiedNameErrors(controller)) errors.push(invalidField('reportingController', JSON.stringify(controller), message));
    const instance = str(event['reportingInstance']);
    if (instance === '') errors.push(requiredField('reportingInstance', ''));
    if (instance.length > REPORTING_INSTANCE_LENGTH_LIMIT) errors.push(invalidField('reportingInstance', '""', `can have at most ${REPORTING_INSTANCE_LENGTH_LIMIT} characters`));
    const action = str(event['action']);
    if (action === '') errors.push(requiredField('action', ''));
    if (action.length > ACTION_LENGTH_LIMIT) errors.push(invalidField('action', '""', `can have at most ${ACTION_LENGTH_LIMIT} characters`));
    const reason = str(event['reason']);
    if (reason === '') errors.push(requiredField('reason', ''));
    if (reason.length > REASON_LENGTH_LIMIT) errors.push(invalidField('reason', '""', `can have at most ${REASON_LENGTH_LIMIT} characters`));
    if (str(event['message']).length > NOTE_LENGTH_LIMIT) errors.push(invalidField('message', '""', `can have at most ${NOTE_LENGTH_LIMIT} characters`));
  }
  for (const message of dns1123SubdomainErrors(namespace)) errors.push(invalidField('namespace', JSON.stringify(namespace), message));
  return errors;
}

/** `validateV1EventSeries`. */
function seriesErrors(event: Json): FieldError[] {
  const series = event['series'];
  if (!isObject(series)) return [];
  const errors: FieldError[] = [];
  if (typeof series['count'] !== 'number' || series['count'] < 2) errors.push(invalidField('series.count', '""', 'should be at least 2'));
  if (!isSet(series['lastObservedTime'])) errors.push(requiredField('series.lastObservedTime', ''));
  return errors;
}

/** The errors of an Event created through `version`, in its core form. */
export function validateEventCreate(coreEvent: KubeObject, namespace: string, version: EventsVersion): FieldError[] {
  const event = coreEvent as unknown as Json;
  const errors = legacyErrors(event, namespace);
  if (version === 'v1') return errors;
  errors.push(...seriesErrors(event));
  if (!isSet(event['eventTime'])) errors.push(requiredField('eventTime', ''));
  const type = str(event['type']);
  if (type !== 'Normal' && type !== 'Warning') errors.push(invalidField('type', '""', `has invalid value: ${type}`));
  if (isSet(event['firstTimestamp'])) errors.push(invalidField('firstTimestamp', '""', 'needs to be unset'));
  if (isSet(event['lastTimestamp'])) errors.push(invalidField('lastTimestamp', '""', 'needs to be unset'));
  if (typeof event['count'] === 'number' && event['count'] !== 0) errors.push(invalidField('count', '""', 'needs to be unset'));
  const source = isObject(event['source']) ? event['source'] : {};
  if (str(source['component']) !== '' || str(source['host']) !== '') errors.push(invalidField('source', '""', 'needs to be unset'));
  return errors;
}

/** Go's `time.Time.String()` of an RFC 3339 time: `2006-01-02 15:04:05.999999999 +0000 UTC`. */
function goTime(value: unknown): string {
  if (typeof value !== 'string' || value === '') return '0001-01-01 00:00:00 +0000 UTC';
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:\.(\d+))?/.exec(value);
  if (match === null) return value;
  const fraction = (match[3] ?? '').replace(/0+$/, '');
  return `${match[1]} ${match[2]}${fraction === '' ? '' : `.${fraction}`} +0000 UTC`;
}

/** `%#v` of an internal `core.ObjectReference`, how an immutable-field error prints one. */
function goObjectReference(value: unknown): string {
  if (!isObject(value)) return 'null';
  const fields = ['Kind', 'Namespace', 'Name', 'UID', 'APIVersion', 'ResourceVersion', 'FieldPath'];
  const json = ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'];
  return `core.ObjectReference{${fields.map((f, i) => `${f}:${JSON.stringify(str(value[json[i]!]))}`).join(', ')}}`;
}

function goEventSource(value: unknown): string {
  const source = isObject(value) ? value : {};
  return `core.EventSource{Component:${JSON.stringify(str(source['component']))}, Host:${JSON.stringify(str(source['host']))}}`;
}

/** The core members an events.k8s.io/v1 update may not change, with how Go prints their new value. */
const IMMUTABLE: readonly (readonly [path: string, member: string, print: (value: unknown) => string])[] = [
  ['involvedObject', 'involvedObject', goObjectReference],
  ['reason', 'reason', (v) => JSON.stringify(str(v))],
  ['message', 'message', (v) => JSON.stringify(str(v))],
  ['source', 'source', goEventSource],
  ['firstTimestamp', 'firstTimestamp', goTime],
  ['lastTimestamp', 'lastTimestamp', goTime],
  ['count', 'count', (v) => String(typeof v === 'number' ? v : 0)],
  ['reason', 'reason', (v) => JSON.stringify(str(v))],
  ['type', 'type', (v) => JSON.stringify(str(v))],
  ['eventTime', 'eventTime', goTime],
  ['action', 'action', (v) => JSON.stringify(str(v))],
  ['related', 'related', goObjectReference],
  ['reportingController', 'reportingComponent', (v) => JSON.stringify(str(v))],
  ['reportingInstance', 'reportingInstance', (v) => JSON.stringify(str(v))],
];

function sameMember(member: string, a: unknown, b: unknown): boolean {
  const normal = (v: unknown): string => {
    if (member === 'count') return String(typeof v === 'number' ? v : 0);
    if (v === undefined || v === null || v === '') return '';
    if (isObject(v) && Object.values(v).every((x) => x === undefined || x === '')) return '';
    return JSON.stringify(v, Object.keys(isObject(v) ? v : {}).sort());
  };
  return normal(a) === normal(b);
}

/** The errors of an update of an Event through `version`, both in their core form. */
export function validateEventUpdate(next: KubeObject, old: KubeObject, namespace: string, version: EventsVersion): FieldError[] {
  const event = next as unknown as Json;
  const before = old as unknown as Json;
  const errors = legacyErrors(event, namespace);
  if (version === 'v1') return errors;
  if (!sameMember('series', event['series'], before['series'])) errors.push(...seriesErrors(event));
  for (const [path, member, print] of IMMUTABLE) {
    if (!sameMember(member, event[member], before[member])) errors.push(invalidField(path, print(event[member]), 'field is immutable'));
  }
  return errors;
}
