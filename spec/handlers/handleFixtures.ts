import { from } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { Delta } from '../../lib/reflector/delta';
import { indexer } from '../../lib/store/indexer';
import type { ResourceHandlers } from '../../lib/handlers/resourceHandlers';
import { Subscription, type SchedulerAction, type SchedulerLike } from 'rxjs';
import { ChangeSequencer } from '../../lib/store/changeSequence';
import type { IndexedSnapshot } from '../../lib/store/indexedSnapshot';
import type { KubeObject } from '../../lib/base/object';
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

/**
 * The same stream with runs of consecutive snapshots after the first folded into one (a batch),
 * built as the indexer builds a batch: the run's changes replayed in order into an edit of the
 * snapshot before it (so its trie shares all it did not touch), sealed once, carrying every
 * change of the run, so that a key may change several times in one snapshot. `sizes` gives the
 * runs' lengths in turn (1: left as it is). The stream is numbered again, as one indexer would
 * number it.
 */
export function batched(snapshots: readonly Snapshot[], sizes: readonly number[]): Snapshot[] {
  const result: IndexedSnapshot<KubeObject>[] = [snapshots[0] as IndexedSnapshot<KubeObject>];
  for (let at = 1, run = 0; at < snapshots.length; run++) {
    const group = snapshots.slice(at, at + Math.max(1, sizes.length === 0 ? 1 : sizes[run % sizes.length]!)) as IndexedSnapshot<KubeObject>[];
    at += group.length;
    const last = group.at(-1)!;
    // An edit keeps the state's `synced`: a run through the first sync stays as it is.
    if (group.length === 1 || last.synced !== result.at(-1)!.synced) {
      result.push(...group);
      continue;
    }
    const edit = result.at(-1)!.edit();
    const changes = group.flatMap((snapshot) => snapshot.changes);
    for (const change of changes) {
      const previous = edit.get(change.key);
      if (change.type === 'delete') edit.remove(change.key, previous!);
      else edit.put(change.key, previous, change.object);
    }
    result.push(edit.finish(last.resourceVersion, changes));
  }
  const sequencer = new ChangeSequencer();
  for (const snapshot of result) sequencer.stamp(snapshot);
  return result;
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

/**
 * A scheduler whose work runs only when the test says so, in order, and whose clock the test sets:
 * for scripts that interleave emissions and delivery turns exactly.
 */
export class ManualScheduler implements SchedulerLike {
  private queue: { work: () => void; cancelled: boolean }[] = [];
  clock = 0;

  now(): number {
    return this.clock;
  }

  schedule<S>(work: (this: SchedulerAction<S>, state?: S) => void, _delay?: number, state?: S): Subscription {
    const scheduler = this;
    const entry = { work: () => undefined as void, cancelled: false };
    const action = {
      schedule(nextState?: S): Subscription {
        return scheduler.schedule(work, 0, nextState);
      },
    } as unknown as SchedulerAction<S>;
    entry.work = () => work.call(action, state);
    this.queue.push(entry);
    return new Subscription(() => void (entry.cancelled = true));
  }

  /** Runs up to `count` of the actions queued now (not those they schedule); returns how many ran. */
  run(count: number): number {
    const batch = this.queue.splice(0, count);
    for (const entry of batch) if (!entry.cancelled) entry.work();
    this.clock += 1;
    return batch.length;
  }
}

/**
 * A handler that replays what it is called with onto a map of its own, checking each call
 * against what it has seen: an add of a key it does not hold, an update whose old object is the
 * one it holds, a delete of a key it holds. `violations` lists the calls that broke a rule.
 */
export class ReplayingHandler {
  readonly objects = new Map<string, KubeObject>();
  readonly violations: string[] = [];
  readonly calls: string[] = [];

  readonly handlers: ResourceHandlers = {
    onAdd: (object, { key }) => {
      this.calls.push(`add ${key}@${object.metadata.resourceVersion}`);
      if (this.objects.has(key)) this.violations.push(`add of held ${key}`);
      this.objects.set(key, object);
    },
    onUpdate: (oldObject, object, { key, isResync }) => {
      this.calls.push(`update ${key} ${oldObject.metadata.resourceVersion}→${object.metadata.resourceVersion}${isResync ? ' resync' : ''}`);
      if (this.objects.get(key) !== oldObject) this.violations.push(`update of ${key} from a state it did not hold`);
      this.objects.set(key, object);
    },
    onDelete: (object, { key }) => {
      this.calls.push(`delete ${key}@${object.metadata.resourceVersion}`);
      if (!this.objects.delete(key)) this.violations.push(`delete of absent ${key}`);
    },
  };

  /** True when the map holds exactly the snapshot's objects (the same instances). */
  holds(snapshot: Snapshot): boolean {
    if (this.objects.size !== snapshot.size) return false;
    for (const [key, object] of this.objects) if (snapshot.get(key) !== object) return false;
    return true;
  }
}

/** `snapshot` whose `changes` cannot be read: a `Snapshot` implementation that fails inside an operator's own work. */
export function withUnreadableChanges<T extends KubeObject>(snapshot: Snapshot<T>, error: unknown): Snapshot<T> {
  return Object.create(snapshot, {
    changes: {
      get: () => {
        throw error;
      },
    },
  }) as Snapshot<T>;
}

/** `snapshot` whose `get` throws from its `failingCall`-th call on (1-based). */
export function withFailingLookups<T extends KubeObject>(snapshot: Snapshot<T>, failingCall: number, error: unknown): Snapshot<T> {
  let calls = 0;
  const failing = Object.create(snapshot, {
    get: {
      value: (key: string) => {
        if (++calls >= failingCall) throw error;
        return snapshot.get(key);
      },
    },
    // What a handler keeps of it (its settled state) fails the same lookups.
    settled: { value: () => failing },
  }) as Snapshot<T>;
  return failing;
}

/** A scheduler that cannot schedule anything (one already shut down, say): each `schedule` throws `error`. */
export function unschedulable(error: unknown, now: () => number = () => 0): SchedulerLike {
  return {
    now,
    schedule: () => {
      throw error;
    },
  };
}
