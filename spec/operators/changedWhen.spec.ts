import { changedWhen } from '../../lib/operators/changedWhen';
import type { Change } from '../../lib/store/change';
import type { KubeObject } from '../../lib/base/object';
import { newTestScheduler } from '../handlers/handleFixtures';

type Scaled = KubeObject & { spec: { replicas: number } };
const at = (rv: string, replicas: number, uid = 'u1'): Scaled => ({ metadata: { name: 'd', namespace: 'ns', uid, resourceVersion: rv }, spec: { replicas } });
const changes = {
  a: { type: 'add', key: 'ns/d', object: at('1', 1), isInInitialList: false },
  s: { type: 'update', key: 'ns/d', oldObject: at('1', 1), object: at('2', 1) },
  u: { type: 'update', key: 'ns/d', oldObject: at('2', 1), object: at('3', 4) },
  r: { type: 'update', key: 'ns/d', oldObject: at('3', 4), object: at('8', 4, 'u2') },
  d: { type: 'delete', key: 'ns/d', object: at('8', 4, 'u2'), finalStateUnknown: false },
} satisfies Record<string, Change<Scaled>>;

describe('changedWhen', () => {
  it("passes adds, deletes and the updates the user's predicate accepts, and asks it nothing else", () => {
    const asked: string[] = [];
    const scaled = (before: Scaled, after: Scaled): boolean => {
      asked.push(`${before.metadata.resourceVersion}→${after.metadata.resourceVersion}`);
      return before.spec.replicas !== after.spec.replicas;
    };
    newTestScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<Change<Scaled>>('asurd|', changes).pipe(changedWhen(scaled))).toBe('a-urd|', changes);
    });
    expect(asked).toEqual(['1→2', '2→3']);
  });

  it("fails with what the predicate throws", () => {
    const boom = new Error('boom');
    newTestScheduler().run(({ cold, expectObservable }) => {
      const throwing = changedWhen<Scaled>(() => {
        throw boom;
      });
      expectObservable(cold<Change<Scaled>>('as|', changes).pipe(throwing)).toBe('a#', changes, boom);
    });
  });

  it('unsubscribes its source when the subscriber leaves', () => {
    newTestScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot<Change<Scaled>>('-a-u-u-', changes);
      expectObservable(source.pipe(changedWhen(() => true)), '^--!').toBe('-a-', changes);
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });
});
