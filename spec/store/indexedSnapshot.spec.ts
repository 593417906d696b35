import { IndexedSnapshot, IndexNotFoundError } from '../../lib/store/indexedSnapshot';
import { labelIndex, namespaceIndex, NAMESPACE_INDEX } from '../../lib/store/indexers';
import type { KubeObject } from '../../lib/base/object';

const pod = (name: string, namespace: string, app?: string): KubeObject => ({ metadata: { name, namespace, ...(app ? { labels: { app } } : {}) } });
const indexers = { [NAMESPACE_INDEX]: namespaceIndex, app: labelIndex('app') };

/** `snapshot` with `object` stored under `key`, through one edit (as the indexer applies a batch). */
function withObject<T extends KubeObject>(snapshot: IndexedSnapshot<T>, key: string, object: T, resourceVersion: string): IndexedSnapshot<T> {
  const edit = snapshot.edit();
  edit.put(key, edit.get(key), object);
  return edit.finish(resourceVersion, []);
}

describe('IndexedSnapshot', () => {
  it('starts empty, unsynced, at resourceVersion ""', () => {
    const empty = IndexedSnapshot.empty(indexers);
    expect([empty.size, empty.synced, empty.resourceVersion, empty.changes]).toEqual([0, false, '', []]);
    expect(empty.list()).toEqual([]);
    expect(empty.indexValues('app')).toEqual([]);
  });

  it('settles into the same state without its changes, numbered as it is, once for every holder', () => {
    const empty = IndexedSnapshot.empty(indexers);
    const edit = empty.edit();
    const object = pod('a', 'ns', 'web');
    edit.put('ns/a', undefined, object);
    const added = edit.finish('1', [{ type: 'add', key: 'ns/a', object, isInInitialList: true }], true);
    added.numbered(7, 3);
    const settled = added.settled();
    expect(settled).not.toBe(added);
    expect(settled.changes).toEqual([]);
    expect(added.changes).toHaveLength(1); // the snapshot handed out never changes
    expect([settled.get('ns/a'), settled.indexKeys('app', 'web'), settled.resourceVersion, settled.synced, settled.sequence, settled.touchedSince]).toEqual([object, ['ns/a'], '1', true, 7, 3]);
    expect(added.settled()).toBe(settled);
    expect(settled.settled()).toBe(settled);
    expect(empty.settled()).toBe(empty);
  });

  it('derives new snapshots by edits without changing the one it started from', () => {
    const empty = IndexedSnapshot.empty(indexers);
    const one = withObject(empty, 'ns/a', pod('a', 'ns', 'web'), '1');
    const moved = withObject(one, 'ns/a', pod('a', 'ns', 'db'), '2');
    const removal = moved.edit();
    removal.remove('ns/a', removal.get('ns/a')!);
    const gone = removal.finish('3', []);
    expect(empty.size).toBe(0);
    expect(one.indexKeys('app', 'web')).toEqual(['ns/a']);
    expect(moved.indexKeys('app', 'web')).toEqual([]);
    expect(moved.indexValues('app')).toEqual(['db']);
    expect(one.indexValues('app')).toEqual(['web']);
    expect(gone.size).toBe(0);
    expect(gone.indexValues('app')).toEqual([]);
    expect([one.resourceVersion, moved.resourceVersion, gone.resourceVersion]).toEqual(['1', '2', '3']);
  });

  it('moves to another resourceVersion with the same objects and no changes (a bookmark: an edit with no writes)', () => {
    const one = withObject(IndexedSnapshot.empty(indexers), 'ns/a', pod('a', 'ns'), '1');
    const later = one.edit().finish('9', []);
    expect(later.resourceVersion).toBe('9');
    expect(later.get('ns/a')).toBe(one.get('ns/a'));
    expect(later.changes).toEqual([]);
  });

  it('lets an edit read its own writes, applies them all at finish, and carries the changes given', () => {
    const one = withObject(IndexedSnapshot.empty(indexers), 'ns/a', pod('a', 'ns', 'web'), '1');
    const edit = one.edit();
    const b = pod('b', 'ns', 'web');
    edit.put('ns/b', undefined, b);
    edit.remove('ns/a', edit.get('ns/a')!);
    expect(edit.get('ns/b')).toBe(b);
    expect(edit.get('ns/a')).toBeUndefined();
    expect([one.has('ns/a'), one.has('ns/b')]).toEqual([true, false]);
    const change = { type: 'add' as const, key: 'ns/b', object: b, isInInitialList: false };
    const batch = edit.finish('2', [change]);
    expect([...batch.keys()]).toEqual(['ns/b']);
    expect(batch.indexKeys('app', 'web')).toEqual(['ns/b']);
    expect(batch.changes).toEqual([change]);
    expect(one.indexKeys('app', 'web')).toEqual(['ns/a']);
  });

  it('leaves an edit as it was when an index function throws on a write', () => {
    const picky = {
      picky: (object: KubeObject): string[] => {
        if (object.metadata.name === 'bad') throw new Error('no');
        return ['ok'];
      },
    };
    const edit = IndexedSnapshot.empty(picky).edit();
    edit.put('ns/a', undefined, pod('a', 'ns'));
    expect(() => edit.put('ns/bad', undefined, pod('bad', 'ns'))).toThrow('no');
    const after = edit.finish('2', []);
    expect([...after.keys()]).toEqual(['ns/a']);
    expect(after.indexKeys('picky', 'ok')).toEqual(['ns/a']);
  });

  it('builds a synced snapshot from a builder, invisible until finished', () => {
    const base = withObject(IndexedSnapshot.empty(indexers), 'ns/old', pod('old', 'ns'), '1');
    const builder = base.builder();
    builder.put('ns/a', pod('a', 'ns', 'web'));
    builder.put('ns/a', pod('a', 'ns', 'db'));
    builder.put('other/b', pod('b', 'other', 'db'));
    expect(base.has('ns/a')).toBe(false);
    const built = builder.finish('5', []);
    expect([built.size, built.synced, built.resourceVersion]).toEqual([2, true, '5']);
    expect(built.has('ns/old')).toBe(false);
    expect(built.indexValues('app')).toEqual(['db']);
    expect(built.indexKeys('app', 'db').sort()).toEqual(['ns/a', 'other/b']);
    expect(built.indexValues(NAMESPACE_INDEX).sort()).toEqual(['ns', 'other']);
  });

  it('drops what a builder was given under a key, index postings included', () => {
    const builder = IndexedSnapshot.empty(indexers).builder();
    builder.put('ns/a', pod('a', 'ns', 'web'));
    builder.put('ns/b', pod('b', 'ns', 'db'));
    expect(builder.remove('ns/a')).toBe(true);
    expect(builder.remove('ns/a')).toBe(false);
    const built = builder.finish('5', []);
    expect([...built.keys()]).toEqual(['ns/b']);
    expect(built.indexValues('app')).toEqual(['db']);
    expect(built.indexKeys(NAMESPACE_INDEX, 'ns')).toEqual(['ns/b']);
  });

  it('rejects unknown index names with IndexNotFoundError naming the configured ones', () => {
    const empty = IndexedSnapshot.empty(indexers);
    expect(() => empty.indexKeys('nope', 'x')).toThrow(IndexNotFoundError);
    expect(() => empty.byIndex('nope', 'x')).toThrow(/"namespace", "app"/);
  });

  it('ignores non-string values an index function returns', () => {
    const sloppy = IndexedSnapshot.empty({ sloppy: () => ['ok', 7 as unknown as string, undefined as unknown as string] });
    const one = withObject(sloppy, 'a', pod('a', ''), '1');
    expect(one.indexValues('sloppy')).toEqual(['ok']);
  });
});
