import { changedGeneration } from '../../lib/operators/changedGeneration';
import type { Change } from '../../lib/store/change';
import { newTestScheduler } from '../handlers/handleFixtures';

const at = (generation: number | undefined, rv: string, uid = 'u1') => ({ metadata: { name: 'd', namespace: 'ns', uid, generation, resourceVersion: rv } });
const changes = {
  a: { type: 'add', key: 'ns/d', object: at(1, '1'), isInInitialList: false },
  s: { type: 'update', key: 'ns/d', oldObject: at(1, '1'), object: at(1, '2') },
  g: { type: 'update', key: 'ns/d', oldObject: at(1, '2'), object: at(2, '3') },
  n: { type: 'update', key: 'ns/d', oldObject: at(undefined, '3'), object: at(undefined, '4') },
  d: { type: 'delete', key: 'ns/d', object: at(2, '3'), finalStateUnknown: false },
  // Deleted and created again under the same name while the watch was down: a relist finds a new
  // uid at generation 1 where generation 1 was cached (kube-rs #1830).
  r: { type: 'update', key: 'ns/d', oldObject: at(1, '4'), object: at(1, '9', 'u2') },
} satisfies Record<string, Change>;

describe('changedGeneration', () => {
  it('drops updates that kept the generation and passes adds, deletes and generation changes', () => {
    newTestScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<Change>('asgd|', changes).pipe(changedGeneration())).toBe('a-gd|', changes);
    });
  });

  it('passes an object deleted and created again, seen as one update to a new uid at the same generation', () => {
    newTestScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<Change>('asr|', changes).pipe(changedGeneration())).toBe('a-r|', changes);
    });
  });

  it('passes updates of objects without a generation', () => {
    newTestScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<Change>('n|', changes).pipe(changedGeneration())).toBe('n|', changes);
    });
  });

  it('unsubscribes its source when the subscriber leaves, and ends with it', () => {
    newTestScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const left = hot<Change>('-a-s-g-', changes);
      const failed = hot<Change>('-a-s-#', changes);
      expectObservable(left.pipe(changedGeneration()), '^--!').toBe('-a-', changes);
      expectObservable(failed.pipe(changedGeneration())).toBe('-a---#', changes);
      expectSubscriptions(left.subscriptions).toBe('^--!');
      expectSubscriptions(failed.subscriptions).toBe('^----!');
    });
  });
});
