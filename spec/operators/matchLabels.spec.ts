import { matchLabels } from '../../lib/operators/matchLabels';
import type { Change } from '../../lib/store/change';
import { SelectorSyntaxError } from '../../lib/store/selector';
import { newTestScheduler } from '../handlers/handleFixtures';

const labelled = (name: string, labels: Record<string, string>) => ({ metadata: { name, namespace: 'ns', labels } });
const changes = {
  w: { type: 'add', key: 'ns/w', object: labelled('w', { app: 'web', tier: 'front' }), isInInitialList: false },
  d: { type: 'add', key: 'ns/d', object: labelled('d', { app: 'db' }), isInInitialList: false },
  l: { type: 'update', key: 'ns/w', oldObject: labelled('w', { app: 'web' }), object: labelled('w', { app: 'db' }) },
  x: { type: 'delete', key: 'ns/d', object: labelled('d', { app: 'db' }), finalStateUnknown: false },
} satisfies Record<string, Change>;

describe('matchLabels', () => {
  it('keeps the changes of objects whose labels equal every entry of a map', () => {
    newTestScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<Change>('wdx|', changes).pipe(matchLabels({ app: 'web', tier: 'front' }))).toBe('w--|', changes);
      expectObservable(cold<Change>('wdx|', changes).pipe(matchLabels({ app: 'db' }))).toBe('-dx|', changes);
    });
  });

  it('accepts a Kubernetes label selector string', () => {
    newTestScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<Change>('wdx|', changes).pipe(matchLabels('app in (web,cache),tier'))).toBe('w--|', changes);
      expectObservable(cold<Change>('wdx|', changes).pipe(matchLabels('!tier'))).toBe('-dx|', changes);
    });
  });

  it('passes an update whose old state matched, so an object leaving the set is seen', () => {
    newTestScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<Change>('l|', changes).pipe(matchLabels({ app: 'web' }))).toBe('l|', changes);
    });
  });

  it('throws a SelectorSyntaxError for a selector that does not parse', () => {
    expect(() => matchLabels('app in (web')).toThrow(SelectorSyntaxError);
  });

  it('does not read labels through the prototype', () => {
    newTestScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<Change>('w|', changes).pipe(matchLabels({ constructor: 'x' }))).toBe('-|', changes);
    });
  });

  it('unsubscribes its source when the subscriber leaves, and ends with it', () => {
    newTestScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const left = hot<Change>('-w-d-x-', changes);
      const completed = hot<Change>('-w-d|', changes);
      expectObservable(left.pipe(matchLabels({ app: 'web' })), '^--!').toBe('-w-', changes);
      expectObservable(completed.pipe(matchLabels('app=db'))).toBe('---d|', changes);
      expectSubscriptions(left.subscriptions).toBe('^--!');
      expectSubscriptions(completed.subscriptions).toBe('^---!');
    });
  });
});
