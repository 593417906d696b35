import { from } from 'rxjs';
import type { Delta, NamespaceScope } from '../../lib/reflector/delta';
import type { Change } from '../../lib/store/change';
import { indexer } from '../../lib/store/indexer';
import type { IndexerConfig } from '../../lib/store/indexerConfig';
import { labelIndex, namespaceIndex, NAMESPACE_INDEX } from '../../lib/store/indexers';
import type { KubeObject } from '../../lib/base/object';
import type { Snapshot } from '../../lib/store/snapshot';

/**
 * A Replace scoped to one namespace (an informer over a set of namespaces lists each on its own):
 * it replaces that namespace's objects only, interleaves with other namespaces' Replace pages and
 * watch deltas, and the cache is synced when every namespace of the set has listed.
 */

function pod(namespace: string, name: string, resourceVersion: string, labels?: Record<string, string>): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { namespace, name, resourceVersion, ...(labels ? { labels } : {}) } };
}

const scope = (namespace: string, unsyncedNamespaces = 0, cause: NamespaceScope['cause'] = 'listed'): NamespaceScope => ({ namespace, cause, unsyncedNamespaces });

function scoped(items: KubeObject[], namespaceScope: NamespaceScope, resourceVersion = '10', first = true, last = true): Delta {
  return { type: 'Replace', items, first, last, resourceVersion, scope: namespaceScope };
}

const added = (object: KubeObject): Delta => ({ type: 'Added', object });
const deleted = (object: KubeObject): Delta => ({ type: 'Deleted', object });

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

function describeChange(c: Change): string {
  const mark = c.type !== 'update' && c.namespaceSet ? ` (${c.namespaceSet.type} ${c.namespaceSet.namespace})` : '';
  if (c.type === 'delete') return `delete ${c.key}${c.finalStateUnknown ? ' unknown' : ''}${mark}`;
  if (c.type === 'add') return `add ${c.key}${c.isInInitialList ? ' initial' : ''}${mark}`;
  return `update ${c.key}${c.isResync ? ' resync' : ''}`;
}

const describeChanges = (changes: readonly Change[]): string[] => changes.map(describeChange);
const keys = (snapshot: Snapshot): string[] => [...snapshot.keys()].sort();

describe('indexer: a Replace scoped to one namespace', () => {
  it('replaces the objects of its namespace only: deletes, updates and adds there, the other namespaces untouched', () => {
    const [, , third] = run([
      scoped([pod('a', 'keep', '1'), pod('a', 'gone', '1')], scope('a', 1)),
      scoped([pod('b', 'other', '1')], scope('b', 0)),
      scoped([pod('a', 'keep', '2'), pod('a', 'new', '3')], scope('a'), '20'),
    ]);
    expect(describeChanges(third!.changes)).toEqual(['delete a/gone unknown', 'update a/keep', 'add a/new']);
    expect(keys(third!)).toEqual(['a/keep', 'a/new', 'b/other']);
    expect(third!.resourceVersion).toBe('20');
    expect(third!.indexKeys(NAMESPACE_INDEX, 'b')).toEqual(['b/other']);
  });

  it('is synced only when the last namespace of the set has listed, and stays synced', () => {
    const out = run([scoped([pod('a', 'x', '1')], scope('a', 2)), added(pod('a', 'y', '2')), scoped([pod('b', 'x', '1')], scope('b', 1)), scoped([], scope('c', 0)), scoped([pod('a', 'x', '1')], scope('a', 1), '30')]);
    expect(out.map((s) => s.synced)).toEqual([false, false, false, true, true]);
  });

  it('marks adds isInInitialList until the cache has synced, across namespaces', () => {
    const [first, , third] = run([scoped([pod('a', 'x', '1')], scope('a', 1)), scoped([pod('b', 'x', '1')], scope('b', 0)), scoped([pod('a', 'x', '1'), pod('a', 'z', '5')], scope('a'), '30')]);
    expect(describeChanges(first!.changes)).toEqual(['add a/x initial']);
    expect(describeChanges(third!.changes)).toEqual(['update a/x resync', 'add a/z']);
  });

  it('lets the pages of different namespaces and the watch deltas of others interleave, each relist swapping at its own last page', () => {
    const out = run([
      scoped([pod('a', 'a1', '1')], scope('a', 2), '', true, false),
      scoped([pod('b', 'b1', '1')], scope('b', 2), '', true, false),
      added(pod('c', 'c1', '4')),
      scoped([pod('a', 'a2', '2')], scope('a', 1), '11', false, true),
      deleted(pod('c', 'c1', '5')),
      scoped([pod('b', 'b2', '2')], scope('b', 0), '12', false, true),
    ]);
    expect(out.map((s) => describeChanges(s.changes))).toEqual([['add c/c1'], ['add a/a1 initial', 'add a/a2 initial'], ['delete c/c1'], ['add b/b1 initial', 'add b/b2 initial']]);
    expect(keys(out.at(-1)!)).toEqual(['a/a1', 'a/a2', 'b/b1', 'b/b2']);
    expect(out.at(-1)!.synced).toBe(true);
  });

  it('lets a first page of a namespace abandon that namespace\'s unfinished Replace only', () => {
    const [bSwapped, aSwapped] = run([
      scoped([pod('a', 'stale', '1')], scope('a', 1), '', true, false),
      scoped([pod('b', 'b1', '1')], scope('b', 1), '', true, false),
      scoped([pod('a', 'fresh', '2')], scope('a', 1), '', true, false),
      scoped([pod('b', 'b2', '2')], scope('b', 1), '7', false, true),
      scoped([], scope('a', 0), '8', false, true),
    ]);
    expect(keys(bSwapped!)).toEqual(['b/b1', 'b/b2']);
    expect(keys(aSwapped!)).toEqual(['a/fresh', 'b/b1', 'b/b2']);
  });

  it('turns a namespace removed from the set into deletes marked `removed`, leaving the rest', () => {
    const [, , third] = run([scoped([pod('a', 'x', '1'), pod('a', 'y', '1')], scope('a', 1)), scoped([pod('b', 'x', '1')], scope('b', 0)), scoped([], scope('a', 0, 'removed'), '')]);
    expect(describeChanges(third!.changes).sort()).toEqual(['delete a/x unknown (removed a)', 'delete a/y unknown (removed a)']);
    expect(keys(third!)).toEqual(['b/x']);
    expect(third!.indexValues(NAMESPACE_INDEX)).toEqual(['b']);
    // A removal has no list behind it: the cache stays at the resourceVersion it was at.
    expect(third!.resourceVersion).toBe('10');
  });

  it('marks the adds of a namespace added to the set, in its first Replace only', () => {
    const [, second, third] = run([scoped([pod('a', 'x', '1')], scope('a', 0)), scoped([pod('b', 'x', '1')], scope('b', 0, 'added')), scoped([pod('b', 'x', '1'), pod('b', 'y', '2')], scope('b'))]);
    expect(describeChanges(second!.changes)).toEqual(['add b/x (added b)']);
    expect(describeChanges(third!.changes)).toEqual(['update b/x resync', 'add b/y']);
  });

  it('syncs the cache when the only namespace still listing is removed', () => {
    const out = run([scoped([pod('a', 'x', '1')], scope('a', 1)), scoped([], scope('b', 0, 'removed'), '')]);
    expect(out.map((s) => s.synced)).toEqual([false, true]);
  });

  it('keeps the cached object for a relisted one at the same resourceVersion, and shares nothing it need not', () => {
    const [first, second] = run([scoped([pod('a', 'x', '1'), pod('b', 'x', '1')], scope('a', 0)), scoped([pod('a', 'x', '1')], scope('a'), '11')]);
    expect(second!.get('a/x')).toBe(first!.get('a/x'));
    expect(second!.get('b/x')).toBe(first!.get('b/x'));
  });

  it('keeps every index right for what a scoped Replace moves', () => {
    const [, second] = run([scoped([pod('a', 'x', '1', { app: 'web' }), pod('a', 'y', '1', { app: 'db' })], scope('a', 0)), scoped([pod('a', 'x', '2', { app: 'db' })], scope('a'), '11')], {
      indexers: { [NAMESPACE_INDEX]: namespaceIndex, app: labelIndex('app') },
    });
    expect(second!.indexKeys('app', 'db')).toEqual(['a/x']);
    expect(second!.indexValues('app')).toEqual(['db']);
  });

  it('finds a namespace\'s objects without the namespace index too (by a scan)', () => {
    const [, , third] = run([scoped([pod('a', 'x', '1')], scope('a', 1)), scoped([pod('b', 'x', '1')], scope('b', 0)), scoped([], scope('a', 0, 'removed'), '')], { indexers: { app: labelIndex('app') } });
    expect(describeChanges(third!.changes)).toEqual(['delete a/x unknown (removed a)']);
    expect(keys(third!)).toEqual(['b/x']);
  });

  it('lets an unscoped Replace replace everything, scoped or not', () => {
    const [, second] = run([scoped([pod('a', 'x', '1')], scope('a', 0)), { type: 'Replace', items: [pod('b', 'y', '2')], first: true, last: true, resourceVersion: '5' }]);
    expect(describeChanges(second!.changes)).toEqual(['delete a/x unknown', 'add b/y']);
  });
});
