import fc from 'fast-check';
import { bucketsOf, placeBuckets } from '../../lib/sharding/placement';

const members = (n: number) => Array.from({ length: n }, (_, i) => `replica-${i}`);

describe('placeBuckets (rendezvous hashing)', () => {
  it('gives every bucket exactly one owner, the same whatever order the members come in', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 12 }), (ids) => {
        const owners = placeBuckets(ids, 64);
        expect(owners.every((owner) => owner !== undefined && ids.includes(owner))).toBe(true);
        expect(placeBuckets([...ids].reverse(), 64)).toEqual(owners);
      }),
    );
    expect(placeBuckets([], 4)).toEqual([undefined, undefined, undefined, undefined]);
  });

  it('moves exactly the leaver’s buckets when a member leaves', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 10 }), fc.nat(), (n, pick) => {
        const before = placeBuckets(members(n), 64);
        const leaver = `replica-${pick % n}`;
        const after = placeBuckets(members(n).filter((m) => m !== leaver), 64);
        for (let bucket = 0; bucket < 64; bucket++) {
          if (before[bucket] === leaver) expect(after[bucket]).not.toBe(leaver);
          else expect(after[bucket]).toBe(before[bucket]);
        }
      }),
    );
  });

  it('moves only buckets to the joiner, about 1/(N+1) of them', () => {
    let moved = 0;
    let joins = 0;
    for (let n = 1; n <= 9; n++) {
      const before = placeBuckets(members(n), 64);
      const after = placeBuckets(members(n + 1), 64);
      const joiner = `replica-${n}`;
      for (let bucket = 0; bucket < 64; bucket++) {
        if (after[bucket] !== before[bucket]) {
          expect(after[bucket]).toBe(joiner);
          moved++;
        }
      }
      joins += 64 / (n + 1);
    }
    // Summed over nine joins, the buckets moved stay near the ideal share.
    expect(moved).toBeGreaterThan(joins * 0.6);
    expect(moved).toBeLessThan(joins * 1.4);
  });

  it('spreads 64 buckets over 4 members within a few buckets of 16 each', () => {
    const counts = members(4).map((member) => bucketsOf(member, members(4), 64).length);
    expect(counts.reduce((a, b) => a + b)).toBe(64);
    for (const count of counts) expect(Math.abs(count - 16)).toBeLessThanOrEqual(8);
  });
});
