import type { InformerError } from '../base/errors';
import type { RequestEvent, RequestOutcome, RequestSummary } from './requestEvent';

/** The request in flight, as far as reports go: what it is, since when, and its items so far. */
interface OpenRequest {
  readonly request: RequestSummary;
  readonly startedAt: number;
  items: number;
}

/**
 * Turns the reflector's transitions into {@link RequestEvent}s for `reflect({ onRequest })`: one
 * object per request, a counter per item. One per reflector subscription; at most one request is
 * in flight at a time.
 */
export class RequestReporter {
  private current: OpenRequest | undefined;

  constructor(
    private readonly sink: (event: RequestEvent) => void,
    /** Where a throwing sink is reported: it must not stop the reflector. */
    private readonly onSinkError: (error: unknown) => void,
  ) {}

  opened(opening: RequestSummary, relist: boolean, after: InformerError | undefined, continued: boolean, at: number): void {
    // Only the summary: the reflector's request carries more, which is its own business.
    const request: RequestSummary = { kind: opening.kind, resourceVersion: opening.resourceVersion };
    this.current = { request, startedAt: at, items: 0 };
    this.emit({ type: 'opened', request, relist, after, continued, at });
  }

  /** Items received by the request in flight. */
  count(items: number): void {
    if (this.current !== undefined) this.current.items += items;
  }

  /** The request in flight (if any) ended. */
  ended(outcome: RequestOutcome, error: InformerError | undefined, closed: boolean, at: number): void {
    const ending = this.current;
    if (ending === undefined) return;
    this.current = undefined;
    this.emit({ type: 'ended', request: ending.request, outcome, error, closed, items: ending.items, startedAt: ending.startedAt, at });
  }

  private emit(event: RequestEvent): void {
    try {
      this.sink(event);
    } catch (error) {
      this.onSinkError(error);
    }
  }
}
