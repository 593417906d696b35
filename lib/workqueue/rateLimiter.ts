/**
 * How long a failed key waits before its next reconcile: client-go's `DefaultControllerRateLimiter`
 * (util/workqueue/default_rate_limiters.go), the larger of two answers:
 *
 * - **per key**, exponential: `baseDelay · 2^failures`, capped at `maxDelay` (5 ms doubling to
 *   1000 s), so one broken object backs off alone without slowing the others;
 * - **overall**, a token bucket (10 per second, burst 100, golang.org/x/time/rate's `Reserve`),
 *   so a thousand keys failing at once retry at 10 per second instead of hammering the API server.
 *
 * Time is whatever the caller passes as `now` (the scheduler's clock), so the bucket runs in
 * virtual time in tests. Pure bookkeeping: no timers here.
 */

/** Retry pacing of {@link reconcile}'s failed keys. Every field optional. */
export interface RetryRateLimit {
  /** The first retry delay of a key, ms. Doubles with each further failure. Default 5. */
  readonly baseDelay?: number;
  /** The cap on a key's retry delay, ms. Default 1 000 000 (1000 s). */
  readonly maxDelay?: number;
  /** Retries per second across all keys, once the burst is spent. Default 10; `Infinity` turns the bucket off. */
  readonly qps?: number;
  /** Retries allowed at once before `qps` applies. Default 100. */
  readonly burst?: number;
}

/** client-go's `DefaultControllerRateLimiter` numbers. */
export const defaultRetryRateLimit: Required<RetryRateLimit> = Object.freeze({ baseDelay: 5, maxDelay: 1_000_000, qps: 10, burst: 100 });

/** The larger of a per-key exponential backoff and an overall token bucket. */
export class RetryLimiter {
  private readonly failureCounts = new Map<string, number>();
  private readonly config: Required<RetryRateLimit>;
  /** Tokens in the bucket at `last`; negative while reservations are queued into the future. */
  private tokens: number;
  private last: number | undefined;

  /** @throws RangeError for a negative or non-finite delay, a delay cap below the base, qps <= 0 or burst < 1 */
  constructor(config: RetryRateLimit = {}) {
    const defaults = defaultRetryRateLimit;
    const resolved: Required<RetryRateLimit> = {
      baseDelay: config.baseDelay ?? defaults.baseDelay,
      maxDelay: config.maxDelay ?? defaults.maxDelay,
      qps: config.qps ?? defaults.qps,
      burst: config.burst ?? defaults.burst,
    };
    if (!(resolved.baseDelay >= 0) || !Number.isFinite(resolved.baseDelay)) throw new RangeError(`baseDelay must be a finite number >= 0, got ${resolved.baseDelay}`);
    if (!(resolved.maxDelay >= resolved.baseDelay) || !Number.isFinite(resolved.maxDelay)) {
      throw new RangeError(`maxDelay must be a finite number >= baseDelay (${resolved.baseDelay}), got ${resolved.maxDelay}`);
    }
    if (!(resolved.qps > 0)) throw new RangeError(`qps must be > 0 (Infinity turns the bucket off), got ${resolved.qps}`);
    if (!(resolved.burst >= 1) || !Number.isFinite(resolved.burst)) throw new RangeError(`burst must be a finite number >= 1, got ${resolved.burst}`);
    this.config = resolved;
    this.tokens = resolved.burst;
  }

  /** Records one more failure of `key` and returns how long (ms) to wait before retrying it (client-go's `When`). */
  whenFailed(key: string, now: number): number {
    const exponent = this.failureCounts.get(key) ?? 0;
    this.failureCounts.set(key, exponent + 1);
    const { baseDelay, maxDelay } = this.config;
    // 2^exponent overflows to Infinity from exponent 1024 on; the cap takes over long before.
    const perKey = Math.min(baseDelay * 2 ** exponent, maxDelay);
    return Math.max(perKey, this.reserve(now));
  }

  /** Failures of `key` since it last succeeded (client-go's `NumRequeues`). */
  failures(key: string): number {
    return this.failureCounts.get(key) ?? 0;
  }

  /** Keys with at least one failure not yet forgotten. */
  get failingKeys(): number {
    return this.failureCounts.size;
  }

  /** Forgets `key`'s failures: its next failure starts again at `baseDelay` (client-go's `Forget`). */
  forget(key: string): void {
    this.failureCounts.delete(key);
  }

  /**
   * Takes one token, going into debt when the bucket is empty, and returns how long until that
   * token exists: x/time/rate's `Reserve().Delay()`. Debt is how later callers queue behind
   * earlier ones: the 102nd failure in an instant waits 200 ms at 10 per second.
   */
  private reserve(now: number): number {
    const { qps, burst } = this.config;
    if (qps === Infinity) return 0;
    const elapsed = this.last === undefined ? 0 : Math.max(0, now - this.last);
    this.tokens = Math.min(burst, this.tokens + (elapsed * qps) / 1000) - 1;
    // As x/time/rate's advance(): a clock that went backwards adds nothing and moves the mark back.
    this.last = now;
    return this.tokens < 0 ? (-this.tokens / qps) * 1000 : 0;
  }
}

