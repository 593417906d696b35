import type { Condition as KubeCondition } from 'kubernetes-types/meta/v1.js';
import { findCondition, isConditionTrue, removeCondition, setCondition, type Condition } from '../../lib/writes/conditions';
import { edit } from '../../lib/writes/edit';
import { deepFreeze } from '../../lib/store/deepFreeze';
import type { KubeObject } from '../../lib/base/object';

/**
 * The condition helpers follow apimachinery's `meta.SetStatusCondition` (api/meta/conditions.go):
 * one condition per type, lastTransitionTime moves only with status, reason, message and
 * observedGeneration always take the new values; and they are pure.
 */

const T0 = new Date('2024-05-01T10:00:00.250Z');
const T1 = new Date('2024-05-01T10:05:00Z');

const ready = (status: 'True' | 'False', extra: Partial<Condition> = {}): Condition => ({
  type: 'Ready',
  status,
  lastTransitionTime: '2024-05-01T09:00:00Z',
  reason: 'Checked',
  message: '',
  ...extra,
});

describe('setCondition', () => {
  it('appends a new type, stamped now in whole seconds unless the update brings a time', () => {
    expect(setCondition(undefined, { type: 'Ready', status: 'True', reason: 'Up', observedGeneration: 3 }, { now: T0 })).toEqual([
      { type: 'Ready', status: 'True', observedGeneration: 3, lastTransitionTime: '2024-05-01T10:00:00Z', reason: 'Up', message: '' },
    ]);
    const given = setCondition([], { type: 'Ready', status: 'False', reason: 'Down', message: 'no pods', lastTransitionTime: '2023-01-01T00:00:00Z' }, { now: T0 });
    expect(given).toEqual([{ type: 'Ready', status: 'False', lastTransitionTime: '2023-01-01T00:00:00Z', reason: 'Down', message: 'no pods' }]);
  });

  it('keeps one condition per type: setting an existing type replaces it in place', () => {
    const degraded: Condition = { type: 'Degraded', status: 'False', lastTransitionTime: '2024-01-01T00:00:00Z', reason: 'Fine', message: '' };
    const next = setCondition([ready('True'), degraded], { type: 'Ready', status: 'False', reason: 'Lost', message: 'pod gone' }, { now: T1 });
    expect(next.map((condition) => condition.type)).toEqual(['Ready', 'Degraded']);
    expect(next[1]).toBe(degraded);
  });

  it('moves lastTransitionTime only when status changes', () => {
    const changed = setCondition([ready('True')], { type: 'Ready', status: 'False', reason: 'Lost' }, { now: T1 });
    expect(changed[0]).toEqual({ type: 'Ready', status: 'False', lastTransitionTime: '2024-05-01T10:05:00Z', reason: 'Lost', message: '' });
    const sameStatus = setCondition([ready('True')], { type: 'Ready', status: 'True', reason: 'StillUp', message: 'checked again', observedGeneration: 8 }, { now: T1 });
    expect(sameStatus[0]).toEqual({ type: 'Ready', status: 'True', lastTransitionTime: '2024-05-01T09:00:00Z', reason: 'StillUp', message: 'checked again', observedGeneration: 8 });
  });

  it("takes the update's observedGeneration, dropping the old one when the update has none (Go's zero value is omitted)", () => {
    const next = setCondition([ready('True', { observedGeneration: 4 })], { type: 'Ready', status: 'True', reason: 'Checked' }, { now: T1 });
    expect(next[0]).not.toHaveProperty('observedGeneration');
  });

  it('returns the very array it was given when nothing changed, so that an edit writes nothing', () => {
    const conditions = deepFreeze([ready('True', { observedGeneration: 2 })]);
    expect(setCondition(conditions, { type: 'Ready', status: 'True', reason: 'Checked', observedGeneration: 2 }, { now: T1 })).toBe(conditions);
    const object = deepFreeze({ metadata: { name: 'w', resourceVersion: '3', generation: 2 }, status: { conditions } }) as KubeObject & { status: { conditions: Condition[] } };
    const unchanged = edit(object, (draft) => {
      draft.status.conditions = setCondition(draft.status.conditions, { type: 'Ready', status: 'True', reason: 'Checked', observedGeneration: 2 }, { now: T1 });
    });
    expect(unchanged.writes).toEqual([]);
  });

  it('never changes the array or the conditions it was given', () => {
    const conditions = deepFreeze([ready('True')]);
    expect(() => setCondition(conditions, { type: 'Ready', status: 'False', reason: 'Lost' }, { now: T1 })).not.toThrow();
    expect(() => setCondition(conditions, { type: 'Other', status: 'False', reason: 'New' }, { now: T1 })).not.toThrow();
    expect(conditions).toEqual([ready('True')]);
  });

  it('inside an edit, becomes a status write of the conditions', () => {
    const object = deepFreeze({ metadata: { name: 'w', resourceVersion: '3', generation: 5 }, status: { conditions: [ready('True')] } }) as KubeObject & {
      status: { conditions: Condition[] };
    };
    const change = edit(object, (draft) => {
      draft.status.conditions = setCondition(draft.status.conditions, { type: 'Ready', status: 'False', reason: 'Lost', observedGeneration: 5 }, { now: T1 });
    });
    expect(change.writes).toHaveLength(1);
    expect(change.writes[0]!.subresource).toBe('status');
    expect(change.writes[0]!.mergePatch).toEqual({
      metadata: { resourceVersion: '3' },
      status: { conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: '2024-05-01T10:05:00Z', reason: 'Lost', message: '', observedGeneration: 5 }] },
    });
  });

  it("takes kubernetes-types' Condition as it is", () => {
    const conditions: KubeCondition[] = [{ type: 'Ready', status: 'True', lastTransitionTime: '2024-05-01T09:00:00Z', reason: 'Up', message: '' }];
    const next: KubeCondition[] = setCondition(conditions, { type: 'Ready', status: 'Unknown', reason: 'NoProbe' }, { now: T1 });
    expect(next[0]?.status).toBe('Unknown');
  });
});

describe('findCondition, isConditionTrue, removeCondition', () => {
  const conditions = [ready('True'), { type: 'Progressing', status: 'False', lastTransitionTime: '2024-01-01T00:00:00Z', reason: 'Done', message: '' }];

  it('find by type, undefined when absent', () => {
    expect(findCondition(conditions, 'Progressing')?.reason).toBe('Done');
    expect(findCondition(conditions, 'Missing')).toBeUndefined();
    expect(findCondition(undefined, 'Ready')).toBeUndefined();
  });

  it('isConditionTrue is true only for a present condition with status True', () => {
    expect(isConditionTrue(conditions, 'Ready')).toBe(true);
    expect(isConditionTrue(conditions, 'Progressing')).toBe(false);
    expect(isConditionTrue(conditions, 'Missing')).toBe(false);
  });

  it('removeCondition returns a new array without the type, or the same one when there was none', () => {
    const removed = removeCondition(conditions, 'Ready');
    expect(removed.map((condition) => condition.type)).toEqual(['Progressing']);
    expect(conditions).toHaveLength(2);
    expect(removeCondition(conditions, 'Missing')).toBe(conditions);
    expect(removeCondition(undefined, 'Ready')).toEqual([]);
  });
});
