import type { KubeObject } from '../base/object';
import type { HandoverMark, NamespaceSetMark } from '../store/change';
import type { HandlerNotification } from './notifications';

/**
 * Callbacks for the changes of one informer, client-go's ResourceEventHandler. Each may return a
 * Promise: the next call to the same handler waits for it to settle (other handlers never wait).
 * A callback that throws or rejects is reported through `onError` and the `'error'` event; the
 * next notification is delivered as usual. The `info` argument is the notification being delivered,
 * possibly shared with the informer's other handlers: read it, but do not modify or keep it.
 */
export interface ResourceHandlers<T extends KubeObject = KubeObject> {
  /**
   * An object entered the cache (`isInInitialList` for the initial list or a late handler's
   * catch-up); `handover` when a sharded informer acquired its bucket; `namespaceSet` when its
   * namespace joined the informer's set of namespaces.
   */
  onAdd?: (object: T, info: { readonly key: string; readonly isInInitialList: boolean; readonly handover?: HandoverMark; readonly namespaceSet?: NamespaceSetMark }) => unknown;
  /** An object changed; `isResync` when this handler's resync timer re-delivers it unchanged. */
  onUpdate?: (oldObject: T, object: T, info: { readonly key: string; readonly isResync: boolean }) => unknown;
  /**
   * An object left the cache; `finalStateUnknown` when the deletion was inferred (by a relist, or
   * by this handler's catch-up after it fell behind), so `object` is the last state seen;
   * `handover` when a sharded informer released its bucket, `namespaceSet` when its namespace left
   * the informer's set of namespaces (a catch-up's deletes carry neither).
   */
  onDelete?: (object: T, info: { readonly key: string; readonly finalStateUnknown: boolean; readonly handover?: HandoverMark; readonly namespaceSet?: NamespaceSetMark }) => unknown;
  /** The handler has processed every object of the initial list (client-go's per-handler HasSynced). */
  onSynced?: () => void;
  /**
   * A callback failed, or the handler fell more than `maxPending` objects behind (a
   * `HandlerQueueOverflowError`: nothing is lost). Errors thrown here are logged and dropped.
   */
  onError?: (error: unknown, notification: HandlerNotification<T>) => void;
}

/** What `handle()` emits: progress and failures of the handler, never the objects themselves. */
export type HandlerEvent<T extends KubeObject = KubeObject> =
  /** The handler has processed the initial list. Emitted once. */
  | { readonly type: 'synced' }
  /** A callback threw or rejected (or the handler fell behind: `error` is a `HandlerQueueOverflowError`). */
  | { readonly type: 'error'; readonly error: unknown; readonly notification: HandlerNotification<T> };
