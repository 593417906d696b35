import type { KubeObject } from '../base/object';
import type { BucketHandover } from '../reflector/delta';

/**
 * A change the indexer applied to the cache: what `changes$` emits and handlers receive.
 * Unlike a delta, a change knows the old state.
 */
export type Change<T extends KubeObject = KubeObject> = AddChange<T> | UpdateChange<T> | DeleteChange<T>;

/** An object entered the cache. */
export interface AddChange<T extends KubeObject = KubeObject> {
  readonly type: 'add';
  readonly key: string;
  readonly object: T;
  /** True when the object came with the informer's first list (client-go's isInInitialList). */
  readonly isInInitialList: boolean;
  /** Set when the object arrived because a sharded informer acquired its bucket. */
  readonly handover?: HandoverMark;
  /** Set when the object arrived because its namespace joined an informer's set of namespaces. */
  readonly namespaceSet?: NamespaceSetMark;
}

/** An object in the cache changed. */
export interface UpdateChange<T extends KubeObject = KubeObject> {
  readonly type: 'update';
  readonly key: string;
  readonly oldObject: T;
  readonly object: T;
  /**
   * True when nothing changed: a relist found the object at the resourceVersion already cached
   * (client-go delivers these as resync updates). The indexer sets it on every update it makes;
   * it is optional so that changes built elsewhere need not. `handle()` passes an update with
   * `isResync: false` to handlers as it is, instead of copying it into a notification.
   */
  readonly isResync?: boolean;
}

/** An object left the cache. */
export interface DeleteChange<T extends KubeObject = KubeObject> {
  readonly type: 'delete';
  readonly key: string;
  /** The last state the cache held (or the state the server sent with DELETED). */
  readonly object: T;
  /**
   * True when the deletion was inferred from a relist (the object was missing from it), so the
   * object's final state is unknown: client-go's DeletedFinalStateUnknown.
   */
  readonly finalStateUnknown: boolean;
  /** Set when the object left because a sharded informer released its bucket. */
  readonly handover?: HandoverMark;
  /**
   * Set when the object left because its namespace left an informer's set of namespaces: it was
   * not deleted, the informer stopped watching it.
   */
  readonly namespaceSet?: NamespaceSetMark;
}

/**
 * True when an update carries nothing new: both objects have the same, non-empty resourceVersion
 * (a relist that found the object as cached). Internal: the indexer sets `isResync` from it.
 */
export function sameResourceVersion(oldObject: KubeObject, object: KubeObject): boolean {
  const version = oldObject.metadata.resourceVersion;
  return version !== undefined && version !== '' && version === object.metadata.resourceVersion;
}

/**
 * On an add or a delete that a bucket handover caused: an add of an object in a bucket acquired
 * (`acquired`), a delete of one in a bucket released (`released`). A delete in a bucket still
 * served carries none: the object was deleted while the informer relisted.
 */
export interface HandoverMark {
  readonly type: 'acquired' | 'released';
  /** The object's bucket. */
  readonly bucket: number;
  /** The whole handover this object moved in. */
  readonly handover: BucketHandover;
}

/**
 * On an add or a delete that a change of an informer's set of namespaces caused: an add of an
 * object of a namespace that joined the set (`added`), a delete of one of a namespace that left it
 * (`removed`). A delete without it is an object deleted (or missing from a relist).
 */
export interface NamespaceSetMark {
  /** `added`: the namespace joined the set (on adds); `removed`: it left the set (on deletes). */
  readonly type: 'added' | 'removed';
  /** The namespace that joined or left the set. */
  readonly namespace: string;
}
