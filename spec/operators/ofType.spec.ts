import { map } from 'rxjs';
import { ofType } from '../../lib/operators/ofType';
import type { Change } from '../../lib/store/change';
import { newTestScheduler, obj } from '../handlers/handleFixtures';

const changes = {
  a: { type: 'add', key: 'ns/a', object: obj('a', '1'), isInInitialList: false },
  u: { type: 'update', key: 'ns/a', oldObject: obj('a', '1'), object: obj('a', '2') },
  d: { type: 'delete', key: 'ns/a', object: obj('a', '2'), finalStateUnknown: false },
} satisfies Record<string, Change>;

describe('ofType', () => {
  it('keeps only the changes of the given types', () => {
    newTestScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<Change>('-a-u-d-a|', changes).pipe(ofType('add', 'delete'))).toBe('-a---d-a|', changes);
      expectObservable(cold<Change>('-a-u-d-a|', changes).pipe(ofType('update'))).toBe('---u----|', changes);
    });
  });

  it('narrows the change type, so fields of that type are readable without checks', () => {
    newTestScheduler().run(({ cold, expectObservable }) => {
      const finalStates = cold<Change>('-a-d|', changes).pipe(
        ofType('delete'),
        map((change) => change.finalStateUnknown),
      );
      expectObservable(finalStates).toBe('---f|', { f: false });
    });
  });

  it('unsubscribes its source when the subscriber leaves, and ends with it', () => {
    newTestScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const left = hot<Change>('-a-u-d-', changes);
      const completed = hot<Change>('-a-u|', changes);
      expectObservable(left.pipe(ofType('add')), '^--!').toBe('-a-', changes);
      expectObservable(completed.pipe(ofType('update'))).toBe('---u|', changes);
      expectSubscriptions(left.subscriptions).toBe('^--!');
      expectSubscriptions(completed.subscriptions).toBe('^---!');
    });
  });
});
