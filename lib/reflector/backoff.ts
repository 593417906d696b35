import { MAX_TIMER_MS } from '../base/longDelays';

/**
 * The reflector's retry policy, as pure functions: client-go's backoff sequence and its reset rule.
 * The `backoff()` operator (operators/backoff.ts) applies the same policy to any stream.
 */

/**
 * How retries are spaced. The defaults are client-go's reflector backoff (`tools/cache/reflector.go`:
 * `wait.Backoff{Duration: 800ms, Factor: 2, Jitter: 1.0, Cap: 30s}` with a 2 min reset): a base
 * delay of 800 ms doubling up to 30 s, each wait drawn from [base, 2 × base) (apimachinery's
 * `wait.Jitter(d, 1.0)`, applied after the cap), so never shorter than 800 ms and at most 60 s.
 * At the cap a crowd of informers that lost the same API server spreads its retries over
 * [30 s, 60 s) instead of arriving together (kubernetes #6770).
 *
 * One difference from client-go, on purpose: the sequence starts over only after `resetAfterMs`
 * without a failure. client-go's backoff manager starts it over every 2 min counted from its last
 * reset, failures or not, so during a long outage each of its reflectors comes back to 800 ms
 * every 2 min. docs/reliability.md measures both policies against each other.
 */
export interface BackoffConfig {
  /** The first delay, ms. Default 800. */
  initialMs?: number;
  /**
   * The cap on the delay, ms (Retry-After may ask for longer and is honoured). Any finite value:
   * a cap past 24.8 days (what one Node timer holds) is waited in full. Default 30_000.
   */
  maxMs?: number;
  /** Growth per consecutive failure. Default 2. */
  factor?: number;
  /** After this long (ms) since the last retry started without a new failure, start again from `initialMs`. Default 120_000. */
  resetAfterMs?: number;
  /**
   * How each wait is drawn from the computed delay d (`min(maxMs, initialMs × factor^n)`):
   * `'add'`: uniform in [d, 2d), client-go's (`wait.Jitter(d, 1.0)`): never shorter than d;
   * `'full'`: uniform in [0, d) (the "full jitter" of AWS's backoff article): spreads a crowd over
   * the widest window, but a first retry can come at once; `'none'`: exactly d. Default `'add'`.
   */
  jitter?: 'add' | 'full' | 'none';
}

/** A {@link BackoffConfig} with every default filled in. */
export type ResolvedBackoffConfig = Required<Readonly<BackoffConfig>>;

/**
 * client-go's reflector defaults: 800 ms doubling to a 30 s cap, each wait in [d, 2d), reset after
 * 2 min without a failure.
 *
 * ## Example
 * ```ts
 * informer(kubeConfig, pods, { backoff: { ...defaultBackoffConfig, maxMs: 5_000 } });
 * ```
 */
export const defaultBackoffConfig: ResolvedBackoffConfig = Object.freeze({
  initialMs: 800,
  maxMs: 30_000,
  factor: 2,
  resetAfterMs: 120_000,
  jitter: 'add',
});

/**
 * The retries of a resource the API server does not serve (a 404 on its collection: its
 * CustomResourceDefinition deleted, or not installed yet): 5 s doubling to a 2 min cap, each wait
 * drawn from [d, 2d), so at most one list per 2 to 4 min per informer while the resource is gone,
 * and a resource that comes back is found within twice the wait reached. Its own sequence, apart
 * from the other failures' (a 500 between two 404s still waits 800 ms), started over once the
 * resource is served again. client-go has no such policy: its reflector retries a 404 like any
 * failure, at most every 30 to 60 s, for ever (controller-runtime #935).
 */
export const defaultResourceGoneBackoffConfig: ResolvedBackoffConfig = Object.freeze({
  initialMs: 5_000,
  maxMs: 120_000,
  factor: 2,
  resetAfterMs: 120_000,
  jitter: 'add',
});

/**
 * Fills in defaults (client-go's, or `defaults`) and rejects nonsense early.
 * @throws RangeError when a duration is negative or not finite, or `factor` is below 1.
 */
export function resolveBackoffConfig(config: BackoffConfig = {}, defaults: ResolvedBackoffConfig = defaultBackoffConfig): ResolvedBackoffConfig {
  const resolved: ResolvedBackoffConfig = { ...defaults, ...withoutUndefined(config) };
  for (const key of ['initialMs', 'maxMs', 'resetAfterMs'] as const) {
    if (!Number.isFinite(resolved[key]) || resolved[key] < 0) {
      throw new RangeError(`backoff ${key} must be a finite number >= 0, got ${resolved[key]}`);
    }
  }
  if (!Number.isFinite(resolved.factor) || resolved.factor < 1) {
    throw new RangeError(`backoff factor must be a finite number >= 1, got ${resolved.factor}`);
  }
  if (resolved.jitter !== 'add' && resolved.jitter !== 'full' && resolved.jitter !== 'none') {
    throw new RangeError(`backoff jitter must be 'add', 'full' or 'none', got ${String(resolved.jitter)}`);
  }
  return resolved;
}

/** Where a backoff sequence stands. Immutable; start from {@link initialBackoffState}. */
export interface BackoffState {
  /** Failures counted since the last reset: the next delay grows from it. */
  readonly step: number;
  /** Scheduler time (ms) the last retry started (the end of the last wait); undefined before any failure. */
  readonly retriedAt: number | undefined;
}

/** No failure yet. */
export const initialBackoffState: BackoffState = Object.freeze({ step: 0, retriedAt: undefined });

/**
 * The wait before retry number `step` (0-based): the base `min(maxMs, initialMs * factor^step)`,
 * then jittered with `random` (in [0, 1)): `'add'` gives base × (1 + random), `'full'`
 * base × random, `'none'` the base. The cap applies to the base, before the jitter, as in
 * apimachinery's `wait.Backoff`.
 */
export function backoffDelay(step: number, random: number, config: ResolvedBackoffConfig): number {
  return jittered(Math.min(config.maxMs, config.initialMs * Math.pow(config.factor, step)), random, config);
}

function jittered(base: number, random: number, config: ResolvedBackoffConfig): number {
  switch (config.jitter) {
    case 'add':
      return base * (1 + clampUnit(random));
    case 'full':
      return base * clampUnit(random);
    case 'none':
      return base;
  }
}

/** What {@link nextBackoff} needs to know about one failure. */
export interface BackoffFailure {
  /** Scheduler time (ms) of the failure. */
  readonly now: number;
  /** A number in [0, 1] for the jitter (Math.random() in production). */
  readonly random: number;
  /** What the server asked for (Retry-After or Status details), if anything. */
  readonly retryAfterSeconds?: number | undefined;
  /**
   * The failure cannot heal by retrying soon (a 400: the request itself is wrong): wait as at the
   * cap (`maxMs`, jittered), whatever the step.
   */
  readonly atCap?: boolean;
}

/**
 * Records one failure and says how long to wait: the jittered exponential delay, or the server's
 * Retry-After when that is longer. The sequence starts over when the last retry started at least
 * `resetAfterMs` ago (client-go's stated intent: "if we don't backoff for 2min, assume API server
 * is healthy"), measured from the end of the wait so that a long Retry-After does not count as
 * healthy time.
 */
export function nextBackoff(
  state: BackoffState,
  failure: BackoffFailure,
  config: ResolvedBackoffConfig,
): { readonly delayMs: number; readonly state: BackoffState } {
  const healthyFor = state.retriedAt === undefined ? 0 : failure.now - state.retriedAt;
  const step = healthyFor >= config.resetAfterMs ? 0 : state.step;
  const retryAfterMs = Math.max(0, (failure.retryAfterSeconds ?? 0) * 1000);
  const exponential = failure.atCap === true ? jittered(config.maxMs, failure.random, config) : backoffDelay(step, failure.random, config);
  // The server's Retry-After is honoured up to 2^31 − 1 ms (about 24.8 days), far past any a
  // server means, so that a garbled header cannot park the informer for years; our own delays
  // (the exponential part, up to maxMs) are the user's and are waited whatever their length.
  const delayMs = Math.max(exponential, Math.min(MAX_TIMER_MS, retryAfterMs));
  // The step stops growing at the cap so the exponent never overflows.
  const capped = config.initialMs * Math.pow(config.factor, step) >= config.maxMs;
  return { delayMs, state: { step: capped ? step : step + 1, retriedAt: failure.now + delayMs } };
}

function withoutUndefined(config: BackoffConfig): BackoffConfig {
  return Object.fromEntries(Object.entries(config).filter(([, value]) => value !== undefined));
}

function clampUnit(value: number): number {
  return Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 1;
}
