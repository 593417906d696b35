import type { MonoTypeOperatorFunction } from 'rxjs';
import type { Change } from '../../lib/store/change';
import { newTestScheduler } from '../handlers/handleFixtures';

/**
 * The specs of an operator that passes an update only when one string map of the metadata
 * (`labels` or `annotations`) changed: `field` varies from version to version, the other map
 * changes on every one, so an operator that read the wrong map would pass them all.
 */
export function describeStringMapOperator(name: string, operator: () => MonoTypeOperatorFunction<Change>, field: 'labels' | 'annotations'): void {
  const other = field === 'labels' ? 'annotations' : 'labels';
  const at = (rv: string, map: Record<string, string> | undefined, uid = 'u1') => ({ metadata: { name: 'p', namespace: 'ns', uid, resourceVersion: rv, [field]: map, [other]: { app: rv } } });
  const changes = {
    a: { type: 'add', key: 'ns/p', object: at('1', { app: 'web' }), isInInitialList: false },
    // Equal maps in two different objects: versions that were not shared (shareUnchanged off).
    s: { type: 'update', key: 'ns/p', oldObject: at('1', { app: 'web' }), object: at('2', { app: 'web' }) },
    v: { type: 'update', key: 'ns/p', oldObject: at('2', { app: 'web' }), object: at('3', { app: 'api' }) },
    k: { type: 'update', key: 'ns/p', oldObject: at('3', { app: 'api' }), object: at('4', { app: 'api', tier: 'a' }) },
    x: { type: 'update', key: 'ns/p', oldObject: at('4', { app: 'api', tier: 'a' }), object: at('5', { app: 'api' }) },
    n: { type: 'update', key: 'ns/p', oldObject: at('5', undefined), object: at('6', {}) },
    r: { type: 'update', key: 'ns/p', oldObject: at('6', { app: 'api' }), object: at('9', { app: 'api' }, 'u2') },
    d: { type: 'delete', key: 'ns/p', object: at('9', { app: 'api' }), finalStateUnknown: false },
  } satisfies Record<string, Change>;

  describe(name, () => {
    it(`drops updates with equal ${field}, compared key by key, and passes a changed value, an added key and a removed one`, () => {
      newTestScheduler().run(({ cold, expectObservable }) => {
        expectObservable(cold<Change>('asvkx|', changes).pipe(operator())).toBe('a-vkx|', changes);
      });
    });

    it(`treats no ${field} and empty ${field} alike, and ignores ${other}`, () => {
      newTestScheduler().run(({ cold, expectObservable }) => {
        expectObservable(cold<Change>('n|', changes).pipe(operator())).toBe('-|', changes);
      });
    });

    it(`passes an object deleted and created again with the same ${field} (a new uid), and deletes`, () => {
      newTestScheduler().run(({ cold, expectObservable }) => {
        expectObservable(cold<Change>('rd|', changes).pipe(operator())).toBe('rd|', changes);
      });
    });

    it('unsubscribes its source when the subscriber leaves', () => {
      newTestScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
        const source = hot<Change>('-a-v-k-', changes);
        expectObservable(source.pipe(operator()), '^--!').toBe('-a-', changes);
        expectSubscriptions(source.subscriptions).toBe('^--!');
      });
    });
  });
}
