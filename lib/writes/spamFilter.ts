/**
 * `tools/record`'s spam filter (`EventSourceObjectSpamFilter` in `events_cache.go`): a token bucket
 * per source and object, starting full at `burst` tokens and refilled at `refillPerSecond`; an
 * event that finds its bucket empty is dropped. The buckets live in a cache of at most `maxKeys`
 * (least recently used goes first), as client-go's LRU of 4 096.
 */
export class SpamFilter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  /**
   * @param burst tokens a bucket starts with and holds at most.
   * @param refillPerSecond tokens added per second.
   * @param maxKeys buckets kept; the least recently used is forgotten beyond it (it starts full again when next seen).
   */
  constructor(
    private readonly burst: number,
    private readonly refillPerSecond: number,
    private readonly maxKeys: number,
  ) {}

  /**
   * Takes a token from `key`'s bucket at `nowMs`: true when there was one (the event may be
   * written), false when the bucket was empty (drop it). O(1).
   */
  tryTake(key: string, nowMs: number): boolean {
    const found = this.buckets.get(key);
    const bucket = found ?? { tokens: this.burst, at: nowMs };
    if (found !== undefined) this.buckets.delete(key);
    bucket.tokens = Math.min(this.burst, bucket.tokens + (Math.max(0, nowMs - bucket.at) / 1000) * this.refillPerSecond);
    bucket.at = nowMs;
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    // Re-inserted at the end: the Map's order is the order of last use.
    this.buckets.set(key, bucket);
    if (this.buckets.size > this.maxKeys) this.buckets.delete(this.buckets.keys().next().value!);
    return allowed;
  }

  /** Buckets held. */
  get size(): number {
    return this.buckets.size;
  }
}
