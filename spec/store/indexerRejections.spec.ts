import { from } from 'rxjs';
import type { Delta } from '../../lib/reflector/delta';
import { indexer } from '../../lib/store/indexer';
import type { IndexerConfig } from '../../lib/store/indexerConfig';
import { RejectedObjectError } from '../../lib/base/errors';
import type { Change } from '../../lib/store/change';
import { labelIndex, namespaceIndex, NAMESPACE_INDEX, type IndexFunc } from '../../lib/store/indexers';
import type { KubeObject } from '../../lib/base/object';
import type { Snapshot } from '../../lib/store/snapshot';
import { dropManagedFields } from '../../lib/store/transforms';

/**
 * What the indexer does with an object it cannot cache (no name, a throwing transform or index
 * function): a value reported through `onRejected`, never an error that ends the stream.
 */

type ConfigMap = KubeObject & { data?: Record<string, string> };

const configMap = (name: string, resourceVersion: string, data?: Record<string, string>, labels?: Record<string, string>): ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default', resourceVersion, ...(labels ? { labels } : {}), managedFields: [{ manager: 'kubectl' }] },
  ...(data ? { data } : {}),
});

const replace = (items: KubeObject[], resourceVersion = '10'): Delta => ({ type: 'Replace', items, first: true, last: true, resourceVersion });
const added = (object: KubeObject): Delta => ({ type: 'Added', object });
const updated = (object: KubeObject): Delta => ({ type: 'Updated', object });
const deleted = (object: KubeObject): Delta => ({ type: 'Deleted', object });

/** The transform users write first: it reads `data`, which a ConfigMap may not have. */
const keysOfData = (object: ConfigMap): ConfigMap => ({ ...object, data: Object.fromEntries(Object.keys(object.data!).map((k) => [k, ''])) });

interface Run {
  readonly snapshots: Snapshot[];
  readonly rejections: RejectedObjectError[];
  readonly error: unknown;
  readonly completed: boolean;
}

function run(deltas: Delta[], config: IndexerConfig = {}): Run {
  const snapshots: Snapshot[] = [];
  const rejections: RejectedObjectError[] = [];
  let error: unknown;
  let completed = false;
  from(deltas)
    .pipe(indexer({ ...config, onRejected: (rejection) => rejections.push(rejection) }))
    .subscribe({ next: (s) => snapshots.push(s), error: (e: unknown) => (error = e), complete: () => (completed = true) });
  return { snapshots, rejections, error, completed };
}

const describeChanges = (changes: readonly Change[]): string[] =>
  changes.map((c) => `${c.type} ${c.key}${c.type === 'update' ? ` ${c.oldObject.metadata.resourceVersion}→${c.object.metadata.resourceVersion}` : ''}`);
const contents = (snapshot: Snapshot | undefined): Record<string, string | undefined> =>
  Object.fromEntries([...(snapshot?.keys() ?? [])].map((key) => [key, snapshot?.get(key)?.metadata.resourceVersion]));

describe('indexer: objects it cannot cache are values, not errors', () => {
  it('leaves out a listed object whose transform throws, reports it with its key, and goes on', () => {
    const boom = new TypeError("Cannot convert undefined or null to object");
    const transform = (object: ConfigMap): ConfigMap => {
      if (object.data === undefined) throw boom;
      return keysOfData(object);
    };
    const { snapshots, rejections, error } = run([replace([configMap('a', '1', { x: '1' }), configMap('empty', '2')]), added(configMap('c', '3', { y: '2' }))], { transform } as IndexerConfig);
    expect(snapshots[0]!.get('default/a')).toEqual(keysOfData(configMap('a', '1', { x: '1' })));
    expect(error).toBeUndefined();
    expect(snapshots.map(contents)).toEqual([{ 'default/a': '1' }, { 'default/a': '1', 'default/c': '3' }]);
    expect(snapshots[0]!.synced).toBe(true);
    expect(rejections).toHaveLength(1);
    const [rejection] = rejections;
    expect(rejection).toBeInstanceOf(RejectedObjectError);
    expect(rejection).toMatchObject({ kind: 'object', key: 'default/empty', stage: 'transform', outcome: 'left-out', cause: boom });
    expect(rejection!.message).toBe('cannot cache default/empty: the transform failed: TypeError: Cannot convert undefined or null to object; left out of the cache');
  });

  it('keeps the cached version when the transform throws on an update, and takes the next good one', () => {
    const transform = (object: ConfigMap): ConfigMap => {
      if (object.data === undefined) throw new Error('no data');
      return object;
    };
    const { snapshots, rejections } = run([replace([configMap('a', '1', { x: '1' })]), updated(configMap('a', '2')), updated(configMap('a', '3', { x: '3' }))], { transform } as IndexerConfig);
    expect(snapshots.map((s) => describeChanges(s.changes))).toEqual([['add default/a'], ['update default/a 1→3']]);
    expect(rejections.map((r) => `${r.key} ${r.stage} ${r.outcome}`)).toEqual(['default/a transform kept-previous']);
  });

  it('keeps the cached version of an object a relist cannot transform, instead of deleting it', () => {
    let failing = false;
    const transform = (object: KubeObject): KubeObject => {
      if (failing && object.metadata.name === 'a') throw new Error('no');
      return object;
    };
    const deltas$ = [replace([configMap('a', '1'), configMap('b', '1')]), replace([configMap('a', '2'), configMap('b', '2'), configMap('c', '2')], '20')];
    const snapshots: Snapshot[] = [];
    const rejections: RejectedObjectError[] = [];
    from(deltas$)
      .pipe(indexer({ transform: (o) => transform(o), onRejected: (r) => rejections.push(r) }))
      .subscribe((snapshot) => {
        snapshots.push(snapshot);
        failing = true;
      });
    const relisted = snapshots[1]!;
    expect(contents(relisted)).toEqual({ 'default/a': '1', 'default/b': '2', 'default/c': '2' });
    expect(describeChanges(relisted.changes)).toEqual(['update default/a 1→1', 'update default/b 1→2', 'add default/c']);
    expect(rejections.map((r) => `${r.key} ${r.outcome}`)).toEqual(['default/a kept-previous']);
  });

  it('rejects what a transform returns when it is not an object with metadata', () => {
    const { snapshots, rejections } = run([replace([configMap('a', '1')])], { transform: () => undefined as unknown as KubeObject });
    expect(contents(snapshots[0])).toEqual({});
    expect(rejections[0]?.message).toBe('cannot cache default/a: the transform failed: TypeError: it returned undefined; left out of the cache');
  });

  it('leaves out an object an index function throws on, naming the index, with every index left consistent', () => {
    const pickyIndex: IndexFunc = (object) => {
      if (object.metadata.name === 'bad') throw new Error('no app label');
      return [object.metadata.labels!['app']!];
    };
    const indexers = { [NAMESPACE_INDEX]: namespaceIndex, tier: labelIndex('tier'), app: pickyIndex };
    const labels = { app: 'web', tier: 'front' };
    const { snapshots, rejections } = run([replace([configMap('a', '1', {}, labels), configMap('bad', '1', {}, labels)]), added(configMap('bad', '2', {}, labels)), added(configMap('c', '3', {}, labels))], { indexers });
    expect(snapshots.map(contents)).toEqual([{ 'default/a': '1' }, { 'default/a': '1', 'default/c': '3' }]);
    const last = snapshots[1]!;
    expect(last.indexKeys('tier', 'front').sort()).toEqual(['default/a', 'default/c']);
    expect(last.indexKeys('app', 'web').sort()).toEqual(['default/a', 'default/c']);
    expect(last.list({ namespace: 'default' })).toHaveLength(2);
    expect(rejections.map((r) => `${r.key} ${r.stage} ${r.indexName} ${r.outcome}`)).toEqual(['default/bad index app left-out', 'default/bad index app left-out']);
    expect(rejections[0]!.message).toBe('cannot cache default/bad: index function "app" failed: Error: no app label; left out of the cache');
  });

  it('keeps the cached version, and its index entries, when an index function throws on an update', () => {
    const strictIndex: IndexFunc = (object) => {
      const app = object.metadata.labels?.['app'];
      if (app === undefined) throw new Error('no app');
      return [app];
    };
    const { snapshots, rejections } = run([replace([configMap('a', '1', {}, { app: 'web' })]), updated(configMap('a', '2', {}, {}))], { indexers: { app: strictIndex } });
    expect(snapshots).toHaveLength(1);
    expect(snapshots[0]!.byIndex('app', 'web').map((o) => o.metadata.resourceVersion)).toEqual(['1']);
    expect(rejections.map((r) => r.outcome)).toEqual(['kept-previous']);
  });

  it('leaves out an object without a name, without quoting its data in the report', () => {
    const nameless = { apiVersion: 'v1', kind: 'Secret', metadata: { namespace: 'default' }, data: { password: 'hunter2' } } as unknown as KubeObject;
    const { snapshots, rejections, error } = run([replace([configMap('a', '1'), nameless]), added(nameless), deleted(nameless), added(configMap('b', '2'))]);
    expect(error).toBeUndefined();
    expect(snapshots.map(contents)).toEqual([{ 'default/a': '1' }, { 'default/a': '1', 'default/b': '2' }]);
    expect(rejections.map((r) => `${String(r.key)} ${r.stage} ${r.outcome}`)).toEqual(['undefined key left-out', 'undefined key left-out', 'undefined key left-out']);
    expect(rejections[0]!.message).toBe('cannot cache an object without a metadata.name string: it has no cache key; left out of the cache');
    expect(JSON.stringify(rejections.map((r) => [r.message, r.cause]))).not.toContain('hunter2');
  });

  it('never errors or completes early without onRejected either: the object is still left out', () => {
    const snapshots: Snapshot[] = [];
    let failed = false;
    from([replace([configMap('a', '1')]), added({ metadata: {} } as KubeObject), added(configMap('b', '2'))])
      .pipe(indexer({ transform: (o) => (o.metadata.name === 'a' ? o : o) }))
      .subscribe({ next: (s) => snapshots.push(s), error: () => (failed = true) });
    expect(failed).toBe(false);
    expect(snapshots.map(contents)).toEqual([{ 'default/a': '1' }, { 'default/a': '1', 'default/b': '2' }]);
  });

  it('ignores an onRejected callback that throws', () => {
    const snapshots: Snapshot[] = [];
    from([replace([{ metadata: {} } as KubeObject, configMap('a', '1')])])
      .pipe(
        indexer({
          onRejected: () => {
            throw new Error('broken reporter');
          },
        }),
      )
      .subscribe((s) => snapshots.push(s));
    expect(snapshots.map(contents)).toEqual([{ 'default/a': '1' }]);
  });
});

describe('indexer: deletions go through transform and freeze, as client-go transforms Deleted deltas', () => {
  it('hands the final state of a Deleted delta through the transform, frozen', () => {
    const { snapshots } = run([replace([configMap('a', '1', { x: '1' })]), deleted(configMap('a', '2', { x: '2' }))], { transform: dropManagedFields, freeze: true });
    const change = snapshots[1]!.changes[0]!;
    expect(change.type).toBe('delete');
    expect(change.object.metadata.resourceVersion).toBe('2');
    expect(change.object.metadata.managedFields).toBeUndefined();
    expect(Object.isFrozen(change.object)).toBe(true);
    expect(Object.isFrozen(change.object.metadata)).toBe(true);
  });

  it('still deletes when the transform throws on the final state, with the cached version as the object', () => {
    const transform = (object: ConfigMap): ConfigMap => {
      if (object.data === undefined) throw new Error('no data');
      return object;
    };
    const { snapshots, rejections } = run([replace([configMap('a', '1', { x: '1' })]), deleted(configMap('a', '2'))], { transform } as IndexerConfig);
    expect(contents(snapshots[1])).toEqual({});
    const change = snapshots[1]!.changes[0]!;
    expect(change.type === 'delete' && change.object).toBe(snapshots[0]!.get('default/a'));
    expect(rejections.map((r) => `${r.key} ${r.outcome}`)).toEqual(['default/a deleted']);
  });

  it('leaves relist tombstones as the cached version: already transformed, not transformed twice', () => {
    let calls = 0;
    const counting = (object: KubeObject): KubeObject => (calls++, dropManagedFields(object));
    const { snapshots } = run([replace([configMap('a', '1'), configMap('b', '1')]), replace([configMap('a', '1')], '20')], { transform: counting });
    const tombstone = snapshots[1]!.changes[0]!;
    expect(tombstone.type === 'delete' && tombstone.finalStateUnknown && tombstone.object).toBe(snapshots[0]!.get('default/b'));
    expect(calls).toBe(2);
  });
});
