import type { Change } from '../store/change';
import type { KubeObject } from '../store/object';
import type { Snapshot } from '../store/snapshot';
import { CoalescingQueue, type HandlerNotification } from './handlerQueue';

/**
 * Pending notifications that several `handle()` subscriptions have alike, coalesced once and read
 * by each at its own pace.
 *
 * Handlers of one informer that have nothing pending when a snapshot arrives would each build the
 * same coalescing queue from the same changes. With 100 handlers that was 100 map inserts,
 * deletes and queue entries per watch event, most of the cost of fan-out. Instead, the first of
 * them to see the snapshot folds its changes into a batch shared by every handler that drained its
 * queue after the same snapshot; the others only check that the batch holds the snapshots they
 * received, in the same order. The batch is frozen into a list when the first
 * member starts delivering, and each member keeps an index into that list.
 *
 * A member that cannot follow (it is still delivering when a new snapshot arrives, it received
 * different snapshots, or the batch would exceed its `maxPending`) copies what it has not yet
 * delivered into its own queue and carries on alone, exactly as if it had never shared: pushing a
 * coalesced list into an empty queue rebuilds the same queue.
 */
export class SharedBatch<T extends KubeObject = KubeObject> {
  /** The snapshots folded in, in the order every member received them. */
  readonly snapshots: Snapshot<T>[] = [];
  private open: CoalescingQueue<T> | undefined = new CoalescingQueue<T>(Infinity);
  private frozen: HandlerNotification<T>[] = [];

  private constructor(readonly maxPending: number) {}

  /**
   * The batch of handlers that drained their queues after `base` and now receive `next`, joined
   * or started; undefined when this handler cannot share one (see the class comment).
   */
  static join<T extends KubeObject>(base: Snapshot<T>, next: Snapshot<T>, maxPending: number): SharedBatch<T> | undefined {
    if (openBase === base && openBatch !== undefined) {
      const existing = openBatch as SharedBatch<T>;
      return existing.maxPending === maxPending && existing.snapshots[0] === next ? existing : undefined;
    }
    const batch = new SharedBatch<T>(maxPending);
    if (!batch.tryAppend(next)) return undefined;
    openBase = base;
    openBatch = batch as SharedBatch<KubeObject>;
    return batch;
  }

  /** Folds in the next snapshot's changes; false when the batch is frozen or would outgrow `maxPending`. */
  tryAppend(snapshot: Snapshot<T>): boolean {
    const open = this.open;
    // The bound is checked before folding, counting every change as a new key: a batch never holds
    // what one of its members' own queues would have had to evict.
    if (open === undefined || open.size + snapshot.changes.length > this.maxPending) return false;
    for (const change of snapshot.changes) {
      const notification = toNotification(change);
      if (notification !== undefined) open.push(notification);
    }
    this.snapshots.push(snapshot);
    return true;
  }

  /** The notification at `index` of the coalesced list (freezing the batch), or undefined past its end. */
  at(index: number): HandlerNotification<T> | undefined {
    this.freeze();
    return this.frozen[index];
  }

  /** True when a member at `index` has delivered everything (only once frozen: an open batch may grow). */
  finishedAt(index: number): boolean {
    return this.open === undefined && index >= this.frozen.length;
  }

  /** What a member at `index` has not delivered yet, in order (freezing the batch). */
  rest(index: number): HandlerNotification<T>[] {
    this.freeze();
    return this.frozen.slice(index);
  }

  private freeze(): void {
    const open = this.open;
    if (open === undefined) return;
    this.open = undefined;
    if (openBatch === (this as SharedBatch<KubeObject>)) {
      openBase = undefined;
      openBatch = undefined;
    }
    for (let notification = open.shift(); notification !== undefined; notification = open.shift()) this.frozen.push(notification);
  }
}

/**
 * Whether handlers share batches. Not part of the public API: the tests turn it off to check that
 * sharing delivers exactly what each handler's own queue would have.
 */
export const batchSharing = { enabled: true };

/**
 * The batch still open to new members, and the snapshot it started after. One slot is enough:
 * every handler of an informer receives a snapshot in the same synchronous emission, so they all
 * look for the batch right after the first of them made it. (A WeakMap from snapshots to batches
 * was tried: a long-lived map whose tables point at young batches keeps them, and everything they
 * hold, alive through scavenges; one handler, 1k cached, 64 MB young generation: 62 µs/event
 * against 36 µs.) The slot is cleared when its batch freezes, so it never holds a batch for long.
 */
let openBase: Snapshot<KubeObject> | undefined;
let openBatch: SharedBatch<KubeObject> | undefined;

/**
 * The last update change turned into a notification, and that notification. Handlers not sharing
 * a batch convert the same change objects in turn (one snapshot reaches each subscription in
 * order), so this saves one allocation per handler and watch event. Notifications are never
 * mutated (queues fold into new ones), so sharing one is safe. It holds one change at most, until
 * the next update of any informer replaces it.
 */
let lastUpdateChange: Change<KubeObject> | undefined;
let lastUpdateNotification: HandlerNotification<KubeObject> | undefined;

/** The notification for a cache change, or undefined for an update that changed nothing (a resync). */
export function toNotification<T extends KubeObject>(change: Change<T>): HandlerNotification<T> | undefined {
  switch (change.type) {
    case 'add':
      return change;
    case 'delete':
      return change;
    case 'update': {
      const before = change.oldObject.metadata.resourceVersion;
      if (before !== undefined && before === change.object.metadata.resourceVersion) return undefined;
      if (lastUpdateChange === change) return lastUpdateNotification as HandlerNotification<T>;
      const notification: HandlerNotification<T> = { type: 'update', key: change.key, oldObject: change.oldObject, object: change.object, isResync: false };
      lastUpdateChange = change;
      lastUpdateNotification = notification;
      return notification;
    }
  }
}
