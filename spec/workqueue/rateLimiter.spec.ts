import { defaultRetryRateLimit, RetryLimiter } from '../../lib/workqueue/rateLimiter';

describe('RetryLimiter (client-go DefaultControllerRateLimiter)', () => {
  it('defaults to 5 ms doubling to 1000 s per key, and 10 per second with a burst of 100 overall', () => {
    expect(defaultRetryRateLimit).toEqual({ baseDelay: 5, maxDelay: 1_000_000, qps: 10, burst: 100 });
  });

  it('backs each key off on its own and counts its failures until forgotten', () => {
    const limiter = new RetryLimiter();
    expect([1, 2, 3].map(() => limiter.whenFailed('a', 0))).toEqual([5, 10, 20]);
    expect(limiter.whenFailed('b', 0)).toBe(5);
    expect([limiter.failures('a'), limiter.failures('b'), limiter.failingKeys]).toEqual([3, 1, 2]);
    limiter.forget('a');
    expect([limiter.failures('a'), limiter.failingKeys, limiter.whenFailed('a', 0)]).toEqual([0, 1, 5]);
  });

  it('queues callers behind an empty bucket (x/time/rate Reserve): debt is paid back at qps', () => {
    const limiter = new RetryLimiter({ baseDelay: 0, burst: 2, qps: 10 });
    expect([limiter.whenFailed('a', 0), limiter.whenFailed('b', 0), limiter.whenFailed('c', 0), limiter.whenFailed('d', 0)]).toEqual([0, 0, 100, 200]);
    // At 250 ms the bucket has earned 2.5 tokens against a debt of 2: half a token is there.
    expect(limiter.whenFailed('e', 250)).toBeCloseTo(50, 6);
    expect(limiter.whenFailed('f', 250)).toBeCloseTo(150, 6);
  });

  it('never holds more than burst tokens however long it rested, and ignores a clock that went back', () => {
    const limiter = new RetryLimiter({ baseDelay: 0, burst: 1, qps: 1 });
    expect(limiter.whenFailed('a', 1_000_000)).toBe(0);
    expect(limiter.whenFailed('b', 1_000_000)).toBe(1000);
    expect(limiter.whenFailed('c', 999_000)).toBe(2000);
  });

  it('turns the bucket off with qps Infinity', () => {
    const limiter = new RetryLimiter({ qps: Infinity, burst: 1 });
    expect(Array.from({ length: 5 }, (_, i) => limiter.whenFailed(`k${i}`, 0))).toEqual([5, 5, 5, 5, 5]);
  });
});
