import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { informerFrom } from '../../lib/informer/informer';
import { waitForSync } from '../../lib/informer/waitForSync';
import type { Change } from '../../lib/store/change';
import type { KubeObject } from '../../lib/base/object';
import { fakeListerWatcher, pod } from './informerFixtures';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** Lets the current job end (a WeakRef keeps its target alive until then), then collects. */
async function collected(ref: WeakRef<object>): Promise<boolean> {
  await new Promise((resolve) => setImmediate(resolve));
  collectGarbage();
  return ref.deref() === undefined;
}

/**
 * A relist's snapshot carries one change per object. Once every subscriber has been handed it,
 * nothing of the informer may keep those changes alive while the cache is quiet: not the state it
 * edits next, not what it replays to a late subscriber, not a handler's latest snapshot, nor its
 * resync. Otherwise a cache of n objects holds n changes more for as long as no event comes.
 */
describe('an informer holds no changes once they are delivered', () => {
  const objects = Array.from({ length: 50 }, (_, index) => pod(`p${index}`, String(index + 1)));

  it('after the initial list: the cache, its replay, a handler and its resync keep the objects but not the list’s changes', async () => {
    const lw = fakeListerWatcher(objects);
    const informer = informerFrom(lw, { resyncPeriod: 60_000 });
    let changes: WeakRef<readonly Change<KubeObject>[]> | undefined;
    const watching = informer.informer$.subscribe((snapshot) => {
      if (snapshot.synced && changes === undefined) changes = new WeakRef(snapshot.changes);
    });
    const delivered: string[] = [];
    const handling = informer.handle({ onAdd: (object) => void delivered.push(object.metadata.name) }).subscribe();
    while (delivered.length < objects.length) await new Promise((resolve) => setImmediate(resolve));
    expect(changes?.deref()?.length).toBe(objects.length);

    expect(await collected(changes!)).toBe(true);
    let replayed: number | undefined;
    informer.informer$.subscribe((snapshot) => (replayed = snapshot.size)).unsubscribe();
    expect(replayed).toBe(objects.length);
    handling.unsubscribe();
    watching.unsubscribe();
  });

  it('while the caller of waitForSync keeps the synced state it was given', async () => {
    const informer = informerFrom(fakeListerWatcher(objects));
    let changes: WeakRef<readonly Change<KubeObject>[]> | undefined;
    const watching = informer.informer$.subscribe((snapshot) => {
      if (snapshot.synced && changes === undefined) changes = new WeakRef(snapshot.changes);
    });
    const [synced] = await waitForSync([informer]);
    expect(synced.changes).toEqual([]);
    expect(await collected(changes!)).toBe(true);
    expect(synced.size).toBe(objects.length); // kept until here
    watching.unsubscribe();
  });

  it('after a watch event: the snapshot it made is let go of once delivered', async () => {
    const lw = fakeListerWatcher(objects);
    const informer = informerFrom(lw);
    const updated: string[] = [];
    const handling = informer.handle({ onUpdate: (_old, object) => void updated.push(object.metadata.resourceVersion ?? '') }).subscribe();
    let changes: WeakRef<readonly Change<KubeObject>[]> | undefined;
    const watching = informer.informer$.subscribe((snapshot) => {
      if (snapshot.changes.some((change) => change.type === 'update')) changes ??= new WeakRef(snapshot.changes);
    });
    await new Promise((resolve) => setImmediate(resolve));
    lw.watch$().next({ type: 'MODIFIED', object: pod('p0', '100') });
    while (updated.length < 1) await new Promise((resolve) => setImmediate(resolve));
    expect(changes?.deref()?.length).toBe(1);
    expect(await collected(changes!)).toBe(true);
    handling.unsubscribe();
    watching.unsubscribe();
  });
});
