import fc from 'fast-check';
import { bucketOf, bucketRuns, bucketStart, formatBuckets, MAX_BUCKETS, parseBuckets, shardSelectorOf } from '../../lib/sharding/buckets';
import { fnv1a64 } from '../../lib/sharding/fnv1a64';
import { seededRandom } from '../../apiserver/src/random';

const hashOf = (hex: string) => ({ hi: parseInt(hex.slice(0, 8), 16), lo: parseInt(hex.slice(8), 16) });

describe('buckets', () => {
  it('cuts the space into 64 ranges of 2^58 by default', () => {
    expect(bucketStart(0, 64)).toBe('0x0000000000000000');
    expect(bucketStart(1, 64)).toBe('0x0400000000000000');
    expect(bucketStart(32, 64)).toBe('0x8000000000000000');
    expect(bucketStart(64, 64)).toBe('0x10000000000000000');
    expect(bucketOf(hashOf('03ffffffffffffff'), 64)).toBe(0);
    expect(bucketOf(hashOf('0400000000000000'), 64)).toBe(1);
    expect(bucketOf(hashOf('ffffffffffffffff'), 64)).toBe(63);
  });

  it('puts every hash in the bucket whose range holds it, for any bucket count', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), fc.integer({ min: 1, max: MAX_BUCKETS }), (hash, count) => {
        const hex = hash.toString(16).padStart(16, '0');
        const bucket = bucketOf(hashOf(hex), count);
        expect(bucket).toBe(Number((hash * BigInt(count)) >> 64n));
        expect(BigInt(bucketStart(bucket, count)) <= hash).toBe(true);
        expect(hash < BigInt(bucketStart(bucket + 1, count))).toBe(true);
      }),
      { numRuns: 3_000 },
    );
  });

  it('writes a shard selector in the form the API server echoes, adjacent buckets merged', () => {
    expect(shardSelectorOf([1, 0, 63], 64, 'object.metadata.uid')).toBe(
      "shardRange(object.metadata.uid, '0x0000000000000000', '0x0800000000000000') || shardRange(object.metadata.uid, '0xfc00000000000000', '0x10000000000000000')",
    );
    expect(shardSelectorOf([0, 1], 2, 'object.metadata.namespace')).toBe("shardRange(object.metadata.namespace, '0x0000000000000000', '0x10000000000000000')");
    expect(() => shardSelectorOf([], 64, 'object.metadata.uid')).toThrow(RangeError);
  });

  it('writes bucket sets as short runs and reads back only what it wrote', () => {
    expect(bucketRuns([9, 3, 1, 2, 3, 7])).toEqual([
      [1, 3],
      [7, 7],
      [9, 9],
    ]);
    expect(formatBuckets([9, 3, 1, 2, 7])).toBe('1-3,7,9');
    expect(formatBuckets([])).toBe('');
    expect(parseBuckets('1-3,7,9', 64)).toEqual([1, 2, 3, 7, 9]);
    expect(parseBuckets('', 64)).toEqual([]);
    for (const bad of ['1-', 'x', '3-1', '64', '1,,2', ' 1', '0-99999']) expect(parseBuckets(bad, 64)).toBeUndefined();
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 0, max: 63 })), (buckets) => {
        expect(parseBuckets(formatBuckets(buckets), 64)).toEqual([...buckets].sort((a, b) => a - b));
      }),
    );
  });

  it('spreads random (v4) uids evenly: no bucket of 64 gets more than twice its share of 64k', () => {
    // FNV-1a mixes its last bytes into the low bits only, so uids that differ in their last digits
    // alone would bunch up; the API server's uids are random v4 uuids.
    const counts = new Array<number>(64).fill(0);
    const random = seededRandom(7);
    const hex = (digits: number) => Array.from({ length: digits }, () => Math.floor(random() * 16).toString(16)).join('');
    for (let i = 0; i < 65_536; i++) counts[bucketOf(fnv1a64(`${hex(8)}-${hex(4)}-4${hex(3)}-8${hex(3)}-${hex(12)}`), 64)]! += 1;
    expect(Math.max(...counts)).toBeLessThan(2_048);
    expect(Math.min(...counts)).toBeGreaterThan(512);
  });
});
