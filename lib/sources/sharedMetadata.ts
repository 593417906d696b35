import type { ObjectMeta } from '../base/object';

/**
 * Sharing equal `labels` and `ownerReferences` between the objects of one metadata-only cache.
 *
 * Why: once spec and status are gone, these two are most of what a metadata-only object costs,
 * and they repeat: every pod of a ReplicaSet carries the same owner reference (two 36-character
 * uids and a name that V8's `JSON.parse` copies for each pod) and usually the same labels. The
 * owner reference alone is a large part of a metadata-only object's heap; shared, it costs a
 * pointer (docs/PERFORMANCE.md, "Metadata-only informers").
 *
 * Costs and guarantees:
 * - One `JSON.stringify` of the two fields per object (a few hundred bytes), one Map lookup each.
 * - Shared values are frozen (a cached object must not be mutated anyway; frozen, a mutation
 *   throws instead of changing every object that shares the value), and deep-equal to what arrived.
 * - The table is bounded: past `capacity` distinct values it starts afresh, so owners that come
 *   and go (a Deployment's ReplicaSets over rollouts) cannot grow it without bound. Values already
 *   shared stay shared; the memory of a dropped entry is freed with the last object using it.
 */
export class SharedMetadata {
  private table = new Map<string, object>();

  /** @param capacity distinct label sets and owner lists kept before the table starts afresh. */
  constructor(private readonly capacity = 10_000) {}

  /**
   * The metadata with its labels and owner references replaced by equal ones shared with other
   * objects; `metadata` itself when both were shared already (or absent). Leaves `metadata`'s
   * values as they are, but freezes the labels and owner references it keeps for sharing.
   */
  share(metadata: ObjectMeta): ObjectMeta {
    const labels = metadata.labels === undefined ? undefined : this.intern('l', metadata.labels);
    const ownerReferences = metadata.ownerReferences === undefined ? undefined : this.intern('o', metadata.ownerReferences);
    if (labels === metadata.labels && ownerReferences === metadata.ownerReferences) return metadata;
    const shared: { -readonly [K in keyof ObjectMeta]: ObjectMeta[K] } = { ...metadata };
    if (labels !== undefined) shared.labels = labels;
    if (ownerReferences !== undefined) shared.ownerReferences = ownerReferences;
    return shared;
  }

  private intern<V extends object>(field: string, value: V): V {
    const key = field + JSON.stringify(value);
    const found = this.table.get(key);
    if (found !== undefined) return found as V;
    if (this.table.size >= this.capacity) this.table = new Map();
    const frozen = deepFreeze(value);
    this.table.set(key, frozen);
    return frozen;
  }
}

function deepFreeze<V extends object>(value: V): V {
  for (const child of Object.values(value)) if (typeof child === 'object' && child !== null && !Object.isFrozen(child)) deepFreeze(child as object);
  return Object.freeze(value);
}
