import { map, Subject } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { Delta } from '../../lib/reflector/delta';
import { indexer } from '../../lib/store/indexer';
import type { IndexerConfig } from '../../lib/store/indexerConfig';
import type { Change } from '../../lib/store/change';
import { differences } from '../../lib/store/indexedSnapshot';
import { labelIndex, namespaceIndex, NAMESPACE_INDEX } from '../../lib/store/indexers';
import type { KubeObject } from '../../lib/base/object';
import type { Snapshot } from '../../lib/store/snapshot';

function pod(name: string, resourceVersion: string, labels: Record<string, string> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', resourceVersion, labels } };
}

const replace = (items: KubeObject[], resourceVersion = '10'): Delta => ({ type: 'Replace', items, first: true, last: true, resourceVersion });
const added = (object: KubeObject): Delta => ({ type: 'Added', object });
const updated = (object: KubeObject): Delta => ({ type: 'Updated', object });
const deleted = (object: KubeObject): Delta => ({ type: 'Deleted', object });
const bookmark = (resourceVersion: string): Delta => ({ type: 'Bookmark', resourceVersion });

const describeChange = (c: Change): string =>
  c.type === 'update' ? `update ${c.oldObject.metadata.name}@${c.oldObject.metadata.resourceVersion}→${c.object.metadata.resourceVersion}` : `${c.type} ${c.object.metadata.name}@${c.object.metadata.resourceVersion}`;

/** A snapshot as a marble value: its resourceVersion, its keys' versions, its changes. */
const summary = (s: Snapshot) => ({
  rv: s.resourceVersion,
  objects: [...s.values()].map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`).sort(),
  changes: s.changes.map(describeChange),
});

const mapSummary = map(summary);

const newScheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

function batching(scheduler: TestScheduler, config: IndexerConfig = {}, maxDeltas?: number) {
  return indexer({ ...config, batch: { scheduler, maxDeltas } });
}

describe('indexer with batches', () => {
  it('applies the deltas of one task as one snapshot carrying all their changes in order, a key changing several times', () => {
    const scheduler = newScheduler();
    scheduler.run(({ hot, expectObservable }) => {
      const deltas = hot('a 9ms (bcd) 9ms e', {
        a: replace([pod('x', '1')], '1'),
        b: updated(pod('x', '2')),
        c: added(pod('y', '3')),
        d: updated(pod('x', '4')),
        e: deleted(pod('y', '5')),
      });
      const values = {
        a: { rv: '1', objects: ['x@1'], changes: ['add x@1'] },
        b: { rv: '4', objects: ['x@4', 'y@3'], changes: ['update x@1→2', 'add y@3', 'update x@2→4'] },
        e: { rv: '5', objects: ['x@4'], changes: ['delete y@5'] },
      };
      expectObservable(deltas.pipe(batching(scheduler), mapSummary)).toBe('a 9ms b 13ms e', values);
    });
  });

  it('closes a batch at maxDeltas, at once', () => {
    const scheduler = newScheduler();
    scheduler.run(({ hot, expectObservable }) => {
      const deltas = hot('a 9ms (bcd)', { a: replace([], '1'), b: added(pod('x', '2')), c: added(pod('y', '3')), d: added(pod('z', '4')) });
      const values = {
        a: { rv: '1', objects: [], changes: [] },
        b: { rv: '3', objects: ['x@2', 'y@3'], changes: ['add x@2', 'add y@3'] },
        d: { rv: '4', objects: ['x@2', 'y@3', 'z@4'], changes: ['add z@4'] },
      };
      expectObservable(deltas.pipe(batching(scheduler, {}, 2), mapSummary)).toBe('a 9ms (bd)', values);
    });
  });

  it('emits the open batch before a Replace, which is applied on top of it', () => {
    const scheduler = newScheduler();
    scheduler.run(({ hot, expectObservable }) => {
      const deltas = hot('a 9ms (bc)', { a: replace([pod('x', '1')], '1'), b: added(pod('y', '2')), c: replace([pod('y', '2')], '3') });
      const values = {
        a: { rv: '1', objects: ['x@1'], changes: ['add x@1'] },
        b: { rv: '2', objects: ['x@1', 'y@2'], changes: ['add y@2'] },
        c: { rv: '3', objects: ['y@2'], changes: ['delete x@1', 'update y@2→2'] },
      };
      expectObservable(deltas.pipe(batching(scheduler), mapSummary)).toBe('a 9ms (bc)', values);
    });
  });

  it('emits the open batch before the deltas complete or fail', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const values = { a: replace([], '1'), b: added(pod('x', '2')) };
      const open = { a: { rv: '1', objects: [], changes: [] }, b: { rv: '2', objects: ['x@2'], changes: ['add x@2'] } };
      expectObservable(cold('a 9ms (b|)', values).pipe(batching(scheduler), mapSummary)).toBe('a 9ms (b|)', open);
      expectObservable(cold('a 9ms (b#)', values).pipe(batching(scheduler), mapSummary)).toBe('a 9ms (b#)', open);
    });
  });

  it('moves the resourceVersion with a bookmark in the batch, and emits nothing for a batch that changes nothing', () => {
    const scheduler = newScheduler();
    scheduler.run(({ hot, expectObservable }) => {
      const deltas = hot('a 9ms (bc) 9ms d', { a: replace([pod('x', '1')], '1'), b: updated(pod('x', '2')), c: bookmark('7'), d: updated(pod('x', '2')) });
      const values = { a: { rv: '1', objects: ['x@1'], changes: ['add x@1'] }, b: { rv: '7', objects: ['x@2'], changes: ['update x@1→2'] } };
      expectObservable(deltas.pipe(batching(scheduler), mapSummary)).toBe('a 9ms b', values);
    });
  });

  it('keeps the indexes of the batch’s last state', () => {
    const scheduler = newScheduler();
    const out: Snapshot[] = [];
    const source = new Subject<Delta>();
    source.pipe(batching(scheduler, { indexers: { [NAMESPACE_INDEX]: namespaceIndex, app: labelIndex('app') } })).subscribe((s) => out.push(s));
    source.next(replace([pod('x', '1', { app: 'web' })], '1'));
    source.next(updated(pod('x', '2', { app: 'db' })));
    source.next(added(pod('y', '3', { app: 'web' })));
    source.next(updated(pod('y', '4', { app: 'db' })));
    scheduler.flush();
    expect(out).toHaveLength(2);
    expect(out[1]!.indexValues('app')).toEqual(['db']);
    expect(out[1]!.indexKeys('app', 'db').sort()).toEqual(['default/x', 'default/y']);
    expect(out[0]!.indexKeys('app', 'web')).toEqual(['default/x']); // the snapshot before is untouched
  });

  it('differs from the snapshot before in exactly the keys it changed, and leaves that snapshot as it was', () => {
    const scheduler = newScheduler();
    const out: Snapshot[] = [];
    const source = new Subject<Delta>();
    source.pipe(batching(scheduler)).subscribe((s) => out.push(s));
    source.next(replace(Array.from({ length: 2000 }, (_, i) => pod(`p${i}`, '1')), '1'));
    source.next(updated(pod('p7', '2')));
    source.next(deleted(pod('p8', '3')));
    source.next(added(pod('new', '4')));
    scheduler.flush();
    const [before, batch] = out;
    expect([...differences(before!, batch!)].map(([key]) => key).sort()).toEqual(['default/new', 'default/p7', 'default/p8']);
    expect(before!.size).toBe(2000);
    expect(before!.get('default/p7')!.metadata.resourceVersion).toBe('1');
  });

  it('leaves nothing scheduled after unsubscription, and emits nothing more', () => {
    const scheduler = newScheduler();
    const out: Snapshot[] = [];
    const source = new Subject<Delta>();
    const subscription = source.pipe(batching(scheduler)).subscribe((s) => out.push(s));
    source.next(replace([], '1'));
    source.next(added(pod('x', '2')));
    subscription.unsubscribe();
    expect(scheduler.actions.filter((action) => !action.closed)).toHaveLength(0);
    scheduler.flush();
    expect(out).toHaveLength(1);
  });

  it('rejects a batch size below 1', () => {
    expect(() => indexer({ batch: { maxDeltas: 0 } })).toThrow(RangeError);
  });
});
