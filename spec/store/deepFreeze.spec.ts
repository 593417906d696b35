import fc from 'fast-check';
import { deepFreeze } from '../../lib/store/deepFreeze';

/** Every object and array under `value` (itself included). */
function containers(value: unknown, found: object[] = []): object[] {
  if (typeof value !== 'object' || value === null) return found;
  found.push(value);
  for (const item of Object.values(value)) containers(item, found);
  return found;
}

describe('deepFreeze', () => {
  it('freezes every object and array of any JSON value, changes no value and returns the value itself', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (json) => {
        const value = JSON.parse(JSON.stringify(json)) as unknown;
        const copy = JSON.parse(JSON.stringify(json)) as unknown;
        expect(deepFreeze(value)).toBe(value);
        expect(value).toEqual(copy);
        for (const container of containers(value)) expect(Object.isFrozen(container)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('makes a mutation of a stored object throw in strict mode', () => {
    const pod = deepFreeze({ metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c' }] } });
    expect(() => {
      (pod.metadata.labels as Record<string, string>)['app'] = 'db';
    }).toThrow(TypeError);
    expect(() => (pod.spec.containers as unknown[]).push({})).toThrow(TypeError);
  });

  it('stops at a frozen subtree, so what an update shares with its cached version is not walked again', () => {
    const unfrozenInside = { count: 1 };
    const shared = Object.freeze({ inner: unfrozenInside });
    deepFreeze({ changed: { resourceVersion: '2' }, shared });
    expect(Object.isFrozen(unfrozenInside)).toBe(false);
  });

  it('freezes objects without a prototype, and leaves a Date or a class instance as it is', () => {
    class Counter {
      count = 0;
    }
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { a: { b: 1 } });
    const value = deepFreeze({ bare, when: new Date(0), counter: new Counter() });
    expect(Object.isFrozen(bare) && Object.isFrozen(bare['a'])).toBe(true);
    expect(Object.isFrozen(value.when)).toBe(false);
    value.counter.count++;
    expect(value.counter.count).toBe(1);
  });

  it('returns primitives unchanged and survives nesting far deeper than the call stack', () => {
    expect(deepFreeze('text')).toBe('text');
    expect(deepFreeze(null)).toBeNull();
    let deep: { next?: unknown } = {};
    const top = deep;
    for (let i = 0; i < 200_000; i++) deep = (deep.next = {}) as { next?: unknown };
    expect(() => deepFreeze(top)).not.toThrow();
    expect(Object.isFrozen(deep)).toBe(true);
  });
});
