import type { Hash64 } from './fnv1a64';

/**
 * Buckets: the 2^64 hash space of KEP-5866 cut into `count` contiguous ranges. Bucket `b` holds
 * the hashes in [⌈b·2^64/count⌉, ⌈(b+1)·2^64/count⌉), so a set of buckets is a set of ranges
 * the API server can filter on (`shardRange(...) || ...`), and a client computes the same bucket
 * from the same hash. With the default 64 buckets, bucket b is [b·2^58, (b+1)·2^58).
 */

/** The most buckets a ring may have: bucket lookup stays exact in doubles up to 2^16. */
export const MAX_BUCKETS = 65_536;

/** The exclusive end of the hash space as KEP-5866 writes it (apimachinery `pkg/sharding/types.go`). */
const END_OF_SPACE = '0x10000000000000000';
const TWO_TO_32 = 0x1_0000_0000;

/** The field a ring hashes, as a shard selector names it (apiserver `pkg/sharding/parser.go`). */
export type ShardField = 'object.metadata.uid' | 'object.metadata.namespace';

/**
 * The bucket of `hash` among `count`: ⌊hash·count/2^64⌋.
 *
 * ## Example
 * ```ts
 * bucketOf({ hi: 0x80000000, lo: 0 }, 64); // 32
 * ```
 */
export function bucketOf(hash: Hash64, count: number): number {
  return Math.floor((hash.hi * count + Math.floor((hash.lo * count) / TWO_TO_32)) / TWO_TO_32);
}

/** The first hash of bucket `bucket` (or the end of the space, for `bucket === count`), as `0x` and 16 hex digits. */
export function bucketStart(bucket: number, count: number): string {
  if (bucket >= count) return END_OF_SPACE;
  // ⌈b·2^64/count⌉: the smallest hash h with ⌊h·count/2^64⌋ = b.
  const start = ((BigInt(bucket) << 64n) + BigInt(count) - 1n) / BigInt(count);
  return `0x${start.toString(16).padStart(16, '0')}`;
}

/** Runs of consecutive buckets, `[first, last]` inclusive, in order. */
export function bucketRuns(buckets: readonly number[]): [number, number][] {
  const sorted = [...new Set(buckets)].sort((a, b) => a - b);
  const runs: [number, number][] = [];
  for (const bucket of sorted) {
    const last = runs[runs.length - 1];
    if (last !== undefined && last[1] === bucket - 1) last[1] = bucket;
    else runs.push([bucket, bucket]);
  }
  return runs;
}

/**
 * The KEP-5866 shard selector that matches exactly `buckets` (adjacent ones merged into one
 * range), in the form the API server echoes (`Selector.String()`): ranges joined by ` || `.
 *
 * ## Example
 * ```ts
 * shardSelectorOf([0, 1, 63], 64, 'object.metadata.uid');
 * // "shardRange(object.metadata.uid, '0x0000000000000000', '0x0800000000000000') || shardRange(object.metadata.uid, '0xfc00000000000000', '0x10000000000000000')"
 * ```
 *
 * @throws RangeError for an empty set: the API server refuses an empty selector.
 */
export function shardSelectorOf(buckets: readonly number[], count: number, field: ShardField): string {
  const runs = bucketRuns(buckets);
  if (runs.length === 0) throw new RangeError('a shard selector needs at least one bucket');
  return runs.map(([first, last]) => `shardRange(${field}, '${bucketStart(first, count)}', '${bucketStart(last + 1, count)}')`).join(' || ');
}

/** A bucket set as the short text a Lease annotation holds: `0-3,7,9-12`; '' for none. */
export function formatBuckets(buckets: readonly number[]): string {
  return bucketRuns(buckets)
    .map(([first, last]) => (first === last ? String(first) : `${first}-${last}`))
    .join(',');
}

/**
 * The buckets `text` names ({@link formatBuckets}'s form), sorted, or undefined when it is not
 * that form or names a bucket outside [0, count): someone else's annotation is input, not trusted.
 */
export function parseBuckets(text: string, count: number): number[] | undefined {
  if (text === '') return [];
  const buckets: number[] = [];
  for (const part of text.split(',')) {
    const match = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(part);
    if (match === null) return undefined;
    const first = Number(match[1]);
    const last = match[2] === undefined ? first : Number(match[2]);
    if (last < first || last >= count) return undefined;
    for (let bucket = first; bucket <= last; bucket++) buckets.push(bucket);
  }
  return [...new Set(buckets)].sort((a, b) => a - b);
}
