import fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import { runInNewContext } from 'node:vm';
import { shareUnchanged } from '../../lib/store/shareUnchanged';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
const isContainer = (value: unknown): value is object => typeof value === 'object' && value !== null;

/** A JSON value and a second one derived from it by a few random edits, so most subtrees repeat. */
const versions = fc
  .tuple(
    fc.jsonValue({ maxDepth: 5 }) as fc.Arbitrary<Json>,
    fc.array(fc.tuple(fc.nat(), fc.constantFrom('set', 'delete', 'append'), fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>), { maxLength: 4 }),
  )
  .map(([previous, edits]) => {
    const next = clone(previous);
    for (const [pick, kind, value] of edits) edit(next, pick, kind, value);
    return { previous, next };
  });

/** Applies one edit at a container chosen by `pick` among all of `root`'s containers. */
function edit(root: Json, pick: number, kind: string, value: Json): void {
  const containers: (Json[] | { [key: string]: Json })[] = [];
  const visit = (node: Json): void => {
    if (!isContainer(node)) return;
    containers.push(node);
    for (const child of Object.values(node)) visit(child);
  };
  visit(root);
  if (containers.length === 0) return;
  const target = containers[pick % containers.length]!;
  if (Array.isArray(target)) {
    if (kind === 'append') target.push(value);
    else if (kind === 'delete') target.pop();
    else if (target.length > 0) target[pick % target.length] = value;
  } else {
    const keys = Object.keys(target);
    if (kind === 'append' || keys.length === 0) target[`k${pick}`] = value;
    else if (kind === 'delete') delete target[keys[pick % keys.length]!];
    else target[keys[pick % keys.length]!] = value;
  }
}

/**
 * Every pair of subtrees at the same path of `a` and `b`, both containers of the same kind, but
 * under an own `__proto__` key, which the walk never follows (see the spec that pins it).
 */
function* samePaths(a: unknown, b: unknown): Generator<[object, object]> {
  if (!isContainer(a) || !isContainer(b) || Array.isArray(a) !== Array.isArray(b)) return;
  yield [a, b];
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  for (const key of Object.keys(right)) if (key !== '__proto__' && Object.hasOwn(left, key)) yield* samePaths(left[key], right[key]);
}

describe('shareUnchanged', () => {
  it('keeps the values, returns the incoming object, and shares exactly the deep-equal subtrees', () => {
    fc.assert(
      fc.property(versions, ({ previous, next }) => {
        if (!isContainer(previous) || !isContainer(next)) return;
        const previousBefore = structuredClone(previous);
        const expected = structuredClone(next);
        const result = shareUnchanged(previous, next);
        expect(result).toBe(next);
        expect(result).toEqual(expected);
        expect(previous).toEqual(previousBefore);
        let first = true;
        for (const [was, now] of samePaths(previous, result)) {
          const equal = isDeepStrictEqual(was, now);
          // Below the top, a subtree is the previous one exactly when the values are equal.
          if (!first) expect(now === was).toBe(equal);
          first = false;
        }
      }),
      { numRuns: 500 },
    );
  });

  it('shares an unchanged spec and status but not the metadata that changed', () => {
    const previous = { metadata: { name: 'web', resourceVersion: '1', labels: { app: 'web' } }, spec: { replicas: 2, template: { x: [1, 2] } }, status: { ready: 2 } };
    const next = clone(previous);
    next.metadata.resourceVersion = '2';
    const result = shareUnchanged(previous, next);
    expect(result.spec).toBe(previous.spec);
    expect(result.status).toBe(previous.status);
    expect(result.metadata).not.toBe(previous.metadata);
    expect(result.metadata.labels).toBe(previous.metadata.labels);
    expect(result.metadata.resourceVersion).toBe('2');
  });

  it('does not treat a missing key, an extra key or a shorter array as equal', () => {
    const previous = { a: { x: 1, y: 2 }, b: { x: 1 }, c: [1, 2, 3], d: [{ deep: true }, 2] };
    const next = { a: { x: 1 }, b: { x: 1, y: undefined }, c: [1, 2], d: [{ deep: true }] };
    shareUnchanged(previous, next);
    expect(next.a).not.toBe(previous.a);
    expect(next.b).not.toBe(previous.b);
    expect(next.c).not.toBe(previous.c);
    expect(next.d).not.toBe(previous.d);
    expect(next.d[0]).toBe(previous.d[0]);
    expect(next).toEqual({ a: { x: 1 }, b: { x: 1, y: undefined }, c: [1, 2], d: [{ deep: true }] });
  });

  it('never shares across kinds: an array and an object with the same keys, or a Date', () => {
    const previous = { list: ['a'], record: { 0: 'a' }, when: new Date(1), other: new Date(1) };
    const next = { list: { 0: 'a' }, record: ['a'], when: new Date(2), other: new Date(1) };
    shareUnchanged(previous, next);
    expect(next.list).toEqual({ 0: 'a' });
    expect(next.record).toEqual(['a']);
    expect(next.when.getTime()).toBe(2);
    expect(next.other).not.toBe(previous.other);
  });

  it('leaves frozen containers unwritten and does not throw', () => {
    const previous = { spec: { replicas: 1 }, status: { ready: 0 } };
    const next = Object.freeze({ spec: { replicas: 1 }, status: Object.freeze({ ready: 1 }) });
    expect(() => shareUnchanged(previous, next)).not.toThrow();
    expect(next.spec).not.toBe(previous.spec);
    expect(next).toEqual({ spec: { replicas: 1 }, status: { ready: 1 } });
  });

  it('never follows or writes an own __proto__ key', () => {
    const previous = JSON.parse('{"meta":{"__proto__":{"polluted":true}},"other":{"__proto__":{}}}') as Record<string, object>;
    const next = JSON.parse('{"meta":{"__proto__":{"polluted":true}},"other":{}}') as Record<string, object>;
    shareUnchanged(previous, next);
    expect(Object.getPrototypeOf(next['meta'])).toBe(Object.prototype);
    expect(Object.getPrototypeOf(next['other'])).toBe(Object.prototype);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(next['meta']).not.toBe(previous['meta']);
    expect(next['other']).not.toBe(previous['other']);
  });

  it('handles hostile nesting without overflowing the stack, sharing nothing below depth 64', () => {
    const nested = (depth: number): string => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
    const previous = JSON.parse(`{"deep":${nested(100_000)},"shallow":${nested(3)}}`) as Record<string, object>;
    const next = JSON.parse(`{"deep":${nested(100_000)},"shallow":${nested(3)}}`) as Record<string, object>;
    expect(() => shareUnchanged(previous, next)).not.toThrow();
    expect(next['shallow']).toBe(previous['shallow']);
    expect(next['deep']).not.toBe(previous['deep']);
  });

  it('compares numbers as Object.is does, so -0 stays -0', () => {
    const previous = { a: { n: 0 }, b: { n: Number.NaN } };
    const next = JSON.parse('{"a":{"n":-0},"b":{"n":1}}') as { a: { n: number }; b: { n: number } };
    next.b.n = Number.NaN;
    shareUnchanged(previous, next);
    expect(Object.is(next.a.n, -0)).toBe(true);
    expect(next.a).not.toBe(previous.a);
    expect(next.b).toBe(previous.b);
  });

  it('returns the incoming object even when everything is equal', () => {
    const previous = { a: { b: 1 } };
    const next = { a: { b: 1 } };
    expect(shareUnchanged(previous, next)).toBe(next);
    expect(next.a).toBe(previous.a);
  });
});

describe('shareUnchanged across realms', () => {
  it('shares plain objects made in another realm (a vm context, structuredClone under a test runner)', () => {
    const foreign = runInNewContext('({ spec: { replicas: 1 }, status: { ready: 1 } })') as { spec: object; status: object };
    const previous = { spec: { replicas: 1 }, status: { ready: 0 } };
    shareUnchanged(previous, foreign);
    expect(foreign.spec).toBe(previous.spec);
    expect(foreign.status).not.toBe(previous.status);
  });

  it('still refuses class instances whose prototype chain is longer', () => {
    class Quantity {
      constructor(readonly value = 1) {}
    }
    const previous = { size: { value: 1 } };
    const next = { size: new Quantity() };
    shareUnchanged(previous, next);
    expect(next.size).toBeInstanceOf(Quantity);
  });
});

describe('shareUnchanged and empty objects', () => {
  /** Every empty plain object inside `value`. */
  const empties = (value: unknown, found: object[] = []): object[] => {
    if (!isContainer(value)) return found;
    if (!Array.isArray(value) && Object.keys(value).length === 0) found.push(value);
    for (const child of Object.values(value)) empties(child, found);
    return found;
  };

  it('gives every object one shared, frozen empty object in place of its own {}s', () => {
    const first = shareUnchanged(undefined, { spec: { volumes: [{ name: 'v', emptyDir: {} }], securityContext: {} }, fields: { 'f:a': {}, 'f:b': { '.': {} } } });
    const second = shareUnchanged(undefined, { metadata: { annotations: {} } });
    const all = [...empties(first), ...empties(second)];
    expect(all).toHaveLength(5);
    expect(new Set(all).size).toBe(1);
    expect(Object.isFrozen(all[0])).toBe(true);
    expect(first).toEqual({ spec: { volumes: [{ name: 'v', emptyDir: {} }], securityContext: {} }, fields: { 'f:a': {}, 'f:b': { '.': {} } } });
  });

  it('interns the empty objects of an update too, in new keys, new array elements and changed kinds', () => {
    const previous = shareUnchanged(undefined, { a: { x: 1 }, list: [{ y: 1 }], kind: 'text' as unknown });
    const next = shareUnchanged(previous, { a: { x: 1, added: {} }, list: [{ y: 1 }, { z: {} }], kind: { inner: {} } as unknown, extra: {} });
    const found = empties(next);
    expect(found).toHaveLength(4);
    expect(new Set(found).size).toBe(1);
    expect(next.list[0]).toBe(previous.list[0]);
  });

  it('keeps values, one shared empty object across versions, and sharing exactly the equal subtrees (property)', () => {
    fc.assert(
      fc.property(versions, ({ previous, next }) => {
        if (!isContainer(previous) || !isContainer(next)) return;
        // JSON copies: structuredClone under jest makes objects of another realm, which stay as they are.
        const cached = shareUnchanged(undefined, clone(previous));
        const expected = structuredClone(next);
        const result = shareUnchanged(cached, next);
        expect(result).toEqual(expected);
        expect(cached).toEqual(clone(previous));
        const found = [...empties(cached), ...empties(result)].filter((empty) => empty !== result && empty !== cached);
        expect(new Set(found).size).toBeLessThanOrEqual(1);
        for (const empty of found) expect(Object.isFrozen(empty)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('leaves empty arrays, foreign-realm {}s and anything below depth 64 as they are', () => {
    const foreign = runInNewContext('({})') as object;
    const deep = JSON.parse('{"a":'.repeat(70) + '{}' + '}'.repeat(70)) as Record<string, unknown>;
    const value = shareUnchanged(undefined, { list: [] as unknown[], foreign, deep });
    expect(Object.isFrozen(value.list)).toBe(false);
    expect(value.foreign).toBe(foreign);
    let node: Record<string, unknown> = value.deep as Record<string, unknown>;
    for (let i = 0; i < 69; i++) node = node['a'] as Record<string, unknown>;
    expect(Object.isFrozen(node['a'])).toBe(false);
  });
});

describe('shareUnchanged where the cached version holds the shared {}', () => {
  const cached = shareUnchanged(undefined, { a: {}, b: {}, c: {}, d: {}, e: {} as unknown });

  it('keeps the shared {} for a {} and takes whatever else replaced it as new', () => {
    const foreign = runInNewContext('({})') as object;
    const next = shareUnchanged(cached, { a: {}, b: { filled: {} }, c: [] as unknown, d: foreign, e: 'text' as unknown });
    expect(next.a).toBe(cached.a);
    // A map that gained a key is the incoming one, with its own {} interned.
    expect(next.b).not.toBe(cached.b);
    expect(next.b).toEqual({ filled: {} });
    expect(next.b.filled).toBe(cached.a);
    expect(Array.isArray(next.c)).toBe(true);
    expect(Object.isFrozen(next.c)).toBe(false);
    // Another realm's {} is deep-equal to the cached one, so the cached (shared) one is kept.
    expect(next.d).toBe(cached.d);
    expect(next.e).toBe('text');
  });
});

describe('shareUnchanged and a map emptied by an update', () => {
  it('interns the {} that replaced a non-empty map (found by the property test: [{"":""}] → [{}])', () => {
    const previous = shareUnchanged(undefined, [{ '': '' }]);
    const next = shareUnchanged(previous, [{}]);
    const other = shareUnchanged(undefined, { empty: {} });
    expect(next[0]).toBe(other.empty);
    expect(Object.isFrozen(next[0])).toBe(true);
  });
});

describe('shareUnchanged from the first difference in a container on', () => {
  it('takes the previous children before the first changed key and compares the ones after it', () => {
    const previous = { a: { x: 1 }, b: [1, { y: 2 }], changed: 'old', c: { z: 3 }, d: [{}] };
    const next = clone(previous);
    next.changed = 'new';
    shareUnchanged(undefined, previous);
    shareUnchanged(previous, next);
    expect(next.a).toBe(previous.a);
    expect(next.b).toBe(previous.b);
    expect(next.c).toBe(previous.c);
    expect(next.d).toBe(previous.d);
    expect(next.changed).toBe('new');
  });

  it('treats the same keys in another order as equal, and a key added or removed anywhere as a change', () => {
    const previous = { outer: { a: { x: 1 }, b: 2, c: { y: 3 } } };
    const reordered = { outer: { c: { y: 3 }, b: 2, a: { x: 1 } } };
    shareUnchanged(previous, reordered);
    expect(reordered.outer).toBe(previous.outer);
    for (const [label, outer] of [
      ['added first', { z: 0, a: { x: 1 }, b: 2, c: { y: 3 } }],
      ['added in the middle', { a: { x: 1 }, z: 0, b: 2, c: { y: 3 } }],
      ['added last', { a: { x: 1 }, b: 2, c: { y: 3 }, z: 0 }],
      ['removed first', { b: 2, c: { y: 3 } }],
      ['removed last', { a: { x: 1 }, b: 2 }],
    ] as const) {
      const next: { outer: Record<string, unknown> } = { outer: clone(outer) };
      shareUnchanged(previous, next);
      expect([label, next.outer === previous.outer]).toEqual([label, false]);
      expect([label, next.outer]).toEqual([label, outer]);
      if ('a' in outer) expect([label, next.outer['a'] === previous.outer.a]).toEqual([label, true]);
      if ('c' in outer) expect([label, next.outer['c'] === previous.outer.c]).toEqual([label, true]);
    }
  });

  it('counts a key holding undefined that the previous version lacks as new, first or later', () => {
    const previous = { first: { a: 1 }, later: { a: 1 } };
    const next = { first: { u: undefined, a: 1 } as Record<string, unknown>, later: { a: 1, u: undefined } as Record<string, unknown> };
    shareUnchanged(previous, next);
    expect(next.first).not.toBe(previous.first);
    expect(next.later).not.toBe(previous.later);
    expect(Object.hasOwn(next.first, 'u') && Object.hasOwn(next.later, 'u')).toBe(true);
  });

  it('shares inside the later children of a frozen container without writing the container', () => {
    const previous = { list: [{ x: 1 }], changed: 1, after: { inner: { y: 2 }, other: 1 } };
    const after = { inner: { y: 2 }, other: 2 };
    const next = Object.freeze({ list: [{ x: 1 }], changed: 2, after });
    expect(() => shareUnchanged(previous, next)).not.toThrow();
    expect(next.list).not.toBe(previous.list);
    expect(next.after).toBe(after);
    expect(after.inner).toBe(previous.after.inner);
  });

  it('compares arrays that grow or shrink element by element, and keeps -0 and NaN elements as they are', () => {
    const previous = { grow: [{ a: 1 }, { b: 2 }], shrink: [{ a: 1 }, { b: 2 }, { c: 3 }], zero: [{ a: 1 }, 0, { b: 2 }], nan: [Number.NaN, { a: 1 }] };
    const next = { grow: [{ a: 1 }, { b: 2 }, { c: {} }], shrink: [{ a: 1 }, { b: 2 }], zero: [{ a: 1 }, -0, { b: 2 }], nan: [Number.NaN, { a: 1 }] };
    shareUnchanged(previous, next);
    expect(next.grow[0]).toBe(previous.grow[0]);
    expect(next.grow[1]).toBe(previous.grow[1]);
    expect(Object.isFrozen(next.grow[2]!['c'])).toBe(true);
    expect(next.shrink).not.toBe(previous.shrink);
    expect(next.shrink[1]).toBe(previous.shrink[1]);
    expect(next.zero).not.toBe(previous.zero);
    expect(Object.is(next.zero[1], -0)).toBe(true);
    expect(next.zero[0]).toBe(previous.zero[0]);
    expect(next.zero[2]).toBe(previous.zero[2]);
    expect(next.nan).toBe(previous.nan);
  });

  it('writes nothing into a container with an own __proto__ key, wherever the key is', () => {
    const previous = JSON.parse('{"first":{"__proto__":{"p":1},"a":{"x":1}},"last":{"a":{"x":1},"__proto__":{"p":1}}}') as Record<string, Record<string, object>>;
    const next = JSON.parse('{"first":{"__proto__":{"p":1},"a":{"x":1}},"last":{"a":{"x":1},"__proto__":{"p":1}}}') as Record<string, Record<string, object>>;
    shareUnchanged(previous, next);
    for (const name of ['first', 'last']) {
      const container = next[name]!;
      expect(container).not.toBe(previous[name]);
      expect(Object.getPrototypeOf(container)).toBe(Object.prototype);
      expect(container['a']).toBe(previous[name]!['a']);
      expect(Object.getOwnPropertyDescriptor(container, '__proto__')?.value).not.toBe(Object.getOwnPropertyDescriptor(previous[name], '__proto__')?.value);
    }
  });
});
