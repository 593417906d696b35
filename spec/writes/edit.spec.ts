import fc from 'fast-check';
import { atResourceVersion, edit, type Write } from '../../lib/writes/edit';
import { deepFreeze } from '../../lib/store/deepFreeze';
import { shareUnchanged } from '../../lib/store/shareUnchanged';
import type { KubeObject } from '../../lib/base/object';
import type { Pod } from '../../lib/resources/builtins';
import { applyJsonPatch, JsonPatchError } from '../../apiserver/src/jsonPatch';
import { mergePatch } from '../../apiserver/src/patchHandler';

/**
 * edit(): immer over objects the cache shares and may have frozen, and the writes that take the
 * server from the old version to the new one. The writes are checked by applying them as the
 * loopback API server applies a PATCH (its RFC 6902 and RFC 7386 engines), after a trip through
 * JSON as on the wire.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

interface Thing extends KubeObject {
  readonly spec?: Record<string, Json>;
  readonly status?: Record<string, Json>;
}

const wire = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

const pod = (): Pod =>
  deepFreeze({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web-1', namespace: 'shop', resourceVersion: '41', labels: { app: 'web' }, annotations: {} },
    spec: { containers: [{ name: 'app', image: 'app:1' }, { name: 'sidecar', image: 'proxy:1' }] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  } as Pod);

/** What the server does with a write: applies it to what it stores (a copy), JSON Patch or merge patch. */
function applyWrite(stored: KubeObject, write: Write, as: 'json' | 'merge'): KubeObject {
  if (as === 'merge') return mergePatch(wire(stored), wire(write.mergePatch)) as KubeObject;
  const document = wire(stored) as unknown as Record<string, unknown>;
  applyJsonPatch(document, wire(write.jsonPatch) as unknown as Record<string, unknown>[]);
  return document as unknown as KubeObject;
}

/** Every write of an edit applied in turn, each later one at the version the server would be at ('rv-1', 'rv-2'). */
function applyAll(stored: KubeObject, writes: readonly Write[], as: 'json' | 'merge'): KubeObject {
  let current = stored;
  writes.forEach((write, index) => {
    const sent = index === 0 ? write : atResourceVersion(write, current.metadata.resourceVersion);
    const applied = applyWrite(current, sent, as);
    current = { ...applied, metadata: { ...applied.metadata, resourceVersion: `rv-${index + 1}` } };
  });
  return current;
}

const withoutVersion = (object: KubeObject): KubeObject => ({ ...object, metadata: { ...object.metadata, resourceVersion: undefined } as KubeObject['metadata'] });

describe('edit', () => {
  it('leaves a frozen cached object as it was and shares every subtree the recipe did not touch', () => {
    const cached = pod();
    const snapshot = wire(cached);
    const { object } = edit(cached, (draft) => {
      draft.metadata.labels!['tier'] = 'front';
      draft.spec!.containers[1]!.image = 'proxy:2';
    });
    expect(wire(cached)).toEqual(snapshot);
    expect(object.metadata.labels).toEqual({ app: 'web', tier: 'front' });
    expect(object.spec!.containers[1]!.image).toBe('proxy:2');
    expect(object.spec!.containers[0]).toBe(cached.spec!.containers[0]);
    expect(object.status).toBe(cached.status);
    expect(object.metadata.annotations).toBe(cached.metadata.annotations);
  });

  it("never writes a subtree shareUnchanged shares between objects (one {} for all): the other objects keep theirs", () => {
    const first = shareUnchanged(undefined, { metadata: { name: 'a', resourceVersion: '1', annotations: {} }, spec: { selector: {} } } as Thing);
    const second = shareUnchanged(undefined, { metadata: { name: 'b', resourceVersion: '1', annotations: {} }, spec: { selector: {} } } as Thing);
    expect(second.metadata.annotations).toBe(first.metadata.annotations);
    const { object } = edit(first, (draft) => {
      (draft.metadata.annotations as Record<string, string>)['owner'] = 'team-a';
    });
    expect(object.metadata.annotations).toEqual({ owner: 'team-a' });
    expect(second.metadata.annotations).toEqual({});
    expect(first.metadata.annotations).toEqual({});
  });

  it('does not freeze what it did not make: an unfrozen cached object stays writable by its owner', () => {
    const cached = wire(pod());
    const { object } = edit(cached, (draft) => {
      draft.metadata.labels!['tier'] = 'front';
    });
    expect(Object.isFrozen(cached.spec)).toBe(false);
    expect(Object.isFrozen(object.spec)).toBe(false);
    expect(Object.isFrozen(object.metadata)).toBe(false);
  });

  it('returns no writes, and the object itself, when the recipe changes nothing', () => {
    const cached = pod();
    const unchanged = edit(cached, (draft) => {
      draft.metadata.labels!['app'] = 'web';
    });
    expect(unchanged.object).toBe(cached);
    expect(unchanged.writes).toEqual([]);
  });

  it('writes a JSON Patch that starts with a test of the resourceVersion, with keys escaped as JSON Pointers', () => {
    const { writes } = edit(pod(), (draft) => {
      draft.metadata.labels!['app.kubernetes.io/name'] = 'web';
      draft.spec!.containers[0]!.image = 'app:2';
      delete draft.metadata.labels!['app'];
    });
    expect(writes).toHaveLength(1);
    expect(writes[0]!.subresource).toBeUndefined();
    expect(writes[0]!.jsonPatch[0]).toEqual({ op: 'test', path: '/metadata/resourceVersion', value: '41' });
    expect(writes[0]!.jsonPatch.slice(1)).toEqual(
      expect.arrayContaining([
        { op: 'add', path: '/metadata/labels/app.kubernetes.io~1name', value: 'web' },
        { op: 'replace', path: '/spec/containers/0/image', value: 'app:2' },
        { op: 'remove', path: '/metadata/labels/app' },
      ]),
    );
    expect(writes[0]!.jsonPatch).toHaveLength(4);
    expect(writes[0]!.mergePatch).toEqual({
      metadata: { resourceVersion: '41', labels: { 'app.kubernetes.io/name': 'web', app: null } },
      spec: { containers: [{ name: 'app', image: 'app:2' }, { name: 'sidecar', image: 'proxy:1' }] },
    });
  });

  it('sends changes under status to the status subresource, after the rest', () => {
    const { writes } = edit(pod(), (draft) => {
      draft.status!.phase = 'Succeeded';
      draft.metadata.labels!['done'] = 'true';
    });
    expect(writes.map((write) => write.subresource)).toEqual([undefined, 'status']);
    expect(writes[0]!.jsonPatch).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: '41' },
      { op: 'add', path: '/metadata/labels/done', value: 'true' },
    ]);
    expect(writes[1]!.jsonPatch).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: '41' },
      { op: 'replace', path: '/status/phase', value: 'Succeeded' },
    ]);
    expect(writes[1]!.mergePatch).toEqual({ metadata: { resourceVersion: '41' }, status: { phase: 'Succeeded' } });
  });

  it('keeps status with the rest when the resource has no status subresource', () => {
    const { writes } = edit(
      pod(),
      (draft) => {
        draft.status!.phase = 'Succeeded';
        draft.metadata.labels!['done'] = 'true';
      },
      { statusSubresource: false },
    );
    expect(writes).toHaveLength(1);
    expect(writes[0]!.subresource).toBeUndefined();
    expect(writes[0]!.mergePatch).toEqual({ metadata: { resourceVersion: '41', labels: { done: 'true' } }, status: { phase: 'Succeeded' } });
  });

  it('reads a member set to undefined as JSON does: removed where it was, nothing where it was not', () => {
    const { writes, object } = edit(pod(), (draft) => {
      draft.metadata.labels = undefined;
      (draft.metadata as { generateName?: string }).generateName = undefined;
    });
    expect(object.metadata.labels).toBeUndefined();
    expect(writes[0]!.jsonPatch).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: '41' },
      { op: 'remove', path: '/metadata/labels' },
    ]);
    expect(writes[0]!.mergePatch).toEqual({ metadata: { resourceVersion: '41', labels: null } });
  });

  it('writes unconditionally an object that never had a resourceVersion', () => {
    const fresh: Thing = { metadata: { name: 'new' }, spec: { size: 1 } };
    const { writes } = edit(fresh, (draft) => {
      draft.spec!['size'] = 2;
    });
    expect(writes[0]!.jsonPatch).toEqual([{ op: 'replace', path: '/spec/size', value: 2 }]);
    expect(writes[0]!.mergePatch).toEqual({ spec: { size: 2 } });
  });

  it('fails on the server once the object has moved on: the test of the resourceVersion does not apply, the merge patch carries the stale one', () => {
    const cached = pod();
    const { writes } = edit(cached, (draft) => {
      draft.spec!.containers[0]!.image = 'app:2';
    });
    const moved = { ...cached, metadata: { ...cached.metadata, resourceVersion: '42' } };
    expect(() => applyWrite(moved, writes[0]!, 'json')).toThrow(JsonPatchError);
    expect(writes[0]!.mergePatch['metadata']).toEqual({ resourceVersion: '41' });
  });

  it('atResourceVersion moves the precondition, adds one where there was none, and removes it', () => {
    const { writes } = edit(pod(), (draft) => {
      draft.status!.phase = 'Failed';
    });
    const moved = atResourceVersion(writes[0]!, '99');
    expect(moved.jsonPatch).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: '99' },
      { op: 'replace', path: '/status/phase', value: 'Failed' },
    ]);
    expect(moved.mergePatch).toEqual({ metadata: { resourceVersion: '99' }, status: { phase: 'Failed' } });
    const none = atResourceVersion(writes[0]!, undefined);
    expect(none.jsonPatch).toEqual([{ op: 'replace', path: '/status/phase', value: 'Failed' }]);
    expect(none.mergePatch).toEqual({ status: { phase: 'Failed' } });
    expect(atResourceVersion(none, '7').jsonPatch[0]).toEqual({ op: 'test', path: '/metadata/resourceVersion', value: '7' });
  });
});

describe('edit, for any recipe (property)', () => {
  const key = fc.constantFrom('a', 'b', 'c', 'x/y', 'tilde~key', 'n');
  const value = (nulls: boolean): fc.Arbitrary<Json> =>
    fc.letrec<{ json: Json }>((tie) => ({
      json: fc.oneof(
        { depthSize: 'small', maxDepth: 3 },
        fc.oneof(fc.integer(), fc.string({ maxLength: 3 }), fc.boolean(), ...(nulls ? [fc.constant(null)] : [])),
        fc.array(tie('json'), { maxLength: 3 }),
        fc.dictionary(key, tie('json'), { maxKeys: 3 }),
      ),
    })).json;
  const mutation = (nulls: boolean) => fc.tuple(fc.nat(), fc.constantFrom('set', 'delete', 'push', 'splice', 'pop', 'undefined'), value(nulls));
  const objectOf = (nulls: boolean) =>
    fc.record({ spec: fc.dictionary(key, value(nulls), { maxKeys: 4 }), status: fc.dictionary(key, value(nulls), { maxKeys: 4 }) }).map(
      ({ spec, status }): Thing => ({ apiVersion: 'example.com/v1', kind: 'Thing', metadata: { name: 't', resourceVersion: '5' }, spec, status }),
    );

  /** Applies one mutation at the container `pick` chooses among those under spec and status. */
  function mutate(root: { spec?: unknown; status?: unknown }, [pick, kind, next]: [number, string, Json]): void {
    const containers: (Json[] | Record<string, Json | undefined>)[] = [];
    const visit = (node: unknown): void => {
      if (typeof node !== 'object' || node === null) return;
      containers.push(node as Json[]);
      for (const child of Object.values(node)) visit(child);
    };
    visit(root.spec);
    visit(root.status);
    const target = containers[pick % Math.max(1, containers.length)];
    if (target === undefined) return;
    const copy = next === null || typeof next !== 'object' ? next : wire(next);
    if (Array.isArray(target)) {
      if (kind === 'push') target.push(copy);
      else if (kind === 'pop') target.pop();
      else if (kind === 'splice' || kind === 'delete') target.splice(pick % Math.max(1, target.length), 1);
      else if (target.length > 0) target[pick % target.length] = copy;
    } else {
      const keys = Object.keys(target);
      const chosen = keys[pick % Math.max(1, keys.length)];
      if (kind === 'delete' && chosen !== undefined) delete target[chosen];
      else if (kind === 'undefined' && chosen !== undefined) target[chosen] = undefined;
      else target[kind === 'push' || chosen === undefined ? `k${pick % 3}` : chosen] = copy;
    }
  }

  it('gives the object a plain copy would, and JSON Patch writes that take the server there, the base left untouched', () => {
    fc.assert(
      fc.property(objectOf(true), fc.array(mutation(true), { maxLength: 6 }), fc.boolean(), (base, mutations, statusApart) => {
        deepFreeze(base);
        const before = wire(base);
        const expected = wire(base) as Thing;
        for (const m of mutations) mutate(expected as { spec?: unknown; status?: unknown }, m);
        const change = edit(base, (draft) => {
          for (const m of mutations) mutate(draft as { spec?: unknown; status?: unknown }, m);
        }, { statusSubresource: statusApart });
        expect(wire(base)).toEqual(before);
        expect(wire(change.object)).toEqual(wire(expected));
        expect(withoutVersion(wire(applyAll(base, change.writes, 'json')))).toEqual(withoutVersion(wire(expected)));
        for (const write of change.writes) expect(write.jsonPatch[0]).toEqual({ op: 'test', path: '/metadata/resourceVersion', value: '5' });
        if (statusApart) {
          for (const write of change.writes) {
            const underStatus = write.jsonPatch.slice(1).every((operation) => operation.path.startsWith('/status'));
            expect(underStatus).toBe(write.subresource === 'status');
          }
        }
      }),
      { numRuns: 400 },
    );
  });

  it('and merge patches that take the server there too, for objects without nulls (a merge patch reads null as delete)', () => {
    fc.assert(
      fc.property(objectOf(false), fc.array(mutation(false), { maxLength: 6 }), (base, mutations) => {
        const change = edit(base, (draft) => {
          for (const m of mutations) mutate(draft as { spec?: unknown; status?: unknown }, m);
        });
        expect(withoutVersion(wire(applyAll(base, change.writes, 'merge')))).toEqual(withoutVersion(wire(change.object)));
      }),
      { numRuns: 400 },
    );
  });
});
