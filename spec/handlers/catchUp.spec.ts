import { CatchUp } from '../../lib/handlers/catchUp';
import type { HandlerNotification } from '../../lib/handlers/notifications';
import type { KubeObject } from '../../lib/base/object';
import type { Snapshot } from '../../lib/store/snapshot';
import { obj, replace, snapshotsOf } from './handleFixtures';

const withUid = (name: string, rv: string, uid: string): KubeObject => obj(name, rv, { uid });

/** Every notification of a catch-up from `seen` (with `owed`) to `target`, as short strings, sorted. */
function catchUp(seen: Snapshot, target: Snapshot, owed: HandlerNotification[] = [], isInInitialList = false): string[] {
  const catching = new CatchUp(seen, 0, new Map(owed.map((notification) => [notification.key, notification])));
  const lines: string[] = [];
  for (let notification = catching.next(target, 1, isInInitialList); notification !== undefined; notification = catching.next(target, 1, isInInitialList)) {
    switch (notification.type) {
      case 'add':
        lines.push(`add ${notification.key}@${notification.object.metadata.resourceVersion}${notification.isInInitialList ? ' initial' : ''}`);
        break;
      case 'update':
        lines.push(`update ${notification.key} ${notification.oldObject.metadata.resourceVersion}→${notification.object.metadata.resourceVersion}`);
        break;
      case 'delete':
        lines.push(`delete ${notification.key}@${notification.object.metadata.resourceVersion}${notification.finalStateUnknown ? ' unknown' : ''}`);
        break;
    }
  }
  expect(catching.deliveredThrough()).toBe(1);
  return lines.sort();
}

describe('CatchUp', () => {
  // seen {a@1, b@1, c@1 uid c1, d@1}; target: a unchanged, b@2, c re-created (uid c2), d gone, e new.
  const [seen, target] = snapshotsOf([
    replace([obj('a', '1'), obj('b', '1'), withUid('c', '1', 'c1'), obj('d', '1')], '1'),
    replace([obj('a', '1'), obj('b', '2'), withUid('c', '2', 'c2'), obj('e', '2')], '2'),
  ]) as [Snapshot, Snapshot];

  it('delivers the difference: adds, updates from the state seen, deletes with finalStateUnknown, and a delete then an add for a new uid', () => {
    expect(catchUp(seen, target)).toEqual(['add ns/c@2', 'add ns/e@2', 'delete ns/c@1 unknown', 'delete ns/d@1 unknown', 'update ns/b 1→2']);
  });

  it('starts from what the handler is owed where it saw something else than the snapshot', () => {
    const owed: HandlerNotification[] = [
      { type: 'add', key: 'ns/b', object: obj('b', '1'), isInInitialList: false }, // never saw b: b is an add
      { type: 'update', key: 'ns/a', oldObject: obj('a', '0'), object: obj('a', '1'), isResync: false }, // saw a@0
      { type: 'delete', key: 'ns/e', object: obj('e', '0'), finalStateUnknown: false }, // owed e's delete: then its re-creation
      { type: 'add', key: 'ns/z', object: obj('z', '1'), isInInitialList: false }, // z came and went: nothing
    ];
    expect(catchUp(seen, target, owed)).toEqual(['add ns/b@2', 'add ns/c@2', 'add ns/e@2', 'delete ns/c@1 unknown', 'delete ns/d@1 unknown', 'delete ns/e@0', 'update ns/a 0→1']);
  });

  it('marks its adds isInInitialList when the handler has not synced yet, and has nothing to deliver for a snapshot it has seen', () => {
    expect(catchUp(seen, target, [], true)).toContain('add ns/e@2 initial');
    expect(new CatchUp(target, 1, new Map()).next(target, 1, false)).toBeUndefined();
  });
});
