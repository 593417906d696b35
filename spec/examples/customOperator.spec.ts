import { of } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { Delta } from '../../lib/reflector/delta';
import { pods, type Pod } from '../../lib/resources/builtins';
import type { Change } from '../../lib/store/change';
import { startApiServer, type ApiServer } from '../../apiserver/src';
import { becameReady, isReady, main, quietPerObject } from '../../examples/customOperator';
import { Lines } from './lines';
import { describeEachServerVersion } from '../support/serverVersions';

const withReady = (name: string, ready: boolean | undefined, resourceVersion = '1'): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { namespace: 'ns', name, resourceVersion },
  status: ready === undefined ? { phase: 'Pending' } : { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
});

describe('example: custom operators', () => {
  const newScheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

  it('isReady reads the Ready condition and treats a pod without conditions as not ready', () => {
    expect(isReady(withReady('a', true))).toBe(true);
    expect(isReady(withReady('a', false))).toBe(false);
    expect(isReady(withReady('a', undefined))).toBe(false);
  });

  it('becameReady passes updates from not Ready to Ready and late Ready adds, nothing else', () => {
    const changes: Change<Pod>[] = [
      { type: 'add', key: 'ns/initial', object: withReady('initial', true), isInInitialList: true },
      { type: 'update', key: 'ns/a', oldObject: withReady('a', false), object: withReady('a', true, '2') },
      { type: 'update', key: 'ns/b', oldObject: withReady('b', true), object: withReady('b', true, '2') },
      { type: 'update', key: 'ns/c', oldObject: withReady('c', true), object: withReady('c', false, '2') },
      { type: 'add', key: 'ns/late', object: withReady('late', true), isInInitialList: false },
      { type: 'delete', key: 'ns/a', object: withReady('a', true, '3'), finalStateUnknown: false },
    ];
    const names: string[] = [];
    of(...changes).pipe(becameReady()).subscribe((pod) => names.push(pod.metadata.name));
    expect(names).toEqual(['a', 'late']);
  });

  it('quietPerObject emits the last delta of each object once it has been quiet, per object', () => {
    const scheduler = newScheduler();
    scheduler.run(({ hot, expectObservable }) => {
      const a1: Delta<Pod> = { type: 'Added', object: withReady('a', false, '1') };
      const a2: Delta<Pod> = { type: 'Updated', object: withReady('a', true, '2') };
      const b1: Delta<Pod> = { type: 'Added', object: withReady('b', false, '3') };
      const a3: Delta<Pod> = { type: 'Deleted', object: withReady('a', true, '4') };
      const replace: Delta<Pod> = { type: 'Replace', items: [], first: true, last: true, resourceVersion: '5' };
      const bookmark: Delta<Pod> = { type: 'Bookmark', resourceVersion: '6' };
      const source = hot('-r-x-1-2-b------3------|', { r: replace, x: bookmark, 1: a1, 2: a2, b: b1, 3: a3 });
      // a is quiet 5 frames after its last delta (frame 7 → 12); b from frame 9 → 14; a3 at 16 → 21.
      expectObservable(source.pipe(quietPerObject<Pod>(5, scheduler))).toBe('------------2-b------3-|', { 2: a2, b: b1, 3: a3 });
    });
  });
});

describeEachServerVersion('example: pods that became Ready, against the loopback API server', (serverVersion) => {
  let server: ApiServer;
  beforeEach(async () => {
    server = await startApiServer({ serverVersion });
  });
  afterEach(() => server.close());

  it('reports the pods whose Ready condition turned true after the sync, and returns after the asked number', async () => {
    server.store.create(pods, withReady('already', true));
    server.store.create(pods, withReady('starting', false));
    server.store.create(pods, withReady('other', false));
    const lines = new Lines();
    const watching = main(server.kubeConfig, { namespace: 'ns', count: 2, log: lines.log });
    await lines.waitFor('synced: 3 pods');

    const becomeReady = (name: string): void => {
      const current = server.store.get(pods, 'ns', name)!;
      server.store.update(pods, { ...withReady(name, true), metadata: current.metadata });
    };
    const touch = (name: string): void => {
      const current = server.store.get(pods, 'ns', name)!;
      server.store.update(pods, { ...current, metadata: { ...current.metadata, labels: { touched: 'yes' } } });
    };
    touch('already'); // ready before and after: not "became"
    becomeReady('starting');
    server.store.create(pods, withReady('born-ready', true));

    expect(await lines.settled(watching, 'main() to return after 2 pods became Ready')).toEqual(['ns/starting', 'ns/born-ready']);
    expect(lines.seen).toEqual(['synced: 3 pods', 'ready: ns/starting', 'ready: ns/born-ready']);
  });
});
