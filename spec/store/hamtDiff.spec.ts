import fc from 'fast-check';
import { diffHamt, HamtMap, hashString, type HamtDifference } from '../../lib/store/hamt';

/** Two keys with one 32-bit hash, so that collision nodes take part (birthday bound ~77k tries). */
const colliding: readonly string[] = (() => {
  const byHash = new Map<number, string>();
  for (let i = 0; ; i++) {
    const key = `d${i}`;
    const earlier = byHash.get(hashString(key));
    if (earlier !== undefined) return [earlier, key];
    byHash.set(hashString(key), key);
  }
})();

/** `true` is stored as the bare key (a set's entry), any other value in a leaf: the ops mix both. */
type Value = number | true;
type Op = { readonly kind: 'set'; readonly key: string; readonly value: Value } | { readonly kind: 'delete'; readonly key: string };
const keyArb = fc.oneof(fc.constantFrom(...colliding), fc.nat(400).map((n) => `ns/${n}`));
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), key: keyArb, value: fc.oneof(fc.nat(3), fc.constant(true as const)) }),
  fc.record({ kind: fc.constant('delete' as const), key: keyArb }),
);

function apply(map: HamtMap<Value>, ops: readonly Op[], transient: boolean): HamtMap<Value> {
  if (transient) {
    const batch = map.asTransient();
    for (const op of ops) if (op.kind === 'set') batch.set(op.key, op.value);
    else batch.delete(op.key);
    return batch.persistent();
  }
  for (const op of ops) map = op.kind === 'set' ? map.set(op.key, op.value) : map.delete(op.key);
  return map;
}

/** What the diff must be, from the keys of both maps: sorted by key. */
function expectedDiff(older: HamtMap<Value>, newer: HamtMap<Value>): HamtDifference<Value>[] {
  const keys = new Set([...older.keys(), ...newer.keys()]);
  const differences: HamtDifference<Value>[] = [];
  for (const key of keys) if (older.get(key) !== newer.get(key) || older.has(key) !== newer.has(key)) differences.push([key, older.get(key), newer.get(key)]);
  return differences.sort(([a], [b]) => (a < b ? -1 : 1));
}

function sortedDiff(older: HamtMap<Value>, newer: HamtMap<Value>): HamtDifference<Value>[] {
  return [...diffHamt(older, newer)].sort(([a], [b]) => (a < b ? -1 : 1));
}

describe('diffHamt', () => {
  it('yields exactly the keys whose values differ, with both values, for a map and any later version of it', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 300 }), fc.array(opArb, { maxLength: 60 }), fc.boolean(), fc.boolean(), (base, later, baseTransient, laterTransient) => {
        const older = apply(HamtMap.empty(), base, baseTransient);
        const newer = apply(older, later, laterTransient);
        expect(sortedDiff(older, newer)).toEqual(expectedDiff(older, newer));
        expect(sortedDiff(newer, older)).toEqual(expectedDiff(newer, older));
      }),
      { numRuns: 300 },
    );
  });

  it('compares maps built apart, which share nothing', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 200 }), fc.array(opArb, { maxLength: 200 }), (left, right) => {
        const older = apply(HamtMap.empty(), left, false);
        const newer = apply(HamtMap.empty(), right, true);
        expect(sortedDiff(older, newer)).toEqual(expectedDiff(older, newer));
      }),
      { numRuns: 200 },
    );
  });

  it('finds one changed key among 100k and is empty for a map and itself', () => {
    const big = apply(
      HamtMap.empty(),
      Array.from({ length: 100_000 }, (_, i) => ({ kind: 'set' as const, key: `ns/${i}`, value: 0 })),
      true,
    );
    expect([...diffHamt(big, big)]).toEqual([]);
    expect([...diffHamt(big, big.set('ns/77', 1).delete('ns/78'))].sort()).toEqual([
      ['ns/77', 0, 1],
      ['ns/78', 0, undefined],
    ]);
  });
});
