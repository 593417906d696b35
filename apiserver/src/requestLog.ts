import type { Verb } from './auth';
import type { Fault } from './faults';

/** One request the loopback server answered, recorded when its status line was decided. */
export interface RequestRecord {
  readonly method: string;
  /** The URL path, without the query. */
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly verb: Verb | 'discovery' | 'other';
  /** Plural resource name, when the path names a served resource. */
  readonly resource: string | undefined;
  readonly namespace: string | undefined;
  /** The HTTP status sent (200 for a watch, even one that then carries an ERROR event). */
  readonly status: number;
  /** The injected fault that shaped this request, if any. */
  readonly fault: Fault['kind'] | undefined;
  /** `Date.now()` when the request arrived. */
  readonly time: number;
}

/** Every request the server answered, in arrival order of their answers. */
export interface RequestLog {
  readonly entries: readonly RequestRecord[];
  /** Forgets every entry so far. */
  clear(): void;
}

/** Most entries kept: a long-running server (the CLI, a soak test) forgets its oldest requests. */
export const REQUEST_LOG_LIMIT = 100_000;

/** The server's request log. */
export class RequestLogImpl implements RequestLog {
  private records: RequestRecord[] = [];

  get entries(): readonly RequestRecord[] {
    return this.records;
  }

  add(record: RequestRecord): void {
    // Dropping a tenth at a time keeps the trimming cost amortized O(1) per request.
    if (this.records.length >= REQUEST_LOG_LIMIT) this.records = this.records.slice(REQUEST_LOG_LIMIT / 10);
    this.records.push(record);
  }

  clear(): void {
    this.records = [];
  }
}
