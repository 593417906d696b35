import { differences } from '../store/indexedSnapshot';
import type { KubeObject } from '../base/object';
import type { Snapshot } from '../store/snapshot';
import type { HandlerNotification } from './notifications';

/**
 * How a handler that fell more than `maxPending` objects behind catches up without a queue: it
 * keeps what it has seen, as a snapshot plus what it is still owed for a few keys, and when it is
 * ready for more it receives the difference between that and the latest snapshot, in rounds.
 *
 * What the handler has seen is `seen`, except for the keys of `owed`: for each of those, the
 * notification it was owed first (from its queue when it overflowed) tells what it saw last:
 * nothing before an add, the old object of an update, the object of a delete. A round delivers,
 * for every key where that differs from the round's target snapshot:
 *
 * | seen → target            | delivered                                                    |
 * |--------------------------|--------------------------------------------------------------|
 * | nothing → object          | add                                                          |
 * | object → nothing          | delete of the object seen, `finalStateUnknown` (an owed delete as it was) |
 * | object → another version  | update from the object seen                                  |
 * | object → another uid      | delete then add: the object was deleted and created again    |
 * | owed delete → object      | the delete, then an add                                      |
 *
 * Snapshots share every trie subtree no change touched, so a round costs O(k log n) for k keys
 * that changed, and holds nothing but the walk. When a round ends, the target is what the handler
 * has seen; if newer snapshots came meanwhile, another round starts from it.
 */
export class CatchUp<T extends KubeObject> {
  private round: Iterator<HandlerNotification<T>> | undefined;
  private target: Snapshot<T> | undefined;
  private targetNumber = 0;
  /** The number of the last snapshot the handler has entirely seen; -1 while it is owed older changes. */
  private through: number;

  /**
   * @param seen the snapshot whose state the handler has seen, but for the keys of `owed`.
   * @param seenNumber its number among the snapshots received.
   * @param owed the first notification still owed for each key where the handler saw something else.
   */
  constructor(
    private seen: Snapshot<T>,
    seenNumber: number,
    private owed: ReadonlyMap<string, HandlerNotification<T>>,
  ) {
    this.through = owed.size === 0 ? seenNumber : -1;
  }

  /** The number of the last snapshot whose every change the handler has been given. */
  deliveredThrough(): number {
    return this.through;
  }

  /**
   * The next notification towards `latest`, or undefined once the handler has seen it.
   * `isInInitialList` is set on the adds of a round that starts before the handler is synced.
   */
  next(latest: Snapshot<T>, latestNumber: number, isInInitialList: boolean): HandlerNotification<T> | undefined {
    for (;;) {
      if (this.round === undefined) {
        if (latest === this.seen && this.owed.size === 0) return undefined;
        this.target = latest;
        this.targetNumber = latestNumber;
        this.round = catchUpRound(this.seen, this.owed, latest, isInInitialList);
      }
      const step = this.round.next();
      if (step.done !== true) return step.value;
      this.round = undefined;
      this.seen = this.target!;
      this.through = this.targetNumber;
      this.owed = new Map();
    }
  }
}

function* catchUpRound<T extends KubeObject>(
  seen: Snapshot<T>,
  owed: ReadonlyMap<string, HandlerNotification<T>>,
  target: Snapshot<T>,
  isInInitialList: boolean,
): Generator<HandlerNotification<T>, void, undefined> {
  for (const [key, first] of owed) {
    const now = target.get(key);
    switch (first.type) {
      case 'add':
        if (now !== undefined) yield { type: 'add', key, object: now, isInInitialList: first.isInInitialList };
        break;
      case 'update':
        yield* transition(key, first.oldObject, now, isInInitialList);
        break;
      case 'delete':
        yield first;
        if (now !== undefined) yield { type: 'add', key, object: now, isInInitialList };
        break;
    }
  }
  for (const [key, before, after] of differences(seen, target)) {
    if (!owed.has(key)) yield* transition(key, before, after, isInInitialList);
  }
}

/** What takes a handler from `before` to `after` for one key (either may be absent). */
function* transition<T extends KubeObject>(key: string, before: T | undefined, after: T | undefined, isInInitialList: boolean): Generator<HandlerNotification<T>, void, undefined> {
  if (before === after) return;
  if (before === undefined) {
    yield { type: 'add', key, object: after!, isInInitialList };
    return;
  }
  if (after === undefined) {
    yield { type: 'delete', key, object: before, finalStateUnknown: true };
    return;
  }
  const uidBefore = before.metadata.uid;
  const uidAfter = after.metadata.uid;
  if (uidBefore !== undefined && uidAfter !== undefined && uidBefore !== uidAfter) {
    yield { type: 'delete', key, object: before, finalStateUnknown: true };
    yield { type: 'add', key, object: after, isInInitialList };
    return;
  }
  const version = before.metadata.resourceVersion;
  if (version !== undefined && version === after.metadata.resourceVersion) return;
  yield { type: 'update', key, oldObject: before, object: after, isResync: false };
}
