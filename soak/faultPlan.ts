import { seededRandom, type Random } from '../apiserver/src/random';

/**
 * Seeded fault plans for the chaos soak: which fault comes when, with which parameters. The same
 * seed always yields the same plan, so a failing soak is replayed with `SOAK_SEED=<seed>`.
 *
 * A plan covers every fault the loopback server supports. Faults the server applies only to the
 * next matching request (everything but compaction, continue-token expiry and restart) reach the
 * informer when it next lists or watches; the soak keeps watches short so that happens soon.
 */

/** Every kind of fault a plan can hold. */
export const faultKinds = [
  'watchDrop',
  'cutMidLine',
  'stall',
  'garbageLine',
  'compaction',
  'statusBurst',
  'plainText429',
  'tooLargeResourceVersion',
  'continueExpiry',
  'slowWrites',
  'restart',
] as const;

/** The name of one kind of fault. */
export type FaultKind = (typeof faultKinds)[number];

/** The verbs a request-level fault can target. */
export type FaultVerb = 'list' | 'watch';

/** One fault, with the parameters drawn for it. */
export type FaultStep =
  /** The next watch ends cleanly after `afterEvents` events. */
  | { readonly kind: 'watchDrop'; readonly afterEvents: number }
  /** The next watch writes half a line after `afterEvents` events, then the socket is destroyed. */
  | { readonly kind: 'cutMidLine'; readonly afterEvents: number }
  /** The next watch writes nothing for `ms` after `afterEvents` events. */
  | { readonly kind: 'stall'; readonly ms: number; readonly afterEvents: number }
  /** The next watch writes one line that is not JSON after `afterEvents` events. */
  | { readonly kind: 'garbageLine'; readonly afterEvents: number }
  /** The server forgets its watch history: the next re-watch gets 410 and the informer relists. */
  | { readonly kind: 'compaction' }
  /** `times` requests of `verb` get a Status error `code` (a list fault rides on a forced relist). */
  | { readonly kind: 'statusBurst'; readonly code: 429 | 500 | 504; readonly times: number; readonly verb: FaultVerb; readonly retryAfterSeconds: number | undefined }
  /** `times` requests of `verb` get the plain-text priority-and-fairness 429. */
  | { readonly kind: 'plainText429'; readonly times: number; readonly verb: FaultVerb; readonly retryAfterSeconds: number }
  /** One request of `verb` gets 504 "Too large resource version". */
  | { readonly kind: 'tooLargeResourceVersion'; readonly verb: FaultVerb }
  /** During a forced paged relist, every continue token issued so far expires (410). */
  | { readonly kind: 'continueExpiry' }
  /** The next `watches` watches hold every event for `delayMs`. */
  | { readonly kind: 'slowWrites'; readonly delayMs: number; readonly watches: number }
  /** The server drops every connection and listens again on the same port, data kept. */
  | { readonly kind: 'restart' };

/** One entry of a plan: a fault, then churn for `stormMs` while it plays out. */
export interface PlannedFault {
  readonly index: number;
  readonly fault: FaultStep;
  /** How long the churn keeps mutating after the fault is injected, ms. */
  readonly stormMs: number;
}

/** How big and how harsh a plan is. */
export interface FaultPlanOptions {
  /** Number of faults. At least `faultKinds.length` to cover every kind; default 2 × that. */
  readonly steps?: number;
  /** Storm length per fault, ms, drawn uniformly from [min, max]. Default [600, 1200]. */
  readonly stormMs?: { readonly min: number; readonly max: number };
  /** Longest stall, ms. Default 1500 (stays below the informer's idle timeout). */
  readonly maxStallMs?: number;
  /** Longest per-event write delay of a slow writer, ms. Default 40. */
  readonly maxSlowWriteMs?: number;
  /** Most requests one burst fails. Default 4. */
  readonly maxBurst?: number;
  /** Only these kinds (for a targeted replay). Default: all of {@link faultKinds}. */
  readonly kinds?: readonly FaultKind[];
}

/** A seeded plan and the seed it came from. */
export interface FaultPlan {
  readonly seed: number;
  readonly faults: readonly PlannedFault[];
}

/**
 * Draws a fault plan from a seed. Every kind appears at least once when `steps` allows it: the
 * plan walks shuffled rounds of all kinds, so coverage does not depend on luck.
 *
 * ## Example
 * ```ts
 * const plan = makeFaultPlan(42, { steps: 22 });
 * plan.faults.map((f) => f.fault.kind); // the same list on every run
 * ```
 */
export function makeFaultPlan(seed: number, options: FaultPlanOptions = {}): FaultPlan {
  const random = seededRandom(seed);
  const steps = options.steps ?? faultKinds.length * 2;
  if (options.kinds !== undefined && options.kinds.length === 0) throw new RangeError('kinds must name at least one fault kind');
  const storm = options.stormMs ?? { min: 600, max: 1200 };
  if (!Number.isInteger(steps) || steps < 0) throw new RangeError(`steps must be a non-negative integer, got ${steps}`);
  if (!(storm.min >= 0 && storm.max >= storm.min)) throw new RangeError(`stormMs needs 0 <= min <= max, got [${storm.min}, ${storm.max}]`);
  const faults: PlannedFault[] = [];
  let round: FaultKind[] = [];
  for (let index = 0; index < steps; index++) {
    if (round.length === 0) round = shuffled(random, options.kinds ?? faultKinds);
    const kind = round.pop() as FaultKind;
    faults.push({ index, fault: drawFault(random, kind, options), stormMs: Math.round(storm.min + random() * (storm.max - storm.min)) });
  }
  return { seed, faults };
}

/** A seed for a new soak: from `SOAK_SEED` when set (a replay), else fresh. */
export function soakSeed(environment: Readonly<Record<string, string | undefined>> = process.env): number {
  const text = environment['SOAK_SEED'];
  if (text !== undefined && text.trim() !== '') {
    const seed = Number(text);
    if (!Number.isSafeInteger(seed)) throw new RangeError(`SOAK_SEED must be an integer, got ${JSON.stringify(text)}`);
    return seed;
  }
  return Math.floor(Math.random() * 2 ** 31);
}

/** A one-line description of a fault, for logs and reports. */
export function describeFault(fault: FaultStep): string {
  switch (fault.kind) {
    case 'watchDrop':
      return `watch drop after ${fault.afterEvents} events`;
    case 'cutMidLine':
      return `watch cut mid-line after ${fault.afterEvents} events`;
    case 'stall':
      return `watch stall ${fault.ms} ms after ${fault.afterEvents} events`;
    case 'garbageLine':
      return `garbage line after ${fault.afterEvents} events`;
    case 'compaction':
      return 'compaction (410 on re-watch)';
    case 'statusBurst':
      return `${fault.times} × ${fault.code} on ${fault.verb}${fault.retryAfterSeconds === undefined ? '' : ` (Retry-After ${fault.retryAfterSeconds})`}`;
    case 'plainText429':
      return `${fault.times} × plain-text 429 on ${fault.verb} (Retry-After ${fault.retryAfterSeconds})`;
    case 'tooLargeResourceVersion':
      return `504 too large resource version on ${fault.verb}`;
    case 'continueExpiry':
      return 'continue tokens expire during a paged relist';
    case 'slowWrites':
      return `slow writer ${fault.delayMs} ms/event on ${fault.watches} watches`;
    case 'restart':
      return 'API server restart (data kept)';
  }
}

function drawFault(random: Random, kind: FaultKind, options: FaultPlanOptions): FaultStep {
  const maxBurst = options.maxBurst ?? 4;
  const verb = (): FaultVerb => (random() < 0.5 ? 'list' : 'watch');
  const afterEvents = (): number => Math.floor(random() * 20);
  switch (kind) {
    case 'watchDrop':
      return { kind, afterEvents: afterEvents() };
    case 'cutMidLine':
      return { kind, afterEvents: 1 + afterEvents() };
    case 'stall':
      return { kind, ms: 200 + Math.floor(random() * ((options.maxStallMs ?? 1500) - 200)), afterEvents: afterEvents() };
    case 'garbageLine':
      return { kind, afterEvents: afterEvents() };
    case 'compaction':
    case 'continueExpiry':
    case 'restart':
      return { kind };
    case 'statusBurst': {
      const code = ([429, 500, 504] as const)[Math.floor(random() * 3)] as 429 | 500 | 504;
      return { kind, code, times: 1 + Math.floor(random() * maxBurst), verb: verb(), retryAfterSeconds: code === 429 ? 1 : undefined };
    }
    case 'plainText429':
      return { kind, times: 1 + Math.floor(random() * maxBurst), verb: verb(), retryAfterSeconds: 1 };
    case 'tooLargeResourceVersion':
      return { kind, verb: verb() };
    case 'slowWrites':
      return { kind, delayMs: 1 + Math.floor(random() * (options.maxSlowWriteMs ?? 40)), watches: 1 + Math.floor(random() * 2) };
  }
}

function shuffled<T>(random: Random, items: readonly T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}
