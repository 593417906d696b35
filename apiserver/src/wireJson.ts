/**
 * JSON.stringify for stored objects that reuses the text of the version before.
 *
 * An update rarely touches most of an object: edits are spreads that keep unchanged subtrees
 * (`spec`, `metadata.managedFields`, often two thirds of a pod) by reference. Objects in the store
 * are immutable, so a subtree that is the same reference as in the previous version has the same
 * JSON, and its text can be cut from the previous version's JSON instead of serialized again.
 * The result is always exactly what `JSON.stringify(object)` returns.
 */

/**
 * Where the previous version's object-valued fields (top level and one level down) sit in its
 * JSON: `[value, start, end, value, start, end, ...]`, a flat array to stay small.
 */
export type JsonSpans = unknown[];

/** A serialized version to reuse text from. */
export interface JsonBase {
  readonly json: string;
  readonly spans: JsonSpans;
}

/** Fields of nested objects up to this depth are recorded (1: top level, 2: e.g. metadata.managedFields). */
const MAX_DEPTH = 2;

function isPlainRecord(value: object): value is Record<string, unknown> {
  return !Array.isArray(value) && typeof (value as { toJSON?: unknown }).toJSON !== 'function';
}

function reusable(base: JsonBase | undefined, value: object): string | undefined {
  if (base === undefined) return undefined;
  const spans = base.spans;
  for (let i = 0; i < spans.length; i += 3) {
    if (spans[i] === value) return base.json.slice(spans[i + 1] as number, spans[i + 2] as number);
  }
  return undefined;
}

class Writer {
  readonly parts: string[] = [];
  readonly spans: JsonSpans = [];
  private length = 0;

  constructor(private readonly base: JsonBase | undefined) {}

  private push(text: string): void {
    this.parts.push(text);
    this.length += text.length;
  }

  record(record: Record<string, unknown>, depth: number): void {
    let separator = '{';
    for (const key of Object.keys(record)) {
      const value = record[key];
      if (value !== null && typeof value === 'object') {
        const known = reusable(this.base, value);
        const nested = known === undefined && depth < MAX_DEPTH && isPlainRecord(value);
        const text = known ?? (nested ? '' : JSON.stringify(value));
        // A toJSON that answers undefined drops the key, as JSON.stringify does.
        if (text === undefined) continue;
        this.push(`${separator}${JSON.stringify(key)}:`);
        const start = this.length;
        if (nested) this.record(value, depth + 1);
        else this.push(text);
        this.spans.push(value, start, this.length);
      } else {
        // undefined, functions and symbols give undefined: the key is left out.
        const text = JSON.stringify(value) as string | undefined;
        if (text === undefined) continue;
        this.push(`${separator}${JSON.stringify(key)}:${text}`);
      }
      separator = ',';
    }
    this.push(separator === '{' ? '{}' : '}');
  }
}

/**
 * Serializes `object` as JSON.stringify does, reusing from `base` the text of every object-valued
 * field (top level and one level down) whose value is the very same reference. Returns the JSON and
 * its own spans, for the next version.
 */
export function stringifyWithBase(object: object, base: JsonBase | undefined): { readonly json: string; readonly spans: JsonSpans } {
  if (typeof object !== 'object' || object === null || !isPlainRecord(object)) return { json: JSON.stringify(object), spans: [] };
  const writer = new Writer(base);
  writer.record(object, 1);
  // join copies into one flat string, so the new JSON never keeps the old one alive through slices.
  return { json: writer.parts.join(''), spans: writer.spans };
}
