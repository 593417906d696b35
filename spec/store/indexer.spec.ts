import { from, map, Subject, type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { Delta } from '../../lib/reflector/delta';
import { indexer } from '../../lib/store/indexer';
import type { IndexerConfig } from '../../lib/store/indexerConfig';
import type { Change } from '../../lib/store/change';
import { IndexNotFoundError } from '../../lib/store/indexedSnapshot';
import { labelIndex, namespaceIndex, NAMESPACE_INDEX, ownerIndex } from '../../lib/store/indexers';
import type { KubeObject } from '../../lib/base/object';
import { SelectorSyntaxError } from '../../lib/store/selector';
import type { Snapshot } from '../../lib/store/snapshot';
import { dropManagedFields } from '../../lib/store/transforms';

function pod(name: string, resourceVersion: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', resourceVersion, ...extra } };
}

const replace = (items: KubeObject[], resourceVersion = '10', first = true, last = true): Delta => ({ type: 'Replace', items, first, last, resourceVersion });
const added = (object: KubeObject): Delta => ({ type: 'Added', object });
const updated = (object: KubeObject): Delta => ({ type: 'Updated', object });
const deleted = (object: KubeObject): Delta => ({ type: 'Deleted', object });
const bookmark = (resourceVersion: string): Delta => ({ type: 'Bookmark', resourceVersion });

function run(deltas: Delta[], config?: IndexerConfig): Snapshot[] {
  const out: Snapshot[] = [];
  from(deltas)
    .pipe(indexer(config))
    .subscribe({
      next: (s) => out.push(s),
      error: (e: unknown) => {
        throw e;
      },
    });
  return out;
}

const describeChanges = (changes: readonly Change[]): string[] =>
  changes.map((c) => (c.type === 'delete' ? `delete ${c.key}${c.finalStateUnknown ? ' unknown' : ''}` : c.type === 'add' ? `add ${c.key}${c.isInInitialList ? ' initial' : ''}` : `update ${c.key}`));

const names = (objects: readonly KubeObject[]) => objects.map((o) => o.metadata.name).sort();

describe('indexer', () => {
  it('emits a snapshot for each delta that changes the cache, and nothing for the others', () => {
    new TestScheduler((actual, expected) => expect(actual).toEqual(expected)).run(({ cold, expectObservable }) => {
      const source = cold<Delta>('-r-a-u-s-d-d-b-|', {
        r: replace([pod('a', '1')], '5'),
        a: added(pod('b', '6')),
        u: updated(pod('a', '7')),
        s: updated(pod('a', '7')),
        d: deleted(pod('b', '8')),
        b: bookmark('9'),
      });
      const described = source.pipe(
        indexer(),
        map((s) => `${s.resourceVersion} ${s.synced ? 'synced' : 'unsynced'} ${s.size}: ${describeChanges(s.changes).join(', ')}`),
      );
      expectObservable(described).toBe('-r-a-u---d---b-|', {
        r: '5 synced 1: add default/a initial',
        a: '6 synced 2: add default/b',
        u: '7 synced 2: update default/a',
        d: '8 synced 1: delete default/b',
        b: '9 synced 1: ',
      });
    });
  });

  it('holds Replace pages back until the last one, then swaps atomically with adds in list order', () => {
    new TestScheduler((actual, expected) => expect(actual).toEqual(expected)).run(({ cold, expectObservable }) => {
      const source = cold<Delta>('-1-2-3-|', {
        1: replace([pod('a', '1')], '', true, false),
        2: replace([pod('b', '2')], '', false, false),
        3: replace([pod('c', '3'), pod('0', '3')], '30', false, true),
      });
      const described = source.pipe(
        indexer(),
        map((s) => `${s.resourceVersion}: ${describeChanges(s.changes).join(', ')}`),
      );
      expectObservable(described).toBe('-----x-|', { x: '30: add default/a initial, add default/b initial, add default/c initial, add default/0 initial' });
    });
  });

  describe('relist (Replace)', () => {
    it('turns a relist into deletes marked finalStateUnknown, then updates, then adds', () => {
      const [, second] = run([replace([pod('keep', '1'), pod('gone', '1'), pod('gone2', '1')], '10'), replace([pod('new', '5'), pod('keep', '4')], '20')]);
      const described = describeChanges(second!.changes);
      expect(described.slice(0, 2).sort()).toEqual(['delete default/gone unknown', 'delete default/gone2 unknown']);
      expect(described.slice(2)).toEqual(['update default/keep', 'add default/new']);
      expect(second!.resourceVersion).toBe('20');
      expect(second!.synced).toBe(true);
      expect(names(second!.list())).toEqual(['keep', 'new']);
      const deleteChange = second!.changes[0]!;
      expect(deleteChange.type === 'delete' && deleteChange.object.metadata.resourceVersion).toBe('1');
      const update = second!.changes[2]!;
      expect(update.type === 'update' && [update.oldObject.metadata.resourceVersion, update.object.metadata.resourceVersion]).toEqual(['1', '4']);
    });

    it('marks adds of the first Replace only as isInInitialList', () => {
      const [first, , third] = run([replace([pod('a', '1')]), added(pod('b', '2')), replace([pod('a', '1'), pod('b', '2'), pod('c', '3')], '30')]);
      expect(describeChanges(first!.changes)).toEqual(['add default/a initial']);
      expect(describeChanges(third!.changes)).toEqual(['update default/a', 'update default/b', 'add default/c']);
    });

    it('keeps the cached object when a relisted one has the same resourceVersion', () => {
      const cached = pod('a', '1');
      const [, second] = run([replace([cached]), replace([pod('a', '1')], '11')]);
      expect(second!.get('default/a')).toBe(cached);
      const update = second!.changes[0]!;
      expect(update.type === 'update' && update.oldObject === update.object).toBe(true);
    });

    it('lets a first page abandon an unfinished Replace', () => {
      const out = run([replace([pod('x', '1')], '', true, false), replace([pod('a', '1')], '', true, false), replace([pod('b', '2')], '7', false, true)]);
      expect(out).toHaveLength(1);
      expect(names(out[0]!.list())).toEqual(['a', 'b']);
    });

    it('treats a key listed twice as one object, the last one winning', () => {
      const [snapshot] = run([replace([pod('a', '1', { labels: { app: 'x' } }), pod('a', '2', { labels: { app: 'y' } })])], { indexers: { app: labelIndex('app') } });
      expect(describeChanges(snapshot!.changes)).toEqual(['add default/a initial']);
      expect(snapshot!.get('default/a')!.metadata.resourceVersion).toBe('2');
      expect(snapshot!.indexValues('app')).toEqual(['y']);
    });

    it("drops a page's `deleted` from the new store before its items go in (a streaming list's DELETED events)", () => {
      const [, second] = run([
        replace([pod('a', '1'), pod('gone', '1')]),
        replace([pod('b', '2'), pod('c', '2'), pod('gone', '1')], '', true, false),
        { type: 'Replace', items: [pod('c', '3'), pod('d', '4')], deleted: [pod('b', '2'), pod('gone', '1')], first: false, last: false, resourceVersion: '' },
        { type: 'Replace', items: [pod('b', '5')], deleted: [pod('d', '4'), pod('never', '1')], first: false, last: true, resourceVersion: '9' },
      ]);
      expect(names(second!.list())).toEqual(['b', 'c']);
      expect(second!.get('default/b')!.metadata.resourceVersion).toBe('5');
      expect(second!.get('default/c')!.metadata.resourceVersion).toBe('3');
      // Deletes of what left (in store order), then adds in first-seen order, each key once.
      const changes = describeChanges(second!.changes);
      expect(changes.slice(0, 2).sort()).toEqual(['delete default/a unknown', 'delete default/gone unknown']);
      expect(changes.slice(2)).toEqual(['add default/b', 'add default/c']);
      expect(second!.indexKeys(NAMESPACE_INDEX, 'default').sort()).toEqual(['default/b', 'default/c']);
    });

    it('is unsynced before the first Replace and synced after it', () => {
      const [before, after] = run([added(pod('a', '1')), replace([pod('a', '1')], '5')]);
      expect(before!.synced).toBe(false);
      expect(before!.resourceVersion).toBe('1');
      expect(after!.synced).toBe(true);
    });

    it('applies an empty Replace as deletes of everything', () => {
      const [, second] = run([replace([pod('a', '1'), pod('b', '1')]), replace([], '9')]);
      expect(describeChanges(second!.changes).sort()).toEqual(['delete default/a unknown', 'delete default/b unknown']);
      expect(second!.size).toBe(0);
      expect(second!.indexValues(NAMESPACE_INDEX)).toEqual([]);
    });
  });

  describe('watch deltas', () => {
    it('gives updates the old and the new object', () => {
      const [, second] = run([replace([pod('a', '1')]), updated(pod('a', '2'))]);
      const change = second!.changes[0]!;
      expect(change.type).toBe('update');
      expect(change.type === 'update' && [change.oldObject.metadata.resourceVersion, change.object.metadata.resourceVersion]).toEqual(['1', '2']);
    });

    it('treats an Updated for an unknown key as an add, and an Added for a known key as an update', () => {
      const [first, second] = run([updated(pod('a', '1')), added(pod('a', '2'))]);
      expect(describeChanges(first!.changes)).toEqual(['add default/a']);
      expect(describeChanges(second!.changes)).toEqual(['update default/a']);
    });

    it('collapses consecutive duplicate deletes into one', () => {
      const out = run([replace([pod('a', '1')]), deleted(pod('a', '2')), deleted(pod('a', '2')), deleted(pod('never', '3'))]);
      expect(out.map((s) => describeChanges(s.changes))).toEqual([['add default/a initial'], ['delete default/a']]);
    });

    it("hands the server's final object to the delete change", () => {
      const final = pod('a', '2', { deletionTimestamp: '2026-01-01T00:00:00Z' });
      const [, second] = run([replace([pod('a', '1')]), deleted(final)]);
      const change = second!.changes[0]!;
      expect(change.type === 'delete' && change.object).toBe(final);
      expect(change.type === 'delete' && change.finalStateUnknown).toBe(false);
    });

    it('keeps the resourceVersion when an object carries none', () => {
      const [, second] = run([replace([], '5'), added({ metadata: { name: 'n' } })]);
      expect(second!.resourceVersion).toBe('5');
    });

    it('moves the resourceVersion on a Bookmark, with no changes and the same objects', () => {
      const [first, second] = run([replace([pod('a', '1')], '5'), bookmark('99')]);
      expect(second!.resourceVersion).toBe('99');
      expect(second!.changes).toEqual([]);
      expect(second!.get('default/a')).toBe(first!.get('default/a'));
    });
  });

  describe('snapshots', () => {
    it('are immutable: older snapshots do not see later changes', () => {
      const [first, second, third] = run([replace([pod('a', '1')]), added(pod('b', '2')), deleted(pod('a', '3'))]);
      expect(names(first!.list())).toEqual(['a']);
      expect(names(second!.list())).toEqual(['a', 'b']);
      expect(names(third!.list())).toEqual(['b']);
      expect(first!.size).toBe(1);
      expect([...first!.keys()]).toEqual(['default/a']);
      expect(second!.byIndex(NAMESPACE_INDEX, 'default')).toHaveLength(2);
    });

    it('answer namespace and label selector queries', () => {
      const [snapshot] = run([
        replace([
          pod('web', '1', { labels: { app: 'web', tier: 'front' } }),
          pod('db', '1', { labels: { app: 'db' } }),
          pod('web', '1', { namespace: 'other', labels: { app: 'web' } }),
          { metadata: { name: 'node', resourceVersion: '1', labels: { app: 'web' } } },
        ]),
      ]);
      expect(snapshot!.list()).toHaveLength(4);
      expect(names(snapshot!.list({ namespace: 'default' }))).toEqual(['db', 'web']);
      expect(snapshot!.list({ namespace: '' })).toHaveLength(4);
      expect(names(snapshot!.list({ labelSelector: 'app=web' }))).toEqual(['node', 'web', 'web']);
      expect(names(snapshot!.list({ namespace: 'default', labelSelector: 'app=web,tier in (front)' }))).toEqual(['web']);
      expect(names(snapshot!.list({ namespace: 'default', labelSelector: '!tier' }))).toEqual(['db']);
      expect(snapshot!.list({ namespace: 'nowhere' })).toEqual([]);
      expect(() => snapshot!.list({ labelSelector: 'app in' })).toThrow(SelectorSyntaxError);
    });

    it('filter by namespace even without a namespace index', () => {
      const [snapshot] = run([replace([pod('a', '1'), pod('b', '1', { namespace: 'x' })])], { indexers: { app: labelIndex('app') } });
      expect(names(snapshot!.list({ namespace: 'x' }))).toEqual(['b']);
    });

    it('report an unknown index with IndexNotFoundError', () => {
      const [snapshot] = run([replace([])]);
      expect(() => snapshot!.byIndex('nope', 'x')).toThrow(IndexNotFoundError);
      expect(() => snapshot!.indexValues('nope')).toThrow(/does not exist/);
    });
  });

  describe('indexes', () => {
    const config: IndexerConfig = { indexers: { [NAMESPACE_INDEX]: namespaceIndex, owner: ownerIndex, tags: (o) => Object.keys(o.metadata.labels ?? {}) } };
    const ref = (uid: string) => ({ apiVersion: 'v1', kind: 'ReplicaSet', name: uid, uid });

    it('index an object under every value its function returns', () => {
      const [snapshot] = run([replace([pod('a', '1', { ownerReferences: [ref('u1'), ref('u2')] }), pod('b', '1', { ownerReferences: [ref('u2')] })])], config);
      expect(snapshot!.indexValues('owner').sort()).toEqual(['u1', 'u2']);
      expect(snapshot!.indexKeys('owner', 'u2').sort()).toEqual(['default/a', 'default/b']);
      expect(names(snapshot!.byIndex('owner', 'u1'))).toEqual(['a']);
      expect(snapshot!.indexKeys('owner', 'none')).toEqual([]);
    });

    it('remove empty postings when the last object leaves a value', () => {
      const out = run([replace([pod('a', '1', { labels: { x: '1' } })]), updated(pod('a', '2', { labels: { y: '1' } })), deleted(pod('a', '3'))], config);
      expect(out[0]!.indexValues('tags')).toEqual(['x']);
      expect(out[1]!.indexValues('tags')).toEqual(['y']);
      expect(out[2]!.indexValues('tags')).toEqual([]);
      expect(out[2]!.indexValues(NAMESPACE_INDEX)).toEqual([]);
    });

    it('treat hostile names and label values as plain strings', () => {
      const hostile = JSON.parse('{"__proto__":"constructor","constructor":"__proto__"}') as Record<string, string>;
      const [snapshot] = run([replace([pod('__proto__', '1', { namespace: 'constructor', labels: hostile })])], { indexers: { [NAMESPACE_INDEX]: namespaceIndex, proto: labelIndex('__proto__'), ctor: labelIndex('constructor') } });
      expect(snapshot!.get('constructor/__proto__')!.metadata.name).toBe('__proto__');
      expect(snapshot!.has('__proto__')).toBe(false);
      expect(snapshot!.indexKeys('proto', 'constructor')).toEqual(['constructor/__proto__']);
      expect(snapshot!.indexKeys('ctor', '__proto__')).toEqual(['constructor/__proto__']);
      expect(snapshot!.indexValues('ctor')).toEqual(['__proto__']);
      expect(snapshot!.list({ namespace: 'constructor', labelSelector: 'constructor' })).toHaveLength(1);
      expect(({} as Record<string, unknown>)['constructor']).toBe(Object);
    });
  });

  describe('transform and freeze', () => {
    it('transforms every stored object once, and the final state of a Deleted delta, never a relist tombstone', () => {
      const seen: string[] = [];
      const transform = (o: KubeObject): KubeObject => {
        seen.push(`${o.metadata.name}@${o.metadata.resourceVersion}`);
        return dropManagedFields(o);
      };
      const out = run(
        [replace([pod('a', '1', { managedFields: [{}] })]), updated(pod('a', '2', { managedFields: [{}] })), updated(pod('a', '2')), deleted(pod('a', '3', { managedFields: [{}] })), replace([pod('b', '4')], '11')],
        { transform },
      );
      expect(seen).toEqual(['a@1', 'a@2', 'a@3', 'b@4']);
      expect(out[0]!.get('default/a')!.metadata.managedFields).toBeUndefined();
      const deleteChange = out[2]!.changes[0]!;
      expect(deleteChange.object.metadata).toEqual({ name: 'a', namespace: 'default', resourceVersion: '3' });
    });

    it('deep-freezes stored objects only when asked', () => {
      const [frozen] = run([replace([pod('a', '1', { labels: { x: 'y' } })])], { freeze: true });
      expect(Object.isFrozen(frozen!.get('default/a'))).toBe(true);
      expect(Object.isFrozen(frozen!.get('default/a')!.metadata.labels)).toBe(true);
      const [plain] = run([replace([pod('a', '1')])]);
      expect(Object.isFrozen(plain!.get('default/a'))).toBe(false);
    });
  });

  describe('structural sharing between versions', () => {
    type WithSpec = KubeObject & { spec: { replicas: number; template: unknown } };
    const withSpec = (resourceVersion: string, replicas: number, extra: Partial<KubeObject['metadata']> = {}): WithSpec => ({
      ...pod('a', resourceVersion, { labels: { app: 'web' }, ...extra }),
      spec: { replicas, template: { containers: [{ name: 'c', image: 'nginx' }] } },
    });
    const update = (snapshot: Snapshot): { oldObject: WithSpec; object: WithSpec } => {
      const change = snapshot.changes[0]!;
      if (change.type !== 'update') throw new Error(`expected an update, got ${change.type}`);
      return { oldObject: change.oldObject as WithSpec, object: change.object as WithSpec };
    };

    it("gives an update's object the old version's unchanged subtrees, and new ones where it changed", () => {
      const incoming = withSpec('2', 3);
      const [, second] = run([replace([withSpec('1', 2)]), updated(incoming)]);
      const { oldObject, object } = update(second!);
      expect(object).toBe(incoming);
      expect(object.metadata.labels).toBe(oldObject.metadata.labels);
      expect(object.spec).not.toBe(oldObject.spec);
      expect(object.spec.template).toBe(oldObject.spec.template);
      expect(object.spec.replicas).toBe(3);
      expect(object).toEqual(withSpec('2', 3));
    });

    it('shares a relisted object with the cached version it replaces', () => {
      const [, relisted] = run([replace([withSpec('1', 2)]), replace([withSpec('2', 2)], '11')]);
      const { oldObject, object } = update(relisted!);
      expect(object.metadata.resourceVersion).toBe('2');
      expect(object.spec).toBe(oldObject.spec);
    });

    it('shares what dropManagedFields passes through with the cached version', () => {
      const [, second] = run([replace([withSpec('1', 2, { managedFields: [{}] })]), updated(withSpec('2', 2, { managedFields: [{}] }))], { transform: dropManagedFields });
      const { oldObject, object } = update(second!);
      expect(object.metadata.managedFields).toBeUndefined();
      expect(object.spec).toBe(oldObject.spec);
      expect(object.metadata.labels).toBe(oldObject.metadata.labels);
    });

    it('shares after dropManagedFields, so the walk never visits the managedFields it drops', () => {
      const entry = { manager: 'kubelet', fieldsV1: { 'f:status': {} } };
      run([replace([withSpec('1', 2)]), updated(withSpec('2', 2, { managedFields: [entry] as KubeObject['metadata']['managedFields'] }))], { transform: dropManagedFields });
      // A walk would have swapped the entry's empty object for the shared frozen one.
      expect(Object.isFrozen(entry.fieldsV1['f:status'])).toBe(false);
    });

    it('shares before any other transform, so objects its result holds from elsewhere are never written', () => {
      const defaults = { replicas: 2, template: { containers: [{ name: 'c', image: 'nginx' }], volumes: [{ name: 'v', emptyDir: {} }] } };
      const emptyDir = defaults.template.volumes[0]!.emptyDir;
      const transform = (o: KubeObject): KubeObject => ({ ...o, spec: defaults }) as KubeObject;
      const [first] = run([replace([withSpec('1', 2)])], { transform });
      expect((first!.get('default/a') as WithSpec).spec).toBe(defaults);
      expect(defaults.template.volumes[0]!.emptyDir).toBe(emptyDir);
      expect(Object.isFrozen(emptyDir)).toBe(false);
    });

    it('freezes the new version without refreezing the shared parts, and without throwing', () => {
      const [, second] = run([replace([withSpec('1', 2)]), updated(withSpec('2', 2))], { freeze: true });
      const { oldObject, object } = update(second!);
      expect(object.spec).toBe(oldObject.spec);
      expect(Object.isFrozen(object)).toBe(true);
      expect(Object.isFrozen(object.metadata)).toBe(true);
    });

    it('gives all cached objects one shared, frozen empty object, from the list and from watch events', () => {
      type WithVolumes = KubeObject & { spec: { volumes: { name: string; emptyDir: object }[] } };
      const volume = (name: string, rv: string): WithVolumes => ({ ...pod(name, rv), spec: { volumes: [{ name: 'scratch', emptyDir: {} }] } });
      const [listed, afterAdd] = run([replace([volume('a', '1'), volume('b', '1')]), added(volume('c', '2'))]);
      const emptyDirOf = (object: KubeObject | undefined): unknown => (object as WithVolumes).spec.volumes[0]!.emptyDir;
      const first = emptyDirOf(listed!.get('default/a'));
      expect(emptyDirOf(listed!.get('default/b'))).toBe(first);
      expect(emptyDirOf(afterAdd!.get('default/c'))).toBe(first);
      expect(Object.isFrozen(first)).toBe(true);
      const [plain] = run([replace([volume('a', '1'), volume('b', '1')])], { shareUnchanged: false });
      expect(emptyDirOf(plain!.get('default/a'))).not.toBe(emptyDirOf(plain!.get('default/b')));
    });

    it('keeps versions apart with shareUnchanged: false', () => {
      const [, second] = run([replace([withSpec('1', 2)]), updated(withSpec('2', 2))], { shareUnchanged: false });
      const { oldObject, object } = update(second!);
      expect(object.spec).not.toBe(oldObject.spec);
      expect(object.spec).toEqual(oldObject.spec);
    });
  });

  describe('subscriptions', () => {
    it('each keep their own state (the operator is cold)', () => {
      const deltas = new Subject<Delta>();
      const indexed = deltas.pipe(indexer());
      const a: Snapshot[] = [];
      const b: Snapshot[] = [];
      indexed.subscribe((s) => a.push(s));
      deltas.next(replace([pod('x', '1')]));
      indexed.subscribe((s) => b.push(s));
      deltas.next(added(pod('y', '2')));
      expect(a.map((s) => s.size)).toEqual([1, 2]);
      expect(b.map((s) => s.size)).toEqual([1]);
      expect(describeChanges(b[0]!.changes)).toEqual(['add default/y']);
    });

    it('unsubscribe their source when the subscriber leaves, and end with it, with batches or without', () => {
      const scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
      const failure = new Error('failure');
      scheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
        for (const config of [{}, { batch: { scheduler } }]) {
          const sizes = (source: Observable<Delta>) => source.pipe(indexer(config), map((snapshot) => snapshot.size));
          const values = { r: replace([pod('x', '1')]), a: added(pod('y', '2')) };
          const left = hot<Delta>('-r-a-a-', values);
          const completed = hot<Delta>('-r-a|', values);
          const failed = hot<Delta>('-r-a#', values, failure);
          expectObservable(sizes(left), '^--!').toBe('-1-', { 1: 1 });
          expectObservable(sizes(completed)).toBe('-1-2|', { 1: 1, 2: 2 });
          expectObservable(sizes(failed)).toBe('-1-2#', { 1: 1, 2: 2 }, failure);
          expectSubscriptions(left.subscriptions).toBe('^--!');
          expectSubscriptions(completed.subscriptions).toBe('^---!');
          expectSubscriptions(failed.subscriptions).toBe('^---!');
        }
      });
    });
  });
});
