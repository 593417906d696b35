import fc from 'fast-check';
import { HamtMap, hashString, type TransientHamtMap } from '../../lib/store/hamt';

/** Distinct keys whose 32-bit hashes are equal, found by brute force (birthday bound ~77k). */
function findCollidingKeys(): [string, string] {
  const seen = new Map<number, string>();
  for (let i = 0; ; i++) {
    const key = `k${i}`;
    const hash = hashString(key);
    const other = seen.get(hash);
    if (other !== undefined) return [other, key];
    seen.set(hash, key);
  }
}

const [collideA, collideB] = findCollidingKeys();

function toRecord<V>(map: HamtMap<V>): Map<string, V> {
  return new Map([...map.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function sortedMap<V>(map: Map<string, V>): Map<string, V> {
  return new Map([...map.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** `true` is stored as the bare key (a set's entry), any other value in a leaf: the ops mix both. */
type Value = number | true;
type Op = { kind: 'set'; key: string; value: Value } | { kind: 'delete'; key: string };

// Small key alphabet so that sets, overwrites and deletes of present keys all happen often;
// the colliding pair is mixed in so collision nodes are exercised.
const keyArb = fc.oneof(fc.constantFrom(collideA, collideB, '__proto__', 'constructor', ''), fc.string({ maxLength: 3 }), fc.nat(300).map((n) => `ns/${n}`));
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), key: keyArb, value: fc.oneof(fc.nat(5), fc.constant(true as const)) }),
  fc.record({ kind: fc.constant('delete' as const), key: keyArb }),
);

describe('HamtMap', () => {
  it('hashes to signed 32-bit integers, which V8 stores inline in a leaf', () => {
    fc.assert(fc.property(fc.string(), (key) => Object.is(hashString(key), hashString(key) | 0)));
    expect(hashString('ns-1/pod-1')).toBe(hashString('ns-1/pod-1'));
  });

  it('found a genuine hash collision to test with', () => {
    expect(collideA).not.toBe(collideB);
    expect(hashString(collideA)).toBe(hashString(collideB));
  });

  it('behaves like a Map for any sequence of sets and deletes', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 400 }), (ops) => {
        let map = HamtMap.empty<Value>();
        const model = new Map<string, Value>();
        for (const op of ops) {
          if (op.kind === 'set') {
            map = map.set(op.key, op.value);
            model.set(op.key, op.value);
          } else {
            map = map.delete(op.key);
            model.delete(op.key);
          }
          expect(map.size).toBe(model.size);
        }
        expect(toRecord(map)).toEqual(sortedMap(model));
        for (const [key, value] of model) {
          expect(map.get(key)).toBe(value);
          expect(map.has(key)).toBe(true);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('never changes an older version when a newer one is written', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 200 }), (ops) => {
        const versions: { map: HamtMap<Value>; model: Map<string, Value> }[] = [];
        let map = HamtMap.empty<Value>();
        let model = new Map<string, Value>();
        for (const op of ops) {
          map = op.kind === 'set' ? map.set(op.key, op.value) : map.delete(op.key);
          model = new Map(model);
          if (op.kind === 'set') model.set(op.key, op.value);
          else model.delete(op.key);
          versions.push({ map, model });
        }
        for (const version of versions) expect(toRecord(version.map)).toEqual(sortedMap(version.model));
      }),
      { numRuns: 100 },
    );
  });

  it('returns itself when a write changes nothing', () => {
    const map = HamtMap.empty<number>().set('a', 1).set(collideA, 2).set(collideB, 3);
    expect(map.set('a', 1)).toBe(map);
    expect(map.set(collideB, 3)).toBe(map);
    expect(map.delete('missing')).toBe(map);
    expect(HamtMap.empty<number>().delete('x')).toBe(HamtMap.empty());
  });

  it('keeps colliding keys apart and removes them one by one', () => {
    let map = HamtMap.empty<string>().set(collideA, 'a').set(collideB, 'b').set('other', 'o');
    expect(map.get(collideA)).toBe('a');
    expect(map.get(collideB)).toBe('b');
    map = map.delete(collideA);
    expect(map.get(collideA)).toBeUndefined();
    expect(map.get(collideB)).toBe('b');
    expect(map.size).toBe(2);
    map = map.delete(collideB).delete('other');
    expect(map.size).toBe(0);
  });

  it('keeps colliding keys when their neighbours are removed', () => {
    for (const neighbour of ['other', 'x', 'y', 'z', 'k1', 'k2']) {
      const map = HamtMap.empty<string>().set(collideA, 'a').set(neighbour, 'n').set(collideB, 'b').delete(neighbour);
      expect(map.size).toBe(2);
      expect([map.get(collideA), map.get(collideB)]).toEqual(['a', 'b']);
      const transient = HamtMap.empty<string>().set(collideA, 'a').set(collideB, 'b').set(neighbour, 'n').asTransient();
      transient.delete(neighbour);
      expect([...transient.persistent().values()].sort()).toEqual(['a', 'b']);
    }
  });

  it('treats __proto__ and constructor as ordinary keys', () => {
    const map = HamtMap.empty<string>().set('__proto__', 'p');
    expect(map.get('__proto__')).toBe('p');
    expect(map.has('constructor')).toBe(false);
    expect(map.get('toString')).toBeUndefined();
  });

  it('visits every entry once with forEach, keys, values and entries', () => {
    let map = HamtMap.empty<number>();
    for (let i = 0; i < 5000; i++) map = map.set(`key-${i}`, i);
    const visited: number[] = [];
    map.forEach((value) => visited.push(value));
    expect(visited.sort((a, b) => a - b)).toEqual([...Array(5000).keys()]);
    expect(new Set(map.keys()).size).toBe(5000);
    expect([...map.values()].reduce((a, b) => a + b, 0)).toBe((4999 * 5000) / 2);
    expect([...map].length).toBe(5000);
  });

  it('iterates in the order forEach visits, for any contents, collisions included', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 300 }), (ops) => {
        let map = HamtMap.empty<Value>();
        for (const op of ops) map = op.kind === 'set' ? map.set(op.key, op.value) : map.delete(op.key);
        const visited: [string, Value][] = [];
        map.forEach((value, key) => visited.push([key, value]));
        expect([...map.entries()]).toEqual(visited);
        expect([...map.keys()]).toEqual(visited.map(([key]) => key));
        expect([...map.values()]).toEqual(visited.map(([, value]) => value));
      }),
      { numRuns: 200 },
    );
  });

  it('iterates an empty map, and a map of one entry, and stays done once done', () => {
    expect([...HamtMap.empty<number>()]).toEqual([]);
    expect([...HamtMap.empty<number>().set('only', 1).entries()]).toEqual([['only', 1]]);
    const iterator = HamtMap.empty<number>().set('a', 1).set('b', 2).keys();
    expect(iterator[Symbol.iterator]()).toBe(iterator);
    expect([iterator.next().done, iterator.next().done, iterator.next().done, iterator.next().done]).toEqual([false, false, true, true]);
  });

  describe('size bookkeeping', () => {
    it('keeps each size exact when transients and persistent maps from one source are written in turn', () => {
      fc.assert(
        fc.property(fc.array(opArb, { maxLength: 200 }), fc.array(fc.tuple(fc.nat(2), opArb), { maxLength: 300 }), (before, ops) => {
          let source = HamtMap.empty<Value>();
          for (const op of before) source = op.kind === 'set' ? source.set(op.key, op.value) : source.delete(op.key);
          const start = new Map(source.entries());
          const transients: TransientHamtMap<Value>[] = [source.asTransient(), source.asTransient()];
          let persistent = source;
          const models = [new Map(start), new Map(start), new Map(start)];
          for (const [target, op] of ops) {
            const model = models[target]!;
            if (target === 2) {
              persistent = op.kind === 'set' ? persistent.set(op.key, op.value) : persistent.delete(op.key);
            } else if (op.kind === 'set') {
              transients[target]!.set(op.key, op.value);
            } else {
              expect(transients[target]!.delete(op.key)).toBe(model.has(op.key));
            }
            if (op.kind === 'set') model.set(op.key, op.value);
            else model.delete(op.key);
            expect([transients[0]!.size, transients[1]!.size, persistent.size]).toEqual(models.map((m) => m.size));
          }
          const sealed = transients.map((t) => t.persistent());
          expect(sealed.map((m) => m.size)).toEqual([models[0]!.size, models[1]!.size]);
          expect(sealed.map((m) => toRecord(m))).toEqual([sortedMap(models[0]!), sortedMap(models[1]!)]);
          expect(source.size).toBe(start.size);
        }),
        { numRuns: 200 },
      );
    });

    it('counts a key pushed beside a collision once, and each colliding key on its own', () => {
      const map = HamtMap.empty<string>().set(collideA, 'a').set(collideB, 'b');
      expect(map.size).toBe(2);
      let grown = map;
      for (let i = 0; i < 200; i++) grown = grown.set(`n${i}`, 'n');
      expect(grown.size).toBe(202);
      expect(grown.set(collideA, 'a2').size).toBe(202);
      expect(grown.delete(collideB).delete(collideB).size).toBe(201);
      const transient = map.asTransient();
      for (let i = 0; i < 200; i++) transient.set(`n${i}`, 'n');
      expect(transient.size).toBe(202);
      expect(transient.delete(collideA)).toBe(true);
      expect(transient.delete(collideA)).toBe(false);
      expect(transient.persistent().size).toBe(201);
    });

    it('gives the shared empty map when the last key goes, from a persistent delete or a sealed transient', () => {
      expect(HamtMap.empty<number>().set('a', 1).delete('a')).toBe(HamtMap.empty());
      const transient = HamtMap.empty<number>().set('a', 1).asTransient();
      transient.delete('a');
      expect(transient.persistent()).toBe(HamtMap.empty());
    });
  });

  describe('transient', () => {
    it('builds the same map as persistent writes, without touching its source', () => {
      let source = HamtMap.empty<number>();
      for (let i = 0; i < 1000; i++) source = source.set(`s${i}`, i);
      const transient = source.asTransient();
      for (let i = 0; i < 3000; i++) transient.set(`t${i}`, i);
      for (let i = 0; i < 1000; i += 2) expect(transient.delete(`s${i}`)).toBe(true);
      expect(transient.delete('absent')).toBe(false);
      const built = transient.persistent();
      expect(source.size).toBe(1000);
      expect(source.get('s0')).toBe(0);
      expect(built.size).toBe(3500);
      expect(built.get('s0')).toBeUndefined();
      expect(built.get('s1')).toBe(1);
      expect(built.get('t2999')).toBe(2999);
    });

    it('behaves like a Map for any sequence of writes', () => {
      fc.assert(
        fc.property(fc.array(opArb, { maxLength: 300 }), fc.array(opArb, { maxLength: 100 }), (before, ops) => {
          let start = HamtMap.empty<Value>();
          const model = new Map<string, Value>();
          for (const op of before) {
            if (op.kind === 'set') (start = start.set(op.key, op.value)), model.set(op.key, op.value);
            else (start = start.delete(op.key)), model.delete(op.key);
          }
          const snapshot = toRecord(start);
          const transient = start.asTransient();
          for (const op of ops) {
            if (op.kind === 'set') transient.set(op.key, op.value), model.set(op.key, op.value);
            else transient.delete(op.key), model.delete(op.key);
            expect(transient.size).toBe(model.size);
          }
          const built = transient.persistent();
          expect(toRecord(built)).toEqual(sortedMap(model));
          expect(toRecord(start)).toEqual(snapshot);
        }),
        { numRuns: 200 },
      );
    });

    it('refuses writes after persistent(), so the sealed map cannot change', () => {
      const transient = HamtMap.empty<number>().asTransient();
      transient.set('a', 1);
      const sealed = transient.persistent();
      expect(() => transient.set('b', 2)).toThrow(/after persistent/);
      expect(() => transient.delete('a')).toThrow(/after persistent/);
      expect(sealed.size).toBe(1);
      expect(sealed.has('b')).toBe(false);
    });

    it('never edits nodes of the map it was sealed into', () => {
      const first = HamtMap.empty<number>().asTransient();
      for (let i = 0; i < 2000; i++) first.set(`k${i}`, i);
      const sealed = first.persistent();
      const second = sealed.asTransient();
      for (let i = 0; i < 2000; i++) second.set(`k${i}`, -i);
      second.persistent();
      expect(sealed.get('k1999')).toBe(1999);
      let sum = 0;
      sealed.forEach((v) => (sum += v));
      expect(sum).toBe((1999 * 2000) / 2);
    });
  });
});
