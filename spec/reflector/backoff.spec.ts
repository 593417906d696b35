import { MAX_TIMER_MS } from '../../lib/base/longDelays';
import { backoffDelay, defaultBackoffConfig, initialBackoffState, nextBackoff, resolveBackoffConfig } from '../../lib/reflector/backoff';
import type { BackoffState } from '../../lib/reflector/backoff';

const noJitter = resolveBackoffConfig({ jitter: 'none' });

function delays(failureTimes: number[], config = noJitter, random = 1): number[] {
  let state: BackoffState = initialBackoffState;
  return failureTimes.map((now) => {
    const next = nextBackoff(state, { now, random }, config);
    state = next.state;
    return next.delayMs;
  });
}

describe('backoffDelay', () => {
  it('doubles from 800 ms and stops at 30 s (the low end of each draw)', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7, 60, 2000].map((step) => backoffDelay(step, 0, defaultBackoffConfig))).toEqual([
      800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000, 30_000, 30_000,
    ]);
  });

  it("draws from [d, 2d) by default, as client-go's wait.Jitter(d, 1.0): never shorter than d, the cap applied before the jitter", () => {
    expect(backoffDelay(0, 0, defaultBackoffConfig)).toBe(800);
    expect(backoffDelay(0, 0.5, defaultBackoffConfig)).toBe(1200);
    expect(backoffDelay(0, 0.999, defaultBackoffConfig)).toBeCloseTo(1599.2);
    expect(backoffDelay(60, 0.5, defaultBackoffConfig)).toBe(45_000);
  });

  it("draws from [0, d) with 'full' jitter, and ignores random with 'none'", () => {
    const full = resolveBackoffConfig({ jitter: 'full' });
    expect(backoffDelay(2, 0.5, full)).toBe(1600);
    expect(backoffDelay(2, 0, full)).toBe(0);
    expect(backoffDelay(2, 0.5, noJitter)).toBe(3200);
  });
});

describe('nextBackoff', () => {
  it('grows with back-to-back failures', () => {
    // Each failure happens as soon as the previous retry starts.
    expect(delays([0, 800, 2400, 5600])).toEqual([800, 1600, 3200, 6400]);
  });

  it('starts over when the last retry started 2 min or more before the failure', () => {
    expect(delays([0, 800, 2400 + 120_000])).toEqual([800, 1600, 800]);
    expect(delays([0, 800, 2400 + 119_999])).toEqual([800, 1600, 3200]);
  });

  it('does not count a long Retry-After wait as healthy time', () => {
    let state: BackoffState = initialBackoffState;
    const first = nextBackoff(state, { now: 0, random: 1, retryAfterSeconds: 300 }, noJitter);
    expect(first.delayMs).toBe(300_000);
    state = first.state;
    expect(nextBackoff(state, { now: 300_000, random: 1 }, noJitter).delayMs).toBe(1600);
  });

  it('caps an absurd Retry-After at 2^31 − 1 ms (about 24.8 days), but never its own delay, whatever maxMs', () => {
    expect(nextBackoff(initialBackoffState, { now: 0, random: 1, retryAfterSeconds: 1e12 }, noJitter).delayMs).toBe(MAX_TIMER_MS);
    const monthly = resolveBackoffConfig({ initialMs: 30 * 86_400_000, maxMs: 30 * 86_400_000, jitter: 'none' });
    expect(nextBackoff(initialBackoffState, { now: 0, random: 1, retryAfterSeconds: 1e12 }, monthly).delayMs).toBe(30 * 86_400_000);
  });

  it('waits for Retry-After when it is longer than the backoff, and for the backoff otherwise', () => {
    expect(nextBackoff(initialBackoffState, { now: 0, random: 1, retryAfterSeconds: 5 }, noJitter).delayMs).toBe(5000);
    expect(nextBackoff(initialBackoffState, { now: 0, random: 1, retryAfterSeconds: 0.5 }, noJitter).delayMs).toBe(800);
  });

  it('waits as at the cap, from the first failure, for a failure that cannot heal soon', () => {
    expect(nextBackoff(initialBackoffState, { now: 0, random: 0, atCap: true }, defaultBackoffConfig).delayMs).toBe(30_000);
    expect(nextBackoff(initialBackoffState, { now: 0, random: 0.5, atCap: true }, defaultBackoffConfig).delayMs).toBe(45_000);
    expect(nextBackoff(initialBackoffState, { now: 0, random: 0, retryAfterSeconds: 100, atCap: true }, defaultBackoffConfig).delayMs).toBe(100_000);
  });

  it('never lets the step overflow however long the outage', () => {
    let state: BackoffState = initialBackoffState;
    for (let i = 0; i < 5000; i++) state = nextBackoff(state, { now: i * 30_000, random: 1 }, noJitter).state;
    expect(Number.isFinite(Math.pow(2, state.step))).toBe(true);
    expect(nextBackoff(state, { now: 5000 * 30_000, random: 1 }, noJitter).delayMs).toBe(30_000);
  });
});

describe('resolveBackoffConfig', () => {
  it('fills in client-go defaults, keeping given values', () => {
    expect(resolveBackoffConfig({ maxMs: 10_000, initialMs: undefined })).toEqual({ ...defaultBackoffConfig, maxMs: 10_000 });
  });

  it('accepts a cap past what one Node timer holds (2^31 − 1 ms): the wait is chained', () => {
    expect(resolveBackoffConfig({ maxMs: 2 ** 31 }).maxMs).toBe(2 ** 31);
  });

  it.each([{ initialMs: -1 }, { maxMs: Number.NaN }, { resetAfterMs: Infinity }, { maxMs: Infinity }, { factor: 0.9 }, { jitter: 'some' as 'add' }])('rejects %p with a RangeError', (config) => {
    expect(() => resolveBackoffConfig(config)).toThrow(RangeError);
  });
});
