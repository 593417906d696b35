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
});
