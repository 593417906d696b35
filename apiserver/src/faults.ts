import type { Verb } from './auth';

/**
 * Scripted failures: the next matching requests get a fault instead of (or on top of) a normal
 * answer, so clients can be tested against every way a real API server or network misbehaves.
 */

/** One scripted failure. Watch-only kinds apply only to watch requests. */
export type Fault =
  /** An HTTP error with a Status body (+ `Retry-After` when `retryAfterSeconds`). */
  | { readonly kind: 'status'; readonly code: number; readonly reason?: string; readonly message?: string; readonly retryAfterSeconds?: number }
  /** The priority-and-fairness 429: plain-text body and a `Retry-After` header. */
  | { readonly kind: 'plainText429'; readonly retryAfterSeconds: number }
  /** 504 Timeout "Too large resource version: X, current: Y", cause ResourceVersionTooLarge. */
  | { readonly kind: 'tooLargeResourceVersion' }
  /** Watch: end the response cleanly after N events. */
  | { readonly kind: 'closeAfterEvents'; readonly events: number }
  /** Watch: after N events, write the first half of the next event's line, then destroy the socket. */
  | { readonly kind: 'cutMidLine'; readonly afterEvents: number }
  /** Watch: after N events (default 0), write nothing for `ms`, then go on with what queued up. */
  | { readonly kind: 'stall'; readonly ms: number; readonly afterEvents?: number }
  /** Watch: after N events (default 0), write one line that is not JSON, then go on. */
  | { readonly kind: 'garbageLine'; readonly afterEvents?: number }
  /** Watch: hold every event for `delayMs` before writing it. */
  | { readonly kind: 'slowWrites'; readonly delayMs: number };

/** Which requests a fault applies to. Unset fields match anything. */
export interface FaultMatch {
  readonly verb?: Verb;
  /** The plural resource name (`pods`). */
  readonly resource?: string;
  /** How many matching requests get the fault; default 1. */
  readonly times?: number;
}

/** Scripts faults on a running loopback server. */
export interface FaultControls {
  /** The next `match.times` (default 1) requests matching `match` get `fault`, in injection order. */
  inject(fault: Fault, match?: FaultMatch): void;
  /** Forgets every pending fault. */
  clear(): void;
  /** Every continue token issued so far now gets 410 Expired. */
  expireContinueTokens(): void;
}

const WATCH_ONLY: ReadonlySet<Fault['kind']> = new Set(['closeAfterEvents', 'cutMidLine', 'stall', 'garbageLine', 'slowWrites']);

/** True for faults that shape a watch stream rather than replace the response. */
export function isWatchFault(fault: Fault): boolean {
  return WATCH_ONLY.has(fault.kind);
}

interface Pending {
  readonly fault: Fault;
  readonly match: FaultMatch;
  remaining: number;
}

/** The server's fault queue. */
export class FaultQueue implements FaultControls {
  private pending: Pending[] = [];

  constructor(private readonly onExpireContinueTokens: () => void) {}

  inject(fault: Fault, match: FaultMatch = {}): void {
    const times = match.times ?? 1;
    if (!Number.isInteger(times) || times < 1) throw new RangeError(`FaultMatch.times must be a positive integer, got ${times}`);
    this.pending.push({ fault, match, remaining: times });
  }

  clear(): void {
    this.pending = [];
  }

  expireContinueTokens(): void {
    this.onExpireContinueTokens();
  }

  /** Takes the first pending fault that applies to a request, counting it down. */
  take(verb: Verb | undefined, resource: string | undefined): Fault | undefined {
    for (let i = 0; i < this.pending.length; i++) {
      const entry = this.pending[i]!;
      if (isWatchFault(entry.fault) && verb !== 'watch') continue;
      if (entry.match.verb !== undefined && entry.match.verb !== verb) continue;
      if (entry.match.resource !== undefined && entry.match.resource !== resource) continue;
      entry.remaining--;
      if (entry.remaining === 0) this.pending.splice(i, 1);
      return entry.fault;
    }
    return undefined;
  }
}
