/**
 * The reflector's retry policy, as pure functions: client-go's backoff sequence and its reset rule.
 * The `backoff()` operator (operators/backoff.ts) applies the same policy to any stream.
 */

/**
 * How retries are spaced. The defaults are client-go's reflector backoff: 800 ms doubling to
 * 30 s, reset after 2 min without a failure. With full jitter a crowd of informers that lost the
 * same API server spreads its reconnects over the whole window instead of arriving together
 * (kubernetes #6770): at the 30 s cap, 1,000 informers average about 33 requests per second.
 */
export interface BackoffConfig {
  /** The first delay, ms. Default 800. */
  initialMs?: number;
  /** The cap on the delay, ms (Retry-After may ask for longer and is honoured). Default 30_000. */
  maxMs?: number;
  /** Growth per consecutive failure. Default 2. */
  factor?: number;
  /** After this long (ms) since the last retry started without a new failure, start again from `initialMs`. Default 120_000. */
  resetAfterMs?: number;
  /** `'full'`: the delay is uniform in [0, computed); `'none'`: exactly the computed delay. Default `'full'`. */
  jitter?: 'full' | 'none';
}

/** The longest delay a Node timer honours; a longer one fires after 1 ms instead. */
export const MAX_TIMER_MS = 2_147_483_647;

/** A {@link BackoffConfig} with every default filled in. */
export type ResolvedBackoffConfig = Required<Readonly<BackoffConfig>>;

/** client-go's reflector defaults. */
export const defaultBackoffConfig: ResolvedBackoffConfig = Object.freeze({
  initialMs: 800,
  maxMs: 30_000,
  factor: 2,
  resetAfterMs: 120_000,
  jitter: 'full',
});

/**
 * Fills in defaults and rejects nonsense early.
 * @throws RangeError when a duration is negative or not finite, or `factor` is below 1.
 */
export function resolveBackoffConfig(config: BackoffConfig = {}): ResolvedBackoffConfig {
  const resolved: ResolvedBackoffConfig = { ...defaultBackoffConfig, ...withoutUndefined(config) };
  for (const key of ['initialMs', 'maxMs', 'resetAfterMs'] as const) {
    if (!Number.isFinite(resolved[key]) || resolved[key] < 0) {
      throw new RangeError(`backoff ${key} must be a finite number >= 0, got ${resolved[key]}`);
    }
  }
  if (resolved.maxMs > MAX_TIMER_MS) throw new RangeError(`backoff maxMs must be <= ${MAX_TIMER_MS}, got ${resolved.maxMs}`);
  if (!Number.isFinite(resolved.factor) || resolved.factor < 1) {
    throw new RangeError(`backoff factor must be a finite number >= 1, got ${resolved.factor}`);
  }
  if (resolved.jitter !== 'full' && resolved.jitter !== 'none') {
    throw new RangeError(`backoff jitter must be 'full' or 'none', got ${String(resolved.jitter)}`);
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
 * The delay before retry number `step` (0-based), before jitter is taken off:
 * `min(maxMs, initialMs * factor^step)`, then scaled by `random` under full jitter.
 */
export function backoffDelay(step: number, random: number, config: ResolvedBackoffConfig): number {
  const ceiling = Math.min(config.maxMs, config.initialMs * Math.pow(config.factor, step));
  return config.jitter === 'full' ? ceiling * clampUnit(random) : ceiling;
}

/** What {@link nextBackoff} needs to know about one failure. */
export interface BackoffFailure {
  /** Scheduler time (ms) of the failure. */
  readonly now: number;
  /** A number in [0, 1] for the jitter (Math.random() in production). */
  readonly random: number;
  /** What the server asked for (Retry-After or Status details), if anything. */
  readonly retryAfterSeconds?: number | undefined;
}

/**
 * Records one failure and says how long to wait: the jittered exponential delay, or the server's
 * Retry-After when that is longer. The sequence starts over when the last retry started at least
 * `resetAfterMs` ago: client-go's rule, measured from the end of the wait so that a long
 * Retry-After does not count as healthy time.
 */
export function nextBackoff(
  state: BackoffState,
  failure: BackoffFailure,
  config: ResolvedBackoffConfig,
): { readonly delayMs: number; readonly state: BackoffState } {
  const healthyFor = state.retriedAt === undefined ? 0 : failure.now - state.retriedAt;
  const step = healthyFor >= config.resetAfterMs ? 0 : state.step;
  const retryAfterMs = Math.max(0, (failure.retryAfterSeconds ?? 0) * 1000);
  // Capped so that an absurd Retry-After cannot overflow the timer into a 1 ms hot loop.
  const delayMs = Math.min(MAX_TIMER_MS, Math.max(backoffDelay(step, failure.random, config), retryAfterMs));
  // The step stops growing at the cap so the exponent never overflows.
  const atCap = config.initialMs * Math.pow(config.factor, step) >= config.maxMs;
  return { delayMs, state: { step: atCap ? step : step + 1, retriedAt: failure.now + delayMs } };
}

function withoutUndefined(config: BackoffConfig): BackoffConfig {
  return Object.fromEntries(Object.entries(config).filter(([, value]) => value !== undefined));
}

function clampUnit(value: number): number {
  return Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 1;
}
