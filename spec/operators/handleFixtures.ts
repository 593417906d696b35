import { from } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { Delta } from '../../lib/delta';
import { indexer } from '../../lib/operators/indexer';
import type { ResourceHandlers } from '../../lib/operators/handle';
import type { SchedulerLike } from 'rxjs';
import type { KubeObject } from '../../lib/store/object';
import type { Snapshot } from '../../lib/store/snapshot';

/**
 * Test support for handle(), resync() and the filters: objects, snapshots built by the real
 * indexer from deltas, and handlers that record what they were called with and when.
 */

export function obj(name: string, resourceVersion: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject {
  return { metadata: { name, namespace: 'ns', resourceVersion, ...extra } };
}

export function replace(items: readonly KubeObject[], resourceVersion = 'r'): Delta {
  return { type: 'Replace', items, first: true, last: true, resourceVersion };
}

/** The snapshots the indexer emits for these deltas, in order. */
export function snapshotsOf(deltas: readonly Delta[]): Snapshot[] {
  const snapshots: Snapshot[] = [];
  from(deltas).pipe(indexer()).subscribe((snapshot) => snapshots.push(snapshot));
  return snapshots;
}

export function newTestScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

/** A handler that logs each call as a short string: `add a@1 initial`, `update a 1→2`, `delete a`. */
export function recordingHandlers(scheduler: SchedulerLike | undefined, log: string[]): ResourceHandlers {
  const at = (): string => (scheduler === undefined ? '' : ` t=${scheduler.now()}`);
  return {
    onAdd: (o, { isInInitialList }) => void log.push(`add ${o.metadata.name}@${o.metadata.resourceVersion}${isInInitialList ? ' initial' : ''}${at()}`),
    onUpdate: (old, o, { isResync }) =>
      void log.push(`update ${o.metadata.name} ${old.metadata.resourceVersion}→${o.metadata.resourceVersion}${isResync ? ' resync' : ''}${at()}`),
    onDelete: (o, { finalStateUnknown }) => void log.push(`delete ${o.metadata.name}@${o.metadata.resourceVersion}${finalStateUnknown ? ' unknown' : ''}${at()}`),
    onSynced: () => void log.push(`synced${at()}`),
  };
}

/** Lets pending promise callbacks (handler resolutions) run. */
export async function flushMicrotasks(rounds = 10): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
}

/** A promise with its resolve and reject at hand. */
export function deferred(): { promise: Promise<void>; resolve: () => void; reject: (error: unknown) => void } {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
