import fc from 'fast-check';
import { from } from 'rxjs';
import { indexer } from '../../lib/store/indexer';
import type { Delta } from '../../lib/reflector/delta';
import type { Change } from '../../lib/store/change';
import { ChangeSequencer, RECORD_LIMIT, SEQUENCE_WINDOW, type SequencePosition } from '../../lib/store/changeSequence';
import type { KubeObject } from '../../lib/base/object';
import type { Snapshot } from '../../lib/store/snapshot';

const obj = (name: string, resourceVersion: string): KubeObject => ({ metadata: { name, namespace: 'ns', resourceVersion } });
const replace = (items: KubeObject[], resourceVersion: string): Delta => ({ type: 'Replace', items, first: true, last: true, resourceVersion });

function snapshotsOf(deltas: readonly Delta[]): (Snapshot & SequencePosition)[] {
  const snapshots: (Snapshot & SequencePosition)[] = [];
  from(deltas).pipe(indexer()).subscribe((snapshot) => snapshots.push(snapshot as Snapshot & SequencePosition));
  return snapshots;
}

/** The keys a snapshot really changes: every change but the updates that changed nothing. */
const changedKeys = (snapshot: Snapshot): string[] => snapshot.changes.filter((change) => change.type !== 'update' || change.isResync !== true).map((change) => change.key);

const names = ['a', 'b', 'c', 'd', 'e'];
const deltaArb = fc.oneof(
  { weight: 6, arbitrary: fc.record({ type: fc.constantFrom('Added' as const, 'Updated' as const, 'Deleted' as const), name: fc.constantFrom(...names) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('Replace' as const), keep: fc.subarray(names) }) },
);

describe('the indexer’s snapshot numbering (ChangeSequencer)', () => {
  it('numbers snapshots from 0 and names the latest earlier one that changed a key each changes', () => {
    fc.assert(
      fc.property(fc.array(deltaArb, { maxLength: 80 }), (shapes) => {
        const deltas = shapes.map((shape, i): Delta => {
          const rv = String(i + 2);
          // A relist keeps `a` at version 1: its updates of `a` change nothing and must not count.
          return shape.type === 'Replace' ? replace(shape.keep.map((name) => obj(name, name === 'a' ? '1' : rv)), rv) : { type: shape.type, object: obj(shape.name, rv) };
        });
        const snapshots = snapshotsOf([replace([obj('a', '1'), obj('b', '1')], '1'), ...deltas]);
        snapshots.forEach((snapshot, i) => {
          expect(snapshot.sequence).toBe(i);
          const keys = new Set(changedKeys(snapshot));
          let expected = -1;
          for (let j = i - 1; j >= 0 && expected === -1; j--) if (changedKeys(snapshots[j]!).some((key) => keys.has(key))) expected = j;
          expect(snapshot.touchedSince).toBe(expected);
        });
      }),
      { numRuns: 300 },
    );
  });

  it('marks relist updates that changed nothing with isResync, and the others not', () => {
    const [, relisted] = snapshotsOf([replace([obj('a', '1'), obj('b', '1')], '1'), replace([obj('a', '1'), obj('b', '2')], '2')]);
    expect(relisted!.changes.map((change) => change.type === 'update' && `${change.key} ${change.isResync}`)).toEqual(['ns/a true', 'ns/b false']);
  });

  it('does not remember the keys of a relist: it counts as touching all before it, and all after it as touching it', () => {
    const many = Array.from({ length: RECORD_LIMIT + 1 }, (_, i) => obj(`n${i}`, '2'));
    const snapshots = snapshotsOf([replace([obj('a', '1')], '1'), { type: 'Updated', object: obj('a', '2') }, replace([obj('a', '2'), ...many], '3'), { type: 'Added', object: obj('z', '4') }]);
    expect(snapshots.map((snapshot) => snapshot.touchedSince)).toEqual([-1, 0, 1, 2]);
  });

  it('gives a snapshot that changes one key twice (a batch) its own number, and a large one unless its keys are distinct', () => {
    const stamped = (keys: string[], distinctKeys: boolean): number => {
      const changes = keys.map((key): Change => ({ type: 'add', key, object: obj(key, '1'), isInInitialList: false }));
      const snapshot = {
        changes,
        sequence: -1,
        touchedSince: -1,
        numbered(sequence: number, touchedSince: number): void {
          Object.assign(this, { sequence, touchedSince });
        },
      };
      new ChangeSequencer().stamp(snapshot, distinctKeys);
      expect(snapshot.sequence).toBe(0);
      return snapshot.touchedSince;
    };
    expect(stamped(['a', 'b'], false)).toBe(-1);
    expect(stamped(['a', 'b', 'a'], false)).toBe(0);
    const many = Array.from({ length: RECORD_LIMIT + 1 }, (_, i) => `n${i}`);
    expect(stamped(many, true)).toBe(-1);
    expect(stamped(many, false)).toBe(0);
  });

  it('remembers at least a window of snapshots back, and forgets what is two windows older', () => {
    const aAt = new Set([1, SEQUENCE_WINDOW, 4 * SEQUENCE_WINDOW]);
    const updates = Array.from({ length: 4 * SEQUENCE_WINDOW }, (_, i): Delta => ({ type: 'Updated', object: obj(aAt.has(i + 1) ? 'a' : `n${i}`, String(i + 2)) }));
    const snapshots = snapshotsOf([replace([obj('a', '1')], '1'), ...updates]);
    expect(snapshots[SEQUENCE_WINDOW]!.touchedSince).toBe(1);
    expect(snapshots[4 * SEQUENCE_WINDOW]!.touchedSince).toBe(-1);
  });
});
