import { sameResourceVersion, type AddChange, type Change, type DeleteChange, type UpdateChange } from '../store/change';
import type { KubeObject } from '../base/object';

/** A call `handle()` makes on a handler: an update, with the state the handler saw last. */
export interface UpdateNotification<T extends KubeObject = KubeObject> extends UpdateChange<T> {
  /** Nothing changed: this is the handler's periodic resync re-delivering a cached object. */
  readonly isResync: boolean;
}

/**
 * One handler call, as queued and as reported with errors: an add or a delete has the shape of
 * the cache's change (on an add, `isInInitialList` means the object was in the cache when this
 * handler started, or came with the informer's first list; on a delete, `finalStateUnknown` means
 * the deletion was inferred, by a relist or by this handler catching up after it fell behind); an
 * update carries the state the handler saw last.
 */
export type HandlerNotification<T extends KubeObject = KubeObject> = AddChange<T> | UpdateNotification<T> | DeleteChange<T>;

/**
 * A handler fell so far behind that more than `maxPending` distinct objects had a change it had
 * not yet received. Reported once each time it happens (through `onError`, an `'error'` event and
 * the logger), with the first change that did not fit as the notification.
 *
 * Nothing is lost: from then on the handler stops queuing changes one by one, and when it is ready
 * for more it receives the difference between what it has seen and the cache as it is then (adds,
 * updates from the state it saw, and deletes with `finalStateUnknown`), until it has caught up.
 * Its memory stays bounded by `maxPending` entries and the one older snapshot it compares against;
 * what it loses is the intermediate states of objects that changed several times meanwhile.
 */
export class HandlerQueueOverflowError extends Error {
  /** The bound that was reached. */
  readonly maxPending: number;
  /** The first change that did not fit; the catch-up delivers where it led. */
  readonly notification: HandlerNotification<KubeObject>;

  constructor(notification: HandlerNotification<KubeObject>, maxPending: number) {
    super(`handler fell more than ${maxPending} objects behind (at the ${notification.type} of ${notification.key}): it stopped queuing and will catch up from the difference with the cache`);
    this.name = 'HandlerQueueOverflowError';
    this.notification = notification;
    this.maxPending = maxPending;
  }
}

/**
 * The notification for a cache change, or undefined for an update that changed nothing (a relist
 * that found the object at the resourceVersion already cached: the handler's own resync timer, not
 * the relist, decides when it sees unchanged objects again). Changes are passed as they are, so
 * that handlers of one informer share them; only an update made elsewhere than the indexer (with
 * no `isResync` of its own) is copied into a notification.
 */
export function toNotification<T extends KubeObject>(change: Change<T>): HandlerNotification<T> | undefined {
  if (change.type !== 'update' || change.isResync === false) return change as HandlerNotification<T>;
  if (isUnchanged(change)) return undefined;
  return { type: 'update', key: change.key, oldObject: change.oldObject, object: change.object, isResync: false };
}

/** An update whose resourceVersion did not change: a relist resync, not a change. */
export function isUnchanged(change: UpdateChange<KubeObject>): boolean {
  return change.isResync ?? sameResourceVersion(change.oldObject, change.object);
}
