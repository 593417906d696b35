import fc from 'fast-check';
import { diffHamt, HamtMap } from '../../bench/micro/immutableHamt';
import * as Ours from '../../lib/store/hamt';

/**
 * The benchmark's stand-in for `lib/store/hamt` on immutable.js must behave like ours, or the
 * informer-level comparison measures something else.
 */
type Op = { kind: 'set'; key: string; value: number } | { kind: 'delete'; key: string };
const keyArb = fc.oneof(fc.string({ maxLength: 2 }), fc.nat(200).map((n) => `ns/${n}`));
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), key: keyArb, value: fc.nat(3) }),
  fc.record({ kind: fc.constant('delete' as const), key: keyArb }),
);

function sorted<V>(entries: Iterable<[string, V]>): [string, V][] {
  return [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

describe('the immutable.js stand-in for HamtMap', () => {
  it('behaves like a Map through persistent writes, then a transient batch, without touching its source', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 200 }), fc.array(opArb, { maxLength: 100 }), (persistentOps, batchOps) => {
        let map = HamtMap.empty<number>();
        const model = new Map<string, number>();
        for (const op of persistentOps) {
          map = op.kind === 'set' ? map.set(op.key, op.value) : map.delete(op.key);
          if (op.kind === 'set') model.set(op.key, op.value);
          else model.delete(op.key);
          expect(map.size).toBe(model.size);
        }
        const before = sorted(model);
        const transient = map.asTransient();
        for (const op of batchOps) {
          if (op.kind === 'set') transient.set(op.key, op.value);
          else expect(transient.delete(op.key)).toBe(model.has(op.key));
          if (op.kind === 'set') model.set(op.key, op.value);
          else model.delete(op.key);
          expect(transient.size).toBe(model.size);
        }
        const built = transient.persistent();
        expect(sorted(built)).toEqual(sorted(model));
        const visited: [string, number][] = [];
        built.forEach((value, key) => visited.push([key, value]));
        expect(sorted(visited)).toEqual(sorted(model));
        expect(sorted(map.entries())).toEqual(before);
        expect(() => transient.set('x', 1)).toThrow(/after persistent/);
      }),
      { numRuns: 100 },
    );
  });

  it('returns itself for writes that change nothing, and visits every entry even when a visitor returns false', () => {
    const map = HamtMap.empty<number>().set('a', 1).set('b', 2);
    expect(map.set('a', 1)).toBe(map);
    expect(map.delete('missing')).toBe(map);
    expect(map.delete('a').delete('b')).toBe(HamtMap.empty());
    let visits = 0;
    map.forEach(() => {
      visits++;
      return false;
    });
    expect(visits).toBe(2);
  });

  it('lists the differences between two versions as our diffHamt does', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 100 }), fc.array(opArb, { maxLength: 30 }), (baseOps, changeOps) => {
        const apply = <M extends { set(key: string, value: number): M; delete(key: string): M }>(map: M, ops: readonly Op[]): M =>
          ops.reduce((m, op) => (op.kind === 'set' ? m.set(op.key, op.value) : m.delete(op.key)), map);
        const older = apply(HamtMap.empty<number>(), baseOps);
        const newer = apply(older, changeOps);
        const ourOlder = apply(Ours.HamtMap.empty<number>(), baseOps);
        const ourNewer = apply(ourOlder, changeOps);
        const byKey = (differences: Iterable<Ours.HamtDifference<number>>): Ours.HamtDifference<number>[] =>
          [...differences].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
        expect(byKey(diffHamt(older, newer))).toEqual(byKey(Ours.diffHamt(ourOlder, ourNewer)));
      }),
      { numRuns: 100 },
    );
  });
});
