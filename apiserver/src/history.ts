import type { KubeObject } from 'rx-informer';
import { stringifyWithBase, type JsonSpans } from './wireJson';

/**
 * What the loopback server stores and streams: objects with their wire JSON, and change events
 * (kept per resource by `eventHistory.ts`) with the watch lines they become.
 *
 * Stored objects are immutable, so each version is serialized at most once; lists, GETs and every
 * watcher's event lines share that text, and writers copy it straight into their socket chunks.
 * (The text stays a string: one ArrayBuffer per object would make V8 collect garbage far more often.)
 */

/** An object as stored, with its wire JSON computed at most once per version. */
export interface StoredObject {
  readonly key: string;
  readonly object: KubeObject;
  /**
   * The cached `JSON.stringify(object)`. Someone who can render it more cheaply may set it before
   * first use (the benchmark server does); it must then equal what JSON.stringify would give.
   */
  json: string | undefined;
  /** Where this version's fields sit in `json`, kept until the next version has reused them. */
  spans: JsonSpans | undefined;
  /** The version this one replaced, while this one is not serialized yet: its text is reused. */
  base: StoredObject | undefined;
}

/** The wire JSON of a stored object, serialized once per version, reusing the previous version's text. */
export function jsonOf(entry: StoredObject): string {
  if (entry.json === undefined) {
    const base = entry.base;
    const reuse = base?.json !== undefined && base.spans !== undefined ? { json: base.json, spans: base.spans } : undefined;
    const { json, spans } = stringifyWithBase(entry.object, reuse);
    entry.json = json;
    entry.spans = spans;
    // Only this version's successor will read these spans.
    if (base !== undefined) base.spans = undefined;
  }
  entry.base = undefined;
  return entry.json;
}

/**
 * Wraps an object for storage; `replaces` is the version it supersedes, whose text its JSON may
 * reuse. Links are never chained: a version keeps its base only until it is serialized, and only a
 * serialized version (with spans) becomes a base.
 */
export function storedObject(key: string, object: KubeObject, replaces?: StoredObject): StoredObject {
  if (replaces !== undefined) replaces.base = undefined;
  const base = replaces?.spans !== undefined ? replaces : undefined;
  return { key, object, json: undefined, spans: undefined, base };
}

/** Watch event types the store produces (BOOKMARK and ERROR are the watch handler's). */
export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One change of one object, at one resourceVersion. */
export interface StoreEvent {
  readonly rv: number;
  readonly type: ChangeType;
  readonly namespace: string | undefined;
  /** The new state; for DELETED the last state, carrying the deletion's resourceVersion. */
  readonly object: StoredObject;
  /** The state before the change (MODIFIED, DELETED); undefined for ADDED. */
  readonly prev: StoredObject | undefined;
  /** The previous state stamped with this event's resourceVersion, serialized on first need. */
  stampedPrev: string | undefined;
}

/**
 * One line of a watch stream as pieces written back to back: the object's cached JSON is shared,
 * never concatenated into a per-event string.
 */
export type WireLine = readonly string[];

const LINE_END = '}\n';
const PREFIXES: Readonly<Record<ChangeType, string>> = {
  ADDED: '{"type":"ADDED","object":',
  MODIFIED: '{"type":"MODIFIED","object":',
  DELETED: '{"type":"DELETED","object":',
};

/** `{"type":T,"object":<json>}\n` around an object's shared JSON. */
export function objectLine(type: ChangeType, json: string): WireLine {
  return [PREFIXES[type], json, LINE_END];
}

/** `{"type":T,"object":<json>}\n` for lines made once (ERROR, BOOKMARK). */
export function watchLine(type: string, json: string): WireLine {
  return [`{"type":"${type}","object":${json}}\n`];
}

/**
 * The line a watcher receives for an event, by how its selection saw the object:
 * `as` is the type to send; `DELETED_PREV` is the previous state stamped with the event's
 * resourceVersion (an object that stopped matching a selector, as the watch cache sends it).
 */
export function eventLine(event: StoreEvent, as: ChangeType | 'DELETED_PREV'): WireLine {
  if (as !== 'DELETED_PREV') return objectLine(as, jsonOf(event.object));
  if (event.stampedPrev === undefined) {
    const prev = event.prev!.object;
    event.stampedPrev = JSON.stringify({ ...prev, metadata: { ...prev.metadata, resourceVersion: String(event.rv) } });
  }
  return objectLine('DELETED', event.stampedPrev);
}
