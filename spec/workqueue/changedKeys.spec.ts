import type { Observable } from 'rxjs';
import type { TestScheduler } from 'rxjs/testing';
import { changedKeys } from '../../lib/workqueue/changedKeys';
import type { KubeObject } from '../../lib/base/object';
import { newTestScheduler, obj, replace, snapshotsOf, withUnreadableChanges } from '../handlers/handleFixtures';

function owned(name: string, resourceVersion: string, owner: string): KubeObject {
  return obj(name, resourceVersion, { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: owner, uid: `uid-${owner}` }] });
}

const ownerKeys = (object: KubeObject): string[] => (object.metadata.ownerReferences ?? []).map((owner) => `ns/${owner.name}`);

/** What `keys` emits, as `frame: key key` lines (keys of one frame sorted: snapshots keep no order), and how it ends. */
function record(scheduler: TestScheduler, keys: Observable<string>): { lines: () => string[]; stop: () => void } {
  const byFrame = new Map<number, string[]>();
  const push = (line: string): void => {
    const frame = scheduler.now();
    byFrame.set(frame, [...(byFrame.get(frame) ?? []), line]);
  };
  const subscription = keys.subscribe({ next: push, error: () => push('#'), complete: () => push('|') });
  return { stop: () => subscription.unsubscribe(), lines: () => [...byFrame].map(([frame, items]) => `${frame}: ${items.sort().join(' ')}`) };
}

describe('changedKeys', () => {
  const [first, updated, relisted] = snapshotsOf([
    replace([obj('a', '1'), obj('b', '1')]),
    { type: 'Updated', object: obj('a', '2') },
    replace([obj('a', '2'), obj('c', '1')], 'r2'),
  ]);

  it('emits every key of the first snapshot, then the key of each change, skipping what a relist found unchanged', () => {
    const scheduler = newTestScheduler();
    scheduler.run(({ hot, flush }) => {
      const keys = record(scheduler, hot('-s-----t------u', { s: first, t: updated, u: relisted }).pipe(changedKeys()));
      flush();
      // The relist deleted b, added c, and found a at resourceVersion 2 as it was.
      expect(relisted!.changes.map((change) => `${change.type} ${change.key}`)).toEqual(['delete ns/b', 'update ns/a', 'add ns/c']);
      expect(keys.lines()).toEqual(['1: ns/a ns/b', '7: ns/a', '14: ns/b ns/c']);
    });
  });

  it('starts a late subscriber from the whole cache: its first snapshot is taken whole, not as its changes', () => {
    const scheduler = newTestScheduler();
    scheduler.run(({ cold, flush }) => {
      // `updated` changed only a, but holds a and b.
      const keys = record(scheduler, cold('-t', { t: updated }).pipe(changedKeys()));
      flush();
      expect(keys.lines()).toEqual(['1: ns/a ns/b']);
    });
  });

  it('maps objects to other keys with keysOf, for an update both the old and the new object’s', () => {
    const [initial, moved] = snapshotsOf([replace([owned('cm', '1', 'web')]), { type: 'Updated', object: owned('cm', '2', 'api') }]);
    const scheduler = newTestScheduler();
    scheduler.run(({ cold, flush }) => {
      const keys = record(scheduler, cold('-i-m', { i: initial, m: moved }).pipe(changedKeys({ keysOf: ownerKeys })));
      flush();
      expect(keys.lines()).toEqual(['1: ns/web', '3: ns/api ns/web']);
    });
  });

  it('emits every key again each resync period once synced', () => {
    const scheduler = newTestScheduler();
    scheduler.run(({ hot, flush }) => {
      const keys = record(scheduler, hot('s 1499ms t', { s: first, t: updated }).pipe(changedKeys({ resyncPeriod: 1000 })));
      scheduler.schedule(() => keys.stop(), 2500);
      flush();
      expect(keys.lines()).toEqual(['0: ns/a ns/b', '1000: ns/a ns/b', '1500: ns/a', '2000: ns/a ns/b']);
    });
  });

  it('completes and errors with its source, and rejects a negative resync period', () => {
    const scheduler = newTestScheduler();
    scheduler.run(({ cold, flush }) => {
      const completed = record(scheduler, cold('s|', { s: first }).pipe(changedKeys()));
      const errored = record(scheduler, cold('s-#', { s: first }).pipe(changedKeys()));
      flush();
      expect(completed.lines()).toEqual(['0: ns/a ns/b', '1: |']);
      expect(errored.lines()).toEqual(['0: ns/a ns/b', '2: #']);
    });
    expect(() => changedKeys({ resyncPeriod: -1 })).toThrow(RangeError);
  });

  it('unsubscribes its source on unsubscribe, completion and error, with and without resync', () => {
    const scheduler = newTestScheduler();
    scheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      scheduler.maxFrames = 10_000; // a resync timer left running would otherwise run forever
      for (const resyncPeriod of [0, 1000]) {
        const left = hot('-t---', { t: updated });
        // A group of n values in a marble takes n + 2 frames: the source ends at 6, one after (ba).
        const completed = hot('-t----|', { t: updated });
        const failed = hot('-t----#', { t: updated });
        expectObservable(left.pipe(changedKeys({ resyncPeriod })), '^---!').toBe('-(ba)', { a: 'ns/a', b: 'ns/b' });
        expectObservable(completed.pipe(changedKeys({ resyncPeriod }))).toBe('-(ba)-|', { a: 'ns/a', b: 'ns/b' });
        expectObservable(failed.pipe(changedKeys({ resyncPeriod }))).toBe('-(ba)-#', { a: 'ns/a', b: 'ns/b' });
        expectSubscriptions(left.subscriptions).toBe('^---!');
        expectSubscriptions(completed.subscriptions).toBe('^-----!');
        expectSubscriptions(failed.subscriptions).toBe('^-----!');
      }
    });
  });

  it('fails with the error, and unsubscribes its source, when keysOf throws', () => {
    const broken = new Error('no owner');
    const [initial, moved] = snapshotsOf([replace([owned('cm', '1', 'web')]), { type: 'Updated', object: owned('cm', '2', 'api') }]);
    const keysOf = (object: KubeObject): string[] => {
      if (object.metadata.resourceVersion === '2') throw broken;
      return ownerKeys(object);
    };
    newTestScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('-i-m-', { i: initial, m: moved });
      expectObservable(source.pipe(changedKeys({ keysOf }))).toBe('-w-(w#)', { w: 'ns/web' }, broken);
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('fails with the error, and unsubscribes its source, when a snapshot’s changes cannot be read', () => {
    const broken = new Error('broken');
    newTestScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('-s----t-', { s: first, t: withUnreadableChanges(updated!, broken) });
      expectObservable(source.pipe(changedKeys())).toBe('-(ba)-#', { a: 'ns/a', b: 'ns/b' }, broken);
      expectSubscriptions(source.subscriptions).toBe('^-----!');
    });
  });
});
