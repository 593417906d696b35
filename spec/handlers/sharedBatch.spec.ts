import { SharedBatch } from '../../lib/handlers/sharedBatch';
import type { Snapshot } from '../../lib/store/snapshot';
import { obj, replace, snapshotsOf } from './handleFixtures';

describe('SharedBatch', () => {
  // s0 {a@1}; s1 a→2; s2 a→3; s3 +b, +c (one relist page adding two objects).
  const [s0, s1, s2, s3] = snapshotsOf([
    replace([obj('a', '1')], '1'),
    { type: 'Updated', object: obj('a', '2') },
    { type: 'Updated', object: obj('a', '3') },
    replace([obj('a', '3'), obj('b', '1'), obj('c', '1')], '4'),
  ]) as [Snapshot, Snapshot, Snapshot, Snapshot];

  it('is one batch for every handler that drained after the same snapshot and receives the same next one', () => {
    const first = SharedBatch.join(s0, s1, 10);
    expect(first).toBeDefined();
    expect(SharedBatch.join(s0, s1, 10)).toBe(first);
    expect(SharedBatch.join(s0, s2, 10)).toBeUndefined(); // a different next snapshot
    expect(SharedBatch.join(s0, s1, 11)).toBeUndefined(); // a different queue bound
  });

  it('coalesces what it folds in, and freezes at the first read', () => {
    const batch = SharedBatch.join(s1, s2, 10)!;
    expect(batch.tryAppend(s3)).toBe(true);
    expect(batch.finishedAt(0)).toBe(false);
    expect([batch.at(0), batch.at(1), batch.at(2)].map((n) => `${n?.type} ${n?.key}`)).toEqual(['update ns/a', 'add ns/b', 'add ns/c']);
    expect(batch.at(3)).toBeUndefined();
    expect(batch.finishedAt(3)).toBe(true);
    expect(batch.tryAppend(s3)).toBe(false); // frozen
    expect(batch.rest(1).map((n) => n.key)).toEqual(['ns/b', 'ns/c']);
    const late = SharedBatch.join(s1, s2, 10); // nobody joins a frozen batch: a late handler starts its own
    expect(late).not.toBe(batch);
    expect(late?.at(0)?.key).toBe('ns/a');
    expect(late?.at(1)).toBeUndefined();
  });

  it('refuses a snapshot that could take it beyond its bound, counting every change as a new object', () => {
    const batch = SharedBatch.join(s2, s3, 2);
    expect(batch).toBeUndefined(); // s3 has three changes (a relist resync of a and two adds)
    const [u0, u1, u2] = snapshotsOf([replace([obj('a', '1')], '1'), { type: 'Updated', object: obj('a', '2') }, { type: 'Updated', object: obj('a', '3') }]) as [Snapshot, Snapshot, Snapshot];
    const small = SharedBatch.join(u0, u1, 1)!;
    expect(small.tryAppend(u2)).toBe(false);
  });
});
