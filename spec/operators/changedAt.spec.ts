import { from, lastValueFrom, mergeMap, toArray } from 'rxjs';
import type { Delta } from '../../lib/reflector/delta';
import { changedAt } from '../../lib/operators/changedAt';
import { indexer } from '../../lib/store/indexer';
import type { Change } from '../../lib/store/change';
import type { KubeObject } from '../../lib/base/object';
import { newTestScheduler } from '../handlers/handleFixtures';

type Labelled = KubeObject & { status: { phase: string } };
const version = (rv: string, app: string, phase: string): Labelled => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'ns', resourceVersion: rv, labels: { app } },
  status: { phase },
});

/** Wire-like copies: every delta carries a fresh object, as a parsed watch event does. */
const fresh = <T>(object: T): T => structuredClone(object);

async function changesThrough(deltas: Delta<Labelled>[], shareUnchanged: boolean, select: (o: Labelled) => unknown): Promise<string[]> {
  const passed = await lastValueFrom(
    from(deltas.map(fresh)).pipe(
      indexer<Labelled>({ shareUnchanged }),
      mergeMap((snapshot) => snapshot.changes),
      changedAt(select),
      toArray(),
    ),
  );
  return passed.map((change) => (change.type === 'delete' ? 'delete' : `${change.type} ${change.object.metadata.resourceVersion}`));
}

describe('changedAt', () => {
  const deltas: Delta<Labelled>[] = [
    { type: 'Replace', items: [version('1', 'web', 'Pending')], first: true, last: true, resourceVersion: '1' },
    { type: 'Updated', object: version('2', 'web', 'Running') },
    { type: 'Updated', object: version('3', 'api', 'Running') },
    { type: 'Updated', object: version('4', 'api', 'Failed') },
    { type: 'Deleted', object: version('5', 'api', 'Failed') },
  ];

  it('passes only the updates whose selected part changed, by identity, behind the real indexer', async () => {
    expect(await changesThrough(deltas, true, (pod) => pod.metadata.labels)).toEqual(['add 1', 'update 3', 'delete']);
    expect(await changesThrough(deltas, true, (pod) => pod.status)).toEqual(['add 1', 'update 2', 'update 4', 'delete']);
  });

  it('compares primitives by value, so it works without sharing too', async () => {
    expect(await changesThrough(deltas, false, (pod) => pod.status.phase)).toEqual(['add 1', 'update 2', 'update 4', 'delete']);
  });

  it('never drops a change when versions are not shared: it passes more instead', async () => {
    expect(await changesThrough(deltas, false, (pod) => pod.metadata.labels)).toEqual(['add 1', 'update 2', 'update 3', 'update 4', 'delete']);
  });

  it('keeps adds and deletes and drops an update with the same part (marbles)', () => {
    const labels = { app: 'web' };
    const at = (rv: string, appLabels: Record<string, string>) => ({ metadata: { name: 'p', namespace: 'ns', resourceVersion: rv, labels: appLabels } });
    const changes = {
      a: { type: 'add', key: 'ns/p', object: at('1', labels), isInInitialList: false },
      s: { type: 'update', key: 'ns/p', oldObject: at('1', labels), object: at('2', labels) },
      l: { type: 'update', key: 'ns/p', oldObject: at('2', labels), object: at('3', { app: 'api' }) },
      d: { type: 'delete', key: 'ns/p', object: at('3', { app: 'api' }), finalStateUnknown: false },
    } satisfies Record<string, Change>;
    newTestScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<Change>('asld|', changes);
      expectObservable(source.pipe(changedAt((o) => o.metadata.labels))).toBe('a-ld|', changes);
      expectSubscriptions(source.subscriptions).toBe('^---!');
    });
  });

  it('passes an object deleted and created again with the same part: a new uid is a change of everything', () => {
    const labels = { app: 'web' };
    const at = (rv: string, uid: string) => ({ metadata: { name: 'p', namespace: 'ns', uid, resourceVersion: rv, labels } });
    const changes = {
      s: { type: 'update', key: 'ns/p', oldObject: at('1', 'u1'), object: at('2', 'u1') },
      r: { type: 'update', key: 'ns/p', oldObject: at('2', 'u1'), object: at('7', 'u2') },
    } satisfies Record<string, Change>;
    newTestScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<Change>('sr|', changes).pipe(changedAt((o) => o.metadata.labels))).toBe('-r|', changes);
    });
  });

  it('unsubscribes its source when the subscriber leaves', () => {
    const change: Change<Labelled> = { type: 'add', key: 'ns/p', object: version('1', 'web', 'Pending'), isInInitialList: false };
    newTestScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot<Change<Labelled>>('-a-a-a-', { a: change });
      expectObservable(source.pipe(changedAt((o) => o.status)), '^--!').toBe('-a-', { a: change });
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });
});
