import { changedLabels } from '../../lib/operators/changedLabels';
import type { Change } from '../../lib/store/change';
import { newTestScheduler } from '../handlers/handleFixtures';

const at = (rv: string, labels: Record<string, string> | undefined, uid = 'u1') => ({ metadata: { name: 'p', namespace: 'ns', uid, resourceVersion: rv, labels } });
const changes = {
  a: { type: 'add', key: 'ns/p', object: at('1', { app: 'web' }), isInInitialList: false },
  // Equal labels in two different objects: versions that were not shared (shareUnchanged off).
  s: { type: 'update', key: 'ns/p', oldObject: at('1', { app: 'web' }), object: at('2', { app: 'web' }) },
  v: { type: 'update', key: 'ns/p', oldObject: at('2', { app: 'web' }), object: at('3', { app: 'api' }) },
  k: { type: 'update', key: 'ns/p', oldObject: at('3', { app: 'api' }), object: at('4', { app: 'api', tier: 'a' }) },
  x: { type: 'update', key: 'ns/p', oldObject: at('4', { app: 'api', tier: 'a' }), object: at('5', { app: 'api' }) },
  n: { type: 'update', key: 'ns/p', oldObject: at('5', undefined), object: at('6', {}) },
  r: { type: 'update', key: 'ns/p', oldObject: at('6', { app: 'api' }), object: at('9', { app: 'api' }, 'u2') },
  d: { type: 'delete', key: 'ns/p', object: at('9', { app: 'api' }), finalStateUnknown: false },
} satisfies Record<string, Change>;

describe('changedLabels', () => {
  it('drops updates with equal labels, compared key by key, and passes a changed value, an added key and a removed one', () => {
    newTestScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<Change>('asvkx|', changes).pipe(changedLabels())).toBe('a-vkx|', changes);
    });
  });

  it('treats no labels and empty labels alike', () => {
    newTestScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<Change>('n|', changes).pipe(changedLabels())).toBe('-|', changes);
    });
  });

  it('passes an object deleted and created again with the same labels (a new uid), and deletes', () => {
    newTestScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<Change>('rd|', changes).pipe(changedLabels())).toBe('rd|', changes);
    });
  });

  it('unsubscribes its source when the subscriber leaves', () => {
    newTestScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot<Change>('-a-v-k-', changes);
      expectObservable(source.pipe(changedLabels()), '^--!').toBe('-a-', changes);
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });
});
