import type { KubeObject } from '../../lib/base/object';
import type { WatchEvent } from '../../lib/sources/listerWatcher';
import { isRequestItem, watchEventStep, watchPhaseOf } from '../../lib/reflector/watchEvents';
import type { WatchDelta, WatchEventOutcome, WatchPhase } from '../../lib/reflector/watchEvents';
import { added, bookmark, deleted, initialEventsEnd, modified, pod } from './reflectHarness';

const a = pod('a', '11');
const b = pod('b', '12');
const unversioned = pod('c');
const noMetadata = { apiVersion: 'v1', kind: 'Pod' } as unknown as KubeObject;
const versionlessBookmark: WatchEvent = { type: 'BOOKMARK', object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: '' } } };
const notTheEnd: WatchEvent = {
  type: 'BOOKMARK',
  object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: '', resourceVersion: '9', annotations: { 'k8s.io/initial-events-end': 'false' } } },
};
const endWithoutVersion: WatchEvent = { type: 'BOOKMARK', object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: '', annotations: { 'k8s.io/initial-events-end': 'true' } } } };

type Row = [label: string, phase: WatchPhase, resourceVersion: string, event: WatchEvent, delta: WatchDelta | undefined, next: string, outcome: WatchEventOutcome, nextPhase: WatchPhase];

describe('watchEventStep', () => {
  // label, phase, resourceVersion before, event → delta, resourceVersion after, outcome, phase after
  it.each<Row>([
    // Rules 1 and 2: in order, each event becomes its delta and moves the resourceVersion to its own.
    ['an ADDED', 'events', '10', added(a), { type: 'Added', object: a }, '11', 'watched', 'events'],
    ['a MODIFIED', 'events', '10', modified(b), { type: 'Updated', object: b }, '12', 'watched', 'events'],
    ['a DELETED', 'events', '10', deleted(b), { type: 'Deleted', object: b }, '12', 'watched', 'events'],
    ['a BOOKMARK', 'events', '10', bookmark('20'), { type: 'Bookmark', resourceVersion: '20' }, '20', 'watched', 'events'],
    ['a BOOKMARK without a resourceVersion', 'events', '10', versionlessBookmark, undefined, '10', 'watched', 'events'],
    ['an event without a resourceVersion', 'events', '10', modified(unversioned), { type: 'Updated', object: unversioned }, '10', 'watched', 'events'],
    ['an object without metadata', 'events', '10', added(noMetadata), { type: 'Added', object: noMetadata }, '10', 'watched', 'events'],
    ['the initial-events-end bookmark outside initial events', 'events', '10', initialEventsEnd('20'), { type: 'Bookmark', resourceVersion: '20' }, '20', 'watched', 'events'],
    // Rule 3: the synthetic ADDEDs of a watch from '' or '0' advance nothing, until another type.
    ['a synthetic ADDED', 'syntheticAdds', '0', added(a), { type: 'Added', object: a }, '0', 'watched', 'syntheticAdds'],
    ['a MODIFIED after synthetic ADDEDs', 'syntheticAdds', '0', modified(b), { type: 'Updated', object: b }, '12', 'watched', 'events'],
    ['a DELETED after synthetic ADDEDs', 'syntheticAdds', '', deleted(b), { type: 'Deleted', object: b }, '12', 'watched', 'events'],
    ['a BOOKMARK after synthetic ADDEDs', 'syntheticAdds', '', bookmark('20'), { type: 'Bookmark', resourceVersion: '20' }, '20', 'watched', 'events'],
    ['a versionless BOOKMARK after synthetic ADDEDs', 'syntheticAdds', '0', versionlessBookmark, undefined, '0', 'watched', 'events'],
    // Rule 4: a streaming list's initial events go into pages and advance nothing, until the end bookmark.
    ['an initial ADDED', 'initialEvents', '', added(a), undefined, '', 'initialObject', 'initialEvents'],
    ['an initial MODIFIED', 'initialEvents', '5', modified(b), undefined, '5', 'initialObject', 'initialEvents'],
    ['an initial DELETED', 'initialEvents', '5', deleted(b), undefined, '5', 'initialDeletion', 'initialEvents'],
    ['a plain BOOKMARK among initial events', 'initialEvents', '5', bookmark('9'), undefined, '5', 'ignored', 'initialEvents'],
    ['a BOOKMARK annotated other than "true"', 'initialEvents', '5', notTheEnd, undefined, '5', 'ignored', 'initialEvents'],
    ['the initial-events-end bookmark', 'initialEvents', '5', initialEventsEnd('30'), undefined, '30', 'initialEventsEnd', 'events'],
    ['an initial-events-end bookmark without a resourceVersion', 'initialEvents', '5', endWithoutVersion, undefined, '', 'initialEventsEnd', 'events'],
  ])('%s in phase %s after %p', (_label, phase, resourceVersion, event, delta, next, outcome, nextPhase) => {
    expect(watchEventStep(phase, resourceVersion, event)).toEqual({ phase: nextPhase, resourceVersion: next, outcome, delta });
  });

  it('keeps the resourceVersion through a watch from "0" until its first event of another type (rule 3)', () => {
    const events = [added(pod('x', '15')), added(pod('y', '3')), modified(pod('x', '16')), added(pod('z', '17'))];
    const versions: string[] = [];
    let phase = watchPhaseOf({ kind: 'watch', resourceVersion: '0' });
    let resourceVersion = '0';
    for (const event of events) {
      ({ phase, resourceVersion } = watchEventStep(phase, resourceVersion, event));
      versions.push(resourceVersion);
    }
    expect(versions).toEqual(['0', '0', '16', '17']);
  });
});

describe('watchPhaseOf', () => {
  it.each([
    ['watch', '', 'syntheticAdds'],
    ['watch', '0', 'syntheticAdds'],
    ['watch', '10', 'events'],
    ['streamingList', '', 'initialEvents'],
    ['streamingList', '10', 'initialEvents'],
  ] as const)('a %s from %p starts in %s', (kind, resourceVersion, phase) => {
    expect(watchPhaseOf({ kind, resourceVersion })).toBe(phase);
  });
});

describe('isRequestItem (rule 5)', () => {
  it.each([
    ['watched', true],
    ['initialObject', true],
    ['initialDeletion', true],
    ['initialEventsEnd', false],
    ['ignored', false],
  ] as const)('%s counts as an item: %p', (outcome, item) => {
    expect(isRequestItem(outcome)).toBe(item);
  });
});
