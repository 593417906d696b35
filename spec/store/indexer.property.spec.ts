import fc from 'fast-check';
import { from, Subject } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { Delta } from '../../lib/reflector/delta';
import { indexer } from '../../lib/store/indexer';
import type { Change } from '../../lib/store/change';
import { labelIndex, namespaceIndex, ownerIndex, type IndexFunc } from '../../lib/store/indexers';
import { objectKey } from '../../lib/store/keys';
import type { KubeObject } from '../../lib/base/object';
import type { Snapshot } from '../../lib/store/snapshot';

const indexers: Record<string, IndexFunc> = {
  namespace: namespaceIndex,
  app: labelIndex('app'),
  owner: ownerIndex,
  labelKeys: (o) => Object.keys(o.metadata.labels ?? {}),
};

// Few names, namespaces and versions, so that updates, same-version updates, deletes of absent
// keys and relists that keep, change and drop objects all happen often.
const objectArb: fc.Arbitrary<KubeObject> = fc
  .record({
    name: fc.constantFrom('a', 'b', 'c', 'd', '__proto__', 'constructor'),
    namespace: fc.constantFrom('ns1', 'ns2', undefined),
    resourceVersion: fc.constantFrom('1', '2', '3', '4'),
    app: fc.option(fc.constantFrom('web', 'db', '__proto__'), { nil: undefined }),
    owners: fc.uniqueArray(fc.constantFrom('u1', 'u2', 'u3'), { maxLength: 2 }),
  })
  .map(({ name, namespace, resourceVersion, app, owners }) => ({
    metadata: {
      name,
      ...(namespace === undefined ? {} : { namespace }),
      resourceVersion,
      labels: (app === undefined ? { other: 'x' } : { app }) as Record<string, string>,
      ownerReferences: owners.map((uid) => ({ apiVersion: 'v1', kind: 'ReplicaSet', name: uid, uid })),
    },
  }));

const deltaArb: fc.Arbitrary<Delta> = fc.oneof(
  fc.record({ type: fc.constant('Added' as const), object: objectArb }),
  fc.record({ type: fc.constant('Updated' as const), object: objectArb }),
  fc.record({ type: fc.constant('Deleted' as const), object: objectArb }),
  fc.record({ type: fc.constant('Bookmark' as const), resourceVersion: fc.constantFrom('7', '8') }),
  fc.record({
    type: fc.constant('Replace' as const),
    items: fc.array(objectArb, { maxLength: 6 }),
    first: fc.boolean(),
    last: fc.boolean(),
    resourceVersion: fc.constantFrom('10', '20', '30'),
  }),
);

interface Expected {
  readonly objects: ReadonlyMap<string, KubeObject>;
  readonly resourceVersion: string;
  readonly synced: boolean;
  readonly changes: readonly string[];
}

/** A deliberately naive model of the indexer: a Map copied on every change. */
class ReferenceIndexer {
  private objects = new Map<string, KubeObject>();
  private resourceVersion = '';
  private synced = false;
  private relist: { objects: Map<string, KubeObject>; order: string[] } | undefined;

  step(delta: Delta): Expected | undefined {
    switch (delta.type) {
      case 'Bookmark':
        this.resourceVersion = delta.resourceVersion;
        return this.emit([]);
      case 'Added':
      case 'Updated': {
        const key = objectKey(delta.object);
        const old = this.objects.get(key);
        const version = delta.object.metadata.resourceVersion;
        if (old && old.metadata.resourceVersion === version) return undefined;
        this.objects = new Map(this.objects).set(key, delta.object);
        this.resourceVersion = version ?? this.resourceVersion;
        return this.emit([old ? `update ${key}` : `add ${key}`]);
      }
      case 'Deleted': {
        const key = objectKey(delta.object);
        if (!this.objects.has(key)) return undefined;
        this.objects = new Map(this.objects);
        this.objects.delete(key);
        this.resourceVersion = delta.object.metadata.resourceVersion ?? this.resourceVersion;
        return this.emit([`delete ${key}`]);
      }
      case 'Replace': {
        if (delta.first || !this.relist) this.relist = { objects: new Map(), order: [] };
        for (const item of delta.items) {
          const key = objectKey(item);
          if (!this.relist.objects.has(key)) this.relist.order.push(key);
          this.relist.objects.set(key, item);
        }
        if (!delta.last) return undefined;
        const { objects, order } = this.relist;
        this.relist = undefined;
        const deletes = [...this.objects.keys()].filter((k) => !objects.has(k)).map((k) => `delete ${k} unknown`).sort();
        const updates = order.filter((k) => this.objects.has(k)).map((k) => `update ${k}`);
        const adds = order.filter((k) => !this.objects.has(k)).map((k) => `add ${k}${this.synced ? '' : ' initial'}`);
        this.objects = objects;
        this.resourceVersion = delta.resourceVersion;
        this.synced = true;
        return this.emit([...deletes, ...updates, ...adds]);
      }
    }
  }

  private emit(changes: string[]): Expected {
    return { objects: this.objects, resourceVersion: this.resourceVersion, synced: this.synced, changes };
  }
}

function describeChanges(changes: readonly Change[]): string[] {
  const described = changes.map((c) =>
    c.type === 'delete' ? `delete ${c.key}${c.finalStateUnknown ? ' unknown' : ''}` : c.type === 'add' ? `add ${c.key}${c.isInInitialList ? ' initial' : ''}` : `update ${c.key}`,
  );
  // Deletes inferred from a relist come in trie order; the rule is only that they come first.
  const unknown = described.filter((d) => d.endsWith(' unknown')).sort();
  return [...unknown, ...described.filter((d) => !d.endsWith(' unknown'))];
}

function indexFromScratch(snapshot: Snapshot, fn: IndexFunc): Map<string, string[]> {
  const index = new Map<string, string[]>();
  for (const key of snapshot.keys()) {
    for (const value of new Set(fn(snapshot.get(key)!))) index.set(value, [...(index.get(value) ?? []), key].sort());
  }
  return new Map([...index].sort(([a], [b]) => (a < b ? -1 : 1)));
}

function indexAsStored(snapshot: Snapshot, name: string): Map<string, string[]> {
  const values = snapshot.indexValues(name).sort();
  return new Map(values.map((value) => [value, snapshot.indexKeys(name, value).sort()]));
}

function checkAgainst(snapshot: Snapshot, expected: Expected): void {
  expect(snapshot.resourceVersion).toBe(expected.resourceVersion);
  expect(snapshot.synced).toBe(expected.synced);
  expect(snapshot.size).toBe(expected.objects.size);
  expect([...snapshot.keys()].sort()).toEqual([...expected.objects.keys()].sort());
  for (const [key, object] of expected.objects) expect(snapshot.get(key)?.metadata.resourceVersion).toBe(object.metadata.resourceVersion);
  for (const [name, fn] of Object.entries(indexers)) expect(indexAsStored(snapshot, name)).toEqual(indexFromScratch(snapshot, fn));
  for (const namespace of ['ns1', 'ns2']) {
    const expectedKeys = [...expected.objects].filter(([, o]) => o.metadata.namespace === namespace).map(([k]) => k).sort();
    expect(snapshot.list({ namespace }).map(objectKey).sort()).toEqual(expectedKeys);
  }
}

/** Changes carry the objects they are about: new ones from this snapshot, old ones from the last. */
function checkChangeObjects(snapshot: Snapshot, previous: Snapshot | undefined): void {
  for (const change of snapshot.changes) {
    if (change.type !== 'delete') expect(change.object).toBe(snapshot.get(change.key));
    if (change.type === 'update') expect(change.oldObject).toBe(previous?.get(change.key));
    if (change.type === 'delete' && change.finalStateUnknown) expect(change.object).toBe(previous?.get(change.key));
    if (change.type === 'delete') expect(snapshot.has(change.key)).toBe(false);
  }
}

describe('indexer (property)', () => {
  it('matches a naive reference model, and every index matches one recomputed from scratch, for any delta sequence', () => {
    fc.assert(
      fc.property(fc.array(deltaArb, { maxLength: 60 }), (deltas) => {
        const reference = new ReferenceIndexer();
        const expected = deltas.map((d) => reference.step(d)).filter((e): e is Expected => e !== undefined);
        const actual: Snapshot[] = [];
        from(deltas)
          .pipe(indexer({ indexers }))
          .subscribe({ next: (s) => actual.push(s), error: (e: unknown) => { throw e; } });
        expect(actual).toHaveLength(expected.length);
        // Checked after the whole run: every snapshot must still read as it did when emitted.
        actual.forEach((snapshot, i) => {
          expect(describeChanges(snapshot.changes)).toEqual(expected[i]!.changes);
          checkAgainst(snapshot, expected[i]!);
          checkChangeObjects(snapshot, actual[i - 1]);
        });
      }),
      { numRuns: 300 },
    );
  });
});

/** One batch boundary (the scheduler runs: the task ends) after the delta at each index listed. */
const batchedRunArb = fc.record({
  deltas: fc.array(deltaArb, { maxLength: 60 }),
  boundaries: fc.array(fc.boolean(), { maxLength: 60 }),
  maxDeltas: fc.integer({ min: 1, max: 8 }),
});

/** Key → resourceVersion of a snapshot, or of a fold of changes. */
const versions = (entries: Iterable<[string, KubeObject]>): Record<string, string | undefined> =>
  Object.fromEntries([...entries].map(([key, object]) => [key, object.metadata.resourceVersion]).sort(([a], [b]) => (a! < b! ? -1 : 1)));

describe('indexer with batches (property)', () => {
  it('gives a slow consumer consistent snapshots whose changes, folded in order, add up to the deltas, whatever the batch boundaries', () => {
    fc.assert(
      fc.property(batchedRunArb, ({ deltas, boundaries, maxDeltas }) => {
        const reference = new ReferenceIndexer();
        const expected = deltas.map((d) => reference.step(structuredClone(d))).filter((e): e is Expected => e !== undefined);
        const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
        const source = new Subject<Delta>();
        const actual: Snapshot[] = [];
        const subscription = source.pipe(indexer({ indexers, batch: { scheduler, maxDeltas } })).subscribe({
          next: (s) => actual.push(s),
          error: (e: unknown) => {
            throw e;
          },
        });
        deltas.forEach((delta, i) => {
          source.next(delta);
          if (boundaries[i] === true) scheduler.flush();
        });
        source.complete();
        subscription.unsubscribe();

        // The consumer reads every snapshot only now, after the whole run.
        const folded = new Map<string, KubeObject>();
        actual.forEach((snapshot) => {
          const keys = new Set<string>();
          for (const change of snapshot.changes) {
            // Each change replays from the state the ones before it left.
            const before = folded.get(change.key);
            if (change.type === 'add') expect(before).toBeUndefined();
            else expect(before).toBeDefined();
            if (change.type === 'update') expect(change.oldObject).toBe(before);
            if (change.type === 'delete') folded.delete(change.key);
            else folded.set(change.key, change.object);
            keys.add(change.key);
          }
          expect(versions([...snapshot.keys()].map((k): [string, KubeObject] => [k, snapshot.get(k)!]))).toEqual(versions(folded));
          for (const key of keys) expect(snapshot.get(key)).toBe(folded.get(key));
          for (const [name, fn] of Object.entries(indexers)) expect(indexAsStored(snapshot, name)).toEqual(indexFromScratch(snapshot, fn));
          // A batch that changes a key twice tells handle() to coalesce it.
          const numbered = snapshot as unknown as { sequence: number; touchedSince: number };
          if (keys.size < snapshot.changes.length) expect(numbered.touchedSince).toBeGreaterThanOrEqual(numbered.sequence);
        });
        // The same changes, in the same order, as one snapshot per delta would carry.
        expect(actual.flatMap((s) => describeChanges(s.changes))).toEqual(expected.flatMap((e) => e.changes));
        const last = expected.at(-1);
        if (last === undefined) expect(actual).toHaveLength(0);
        else {
          expect(versions(folded)).toEqual(versions(last.objects));
          expect(actual.at(-1)!.resourceVersion).toBe(last.resourceVersion);
          expect(actual.at(-1)!.synced).toBe(last.synced);
        }
      }),
      { numRuns: 300 },
    );
  });
});
