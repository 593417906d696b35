import { inNamespace } from '../../lib/operators/inNamespace';
import type { Change } from '../../lib/store/change';
import { newTestScheduler } from '../handlers/handleFixtures';

const inNs = (name: string, namespace?: string): Change => ({ type: 'add', key: name, object: { metadata: { name, namespace } }, isInInitialList: false });
const changes = { a: inNs('a', 'one'), b: inNs('b', 'two'), c: inNs('c', 'three'), n: inNs('node-1') };

describe('inNamespace', () => {
  it('keeps the changes of objects in the namespace', () => {
    newTestScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<Change>('abcn|', changes).pipe(inNamespace('one'))).toBe('a---|', changes);
    });
  });

  it('accepts several namespaces, and never matches cluster-scoped objects', () => {
    newTestScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<Change>('abcn|', changes).pipe(inNamespace(['one', 'three']))).toBe('a-c-|', changes);
      expectObservable(cold<Change>('abcn|', changes).pipe(inNamespace(''))).toBe('----|', changes);
    });
  });

  it('unsubscribes its source when the subscriber leaves, and ends with it', () => {
    newTestScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const left = hot<Change>('-a-b-c-', changes);
      const failed = hot<Change>('-a-#', changes);
      expectObservable(left.pipe(inNamespace('one')), '^--!').toBe('-a-', changes);
      expectObservable(failed.pipe(inNamespace('one'))).toBe('-a-#', changes);
      expectSubscriptions(left.subscriptions).toBe('^--!');
      expectSubscriptions(failed.subscriptions).toBe('^--!');
    });
  });
});
