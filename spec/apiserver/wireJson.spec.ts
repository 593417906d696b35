import fc from 'fast-check';
import { pods } from '../../lib/resources/builtins';
import { makePod, seededRandom } from '../../apiserver/src/churn';
import { createClusterStore, type ClusterStoreImpl } from '../../apiserver/src/clusterStore';
import { jsonOf } from '../../apiserver/src/history';
import { stringifyWithBase, type JsonBase } from '../../apiserver/src/wireJson';

/** Serializes a chain of versions, each reusing the one before, and checks every result. */
function chain(versions: readonly object[]): string[] {
  let base: JsonBase | undefined;
  return versions.map((version) => {
    const result = stringifyWithBase(version, base);
    base = result;
    return result.json;
  });
}

/** A new version that keeps some subtrees by reference and replaces others, as spread edits do. */
function edit(record: Record<string, unknown>, replacements: Record<string, unknown>): Record<string, unknown> {
  return { ...record, ...replacements };
}

describe('stringifyWithBase', () => {
  it('gives exactly JSON.stringify for any JSON value, with or without a base', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (first, second) => {
        expect(chain([first as object, second as object])).toEqual([JSON.stringify(first), JSON.stringify(second)]);
      }),
    );
  });

  it('gives exactly JSON.stringify when subtrees are shared, replaced, added and removed between versions', () => {
    const record = fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 });
    fc.assert(
      fc.property(record, record, record, fc.array(fc.string({ maxLength: 4 }), { maxLength: 3 }), (top, nested, replacements, removed) => {
        const v1 = { ...top, metadata: nested, spec: { nested } };
        const v2 = edit(v1, { metadata: edit(nested, replacements) });
        const v3 = Object.fromEntries(Object.entries(edit(v2, replacements)).filter(([key]) => !removed.includes(key)));
        const v4 = edit(v3, { spec: v1.spec, extra: v2.metadata });
        const versions = [v1, v2, v3, v4];
        expect(chain(versions)).toEqual(versions.map((version) => JSON.stringify(version)));
      }),
    );
  });

  it('follows JSON.stringify on undefined, functions, toJSON, empty objects and escaped keys', () => {
    const shared = { when: new Date(0), nothing: undefined, fn: () => 1, empty: {}, 'quo"te': ['\u2028', undefined] };
    const silent = { toJSON: () => undefined };
    const versions = [
      { a: shared, b: { inner: shared, silent }, c: silent },
      { a: shared, b: { inner: shared, silent, more: 1 }, d: -0, e: Number.NaN },
      { toJSON: () => ({ replaced: true }) },
    ];
    expect(chain(versions)).toEqual(versions.map((version) => JSON.stringify(version)));
  });

  it('reuses the text of an unchanged subtree instead of serializing it again', () => {
    let calls = 0;
    const counted = {
      toJSON: () => {
        calls++;
        return { big: 'subtree' };
      },
    };
    const v1 = { metadata: { name: 'a', managedFields: counted }, spec: counted };
    const first = stringifyWithBase(v1, undefined);
    const second = stringifyWithBase({ ...v1, metadata: { ...v1.metadata, resourceVersion: '2' } }, first);
    expect(second.json).toBe('{"metadata":{"name":"a","managedFields":{"big":"subtree"},"resourceVersion":"2"},"spec":{"big":"subtree"}}');
    expect(calls).toBe(2);
  });
});

describe('the store serializes each version once, exactly as JSON.stringify would', () => {
  it('keeps the wire JSON of updated, status-patched, marked and deleted objects equal to JSON.stringify', () => {
    const store = createClusterStore() as ClusterStoreImpl;
    const random = seededRandom(3);
    const seen: string[] = [];
    store.subscribe(pods, (event) => {
      const json = jsonOf(event.object);
      expect(json).toBe(JSON.stringify(event.object.object));
      seen.push(json);
    });
    const created = store.create(pods, makePod(random, 'ns', 'p'));
    const relabelled = store.update(pods, { ...created, metadata: { ...created.metadata, labels: { app: 'x' }, finalizers: ['f'] } });
    store.update(pods, { ...relabelled, status: { phase: 'Failed' } });
    store.delete(pods, 'ns', 'p');
    const marked = store.get(pods, 'ns', 'p')!;
    store.update(pods, { ...marked, metadata: { ...marked.metadata, finalizers: [] } });
    expect(seen).toHaveLength(5);
    expect(store.get(pods, 'ns', 'p')).toBeUndefined();
  });
});
