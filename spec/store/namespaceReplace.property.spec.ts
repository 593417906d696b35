import fc from 'fast-check';
import { from } from 'rxjs';
import type { Delta, NamespaceScope } from '../../lib/reflector/delta';
import type { Change } from '../../lib/store/change';
import { indexer } from '../../lib/store/indexer';
import { NAMESPACE_INDEX } from '../../lib/store/indexers';
import type { KubeObject } from '../../lib/base/object';
import type { Snapshot } from '../../lib/store/snapshot';

/**
 * Replaces scoped to one namespace, interleaved page by page with each other and with the watch
 * deltas of other namespaces (as an informer over several namespaces merges its watches), against
 * a model that keeps one map per namespace.
 */

const NAMESPACES = ['ns1', 'ns2', 'ns3'] as const;

const objectIn = (namespace: string): fc.Arbitrary<KubeObject> =>
  fc.record({ name: fc.constantFrom('a', 'b', 'c'), resourceVersion: fc.constantFrom('1', '2', '3') }).map(({ name, resourceVersion }) => ({ metadata: { namespace, name, resourceVersion } }));

const deltaArb: fc.Arbitrary<Delta> = fc.constantFrom(...NAMESPACES).chain((namespace) =>
  fc.oneof(
    fc.record({ type: fc.constant('Added' as const), object: objectIn(namespace) }),
    fc.record({ type: fc.constant('Updated' as const), object: objectIn(namespace) }),
    fc.record({ type: fc.constant('Deleted' as const), object: objectIn(namespace) }),
    fc.record({
      type: fc.constant('Replace' as const),
      items: fc.array(objectIn(namespace), { maxLength: 4 }),
      first: fc.boolean(),
      last: fc.boolean(),
      resourceVersion: fc.constantFrom('10', '20'),
      scope: fc.record({ namespace: fc.constant(namespace), cause: fc.constantFrom<NamespaceScope['cause']>('listed', 'added'), unsyncedNamespaces: fc.constantFrom(0, 1) }),
    }),
    fc.constant<Delta>({ type: 'Replace', items: [], first: true, last: true, resourceVersion: '', scope: { namespace, cause: 'removed', unsyncedNamespaces: 0 } }),
  ),
);

/** The model: each namespace's objects (key → resourceVersion), and the unfinished relists. */
class Model {
  readonly namespaces = new Map<string, Map<string, string>>();
  private readonly pending = new Map<string, Map<string, string>>();

  step(delta: Delta): void {
    if (delta.type === 'Bookmark') return;
    if (delta.type !== 'Replace') {
      const { namespace = '', name, resourceVersion = '' } = delta.object.metadata;
      const objects = this.objectsOf(namespace);
      if (delta.type === 'Deleted') objects.delete(`${namespace}/${name}`);
      else objects.set(`${namespace}/${name}`, resourceVersion);
      return;
    }
    const namespace = delta.scope!.namespace;
    let relist = this.pending.get(namespace);
    if (delta.first || relist === undefined) this.pending.set(namespace, (relist = new Map()));
    for (const item of delta.items) relist.set(`${namespace}/${item.metadata.name}`, item.metadata.resourceVersion ?? '');
    if (!delta.last) return;
    this.pending.delete(namespace);
    this.namespaces.set(namespace, relist);
  }

  versions(): Record<string, string> {
    return Object.fromEntries([...this.namespaces.values()].flatMap((objects) => [...objects]).sort(([a], [b]) => (a < b ? -1 : 1)));
  }

  private objectsOf(namespace: string): Map<string, string> {
    let objects = this.namespaces.get(namespace);
    if (objects === undefined) this.namespaces.set(namespace, (objects = new Map()));
    return objects;
  }
}

const versionsOf = (snapshot: Snapshot): Record<string, string> =>
  Object.fromEntries([...snapshot.keys()].sort().map((key) => [key, snapshot.get(key)!.metadata.resourceVersion ?? '']));

/** The previous snapshot's objects with `changes` applied, key → resourceVersion. */
function fold(previous: Record<string, string>, changes: readonly Change[]): Record<string, string> {
  const next = { ...previous };
  for (const change of changes) {
    if (change.type === 'delete') delete next[change.key];
    else next[change.key] = change.object.metadata.resourceVersion ?? '';
  }
  return Object.fromEntries(Object.entries(next).sort(([a], [b]) => (a < b ? -1 : 1)));
}

describe('indexer: Replaces scoped to namespaces (property)', () => {
  it('holds what the model holds after every delta, with changes that fold into each snapshot and a namespace index that agrees', () => {
    fc.assert(
      fc.property(fc.array(deltaArb, { maxLength: 50 }), (deltas) => {
        const model = new Model();
        let previous: Record<string, string> = {};
        let emitted = 0;
        from(deltas)
          .pipe(indexer())
          .subscribe({
            next: (snapshot) => {
              emitted += 1;
              expect(fold(previous, snapshot.changes)).toEqual(versionsOf(snapshot));
              for (const namespace of NAMESPACES) {
                expect(snapshot.indexKeys(NAMESPACE_INDEX, namespace).sort()).toEqual([...snapshot.keys()].filter((key) => key.startsWith(`${namespace}/`)).sort());
              }
              previous = versionsOf(snapshot);
            },
            error: (e: unknown) => {
              throw e;
            },
          });
        for (const delta of deltas) model.step(delta);
        // Every delta that can change the cache made a snapshot, so the last one is the model's.
        if (emitted > 0) expect(previous).toEqual(model.versions());
        else expect(model.versions()).toEqual({});
      }),
      { numRuns: 300 },
    );
  });
});
