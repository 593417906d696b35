/**
 * `metav1.Condition` and apimachinery's `meta.SetStatusCondition` (`api/meta/conditions.go`) as
 * pure functions: they never change the array they are given; they return a new one, or the same
 * one when nothing changed, so that an edit that sets a condition to what it already says writes
 * nothing.
 */

/** `metav1.ConditionStatus`. */
export type ConditionStatus = 'True' | 'False' | 'Unknown';

/**
 * A `metav1.Condition`, as the wire has it: one per `type` in a status's `conditions`.
 * kubernetes-types' `Condition` fits (its `status` is a string).
 */
export interface Condition {
  /** CamelCase: `Ready`, `Available`, `Progressing`, or `example.com/Degraded`. */
  readonly type: string;
  /** `True`, `False` or `Unknown`. */
  readonly status: string;
  /** The `metadata.generation` the condition was set from: a reader compares it with the current one to tell a stale condition. */
  readonly observedGeneration?: number;
  /** When `status` last changed, RFC 3339 in seconds (`2024-05-01T10:00:00Z`). */
  readonly lastTransitionTime: string;
  /** CamelCase, for machines: `MinimumReplicasAvailable`. */
  readonly reason: string;
  /** For people; may be empty. */
  readonly message: string;
}

/** What {@link setCondition} is given: a condition whose `lastTransitionTime` it fills in. */
export interface ConditionUpdate {
  /** The condition's type: the one condition of that type is set. */
  readonly type: string;
  /** `True`, `False` or `Unknown`. */
  readonly status: ConditionStatus;
  /** The `metadata.generation` this condition was computed from; left out, the condition has none. */
  readonly observedGeneration?: number;
  /** Used when the status changes (or the condition is new); default `now`. */
  readonly lastTransitionTime?: string;
  /** CamelCase, for machines. */
  readonly reason: string;
  /** For people. Default ''. */
  readonly message?: string;
}

/** Options of {@link setCondition}. */
export interface SetConditionOptions {
  /** The clock, for `lastTransitionTime`. Default the current time. */
  readonly now?: Date;
}

/**
 * Sets one condition, with `meta.SetStatusCondition`'s rules:
 *
 * 1. One condition per `type`: a new type is appended, with `lastTransitionTime` from the update
 *    or `now`.
 * 2. For an existing type, `lastTransitionTime` changes only when `status` does (to the update's,
 *    or `now`); `reason`, `message` and `observedGeneration` always take the update's.
 * 3. Pure: returns a new array (the other conditions are the same objects), or `conditions`
 *    itself when nothing changed; `undefined` counts as no conditions.
 *
 * Times are RFC 3339 in whole seconds, as `metav1.Time` writes them.
 *
 * ## Example
 * ```ts
 * import { setCondition } from 'rx-informer/writes';
 *
 * const ready = setCondition([], { type: 'Ready', status: 'True', reason: 'Available', observedGeneration: 4 }, { now: new Date('2024-05-01T10:00:00Z') });
 * // [{ type: 'Ready', status: 'True', observedGeneration: 4, lastTransitionTime: '2024-05-01T10:00:00Z', reason: 'Available', message: '' }]
 * setCondition(ready, { type: 'Ready', status: 'True', reason: 'Available', observedGeneration: 4 }) === ready; // true: nothing changed
 * ```
 *
 * @param conditions the current conditions (a status's `conditions`), left untouched.
 * @param update the condition to set.
 * @param options the clock.
 * @returns the conditions with `update` set.
 */
export function setCondition<C extends Condition>(conditions: readonly C[] | undefined, update: ConditionUpdate, options: SetConditionOptions = {}): (C | Condition)[] {
  const current = conditions ?? [];
  const index = current.findIndex((condition) => condition.type === update.type);
  const message = update.message ?? '';
  if (index < 0) {
    const added: Condition = {
      type: update.type,
      status: update.status,
      ...(update.observedGeneration === undefined ? {} : { observedGeneration: update.observedGeneration }),
      lastTransitionTime: update.lastTransitionTime ?? metaTime(options.now ?? new Date()),
      reason: update.reason,
      message,
    };
    return [...current, added];
  }
  const existing = current[index]!;
  const statusChanged = existing.status !== update.status;
  if (!statusChanged && existing.reason === update.reason && existing.message === message && existing.observedGeneration === update.observedGeneration) {
    return current as (C | Condition)[];
  }
  const { observedGeneration: _previous, ...rest } = existing;
  const changed: C = {
    ...rest,
    status: update.status,
    ...(update.observedGeneration === undefined ? {} : { observedGeneration: update.observedGeneration }),
    lastTransitionTime: statusChanged ? (update.lastTransitionTime ?? metaTime(options.now ?? new Date())) : existing.lastTransitionTime,
    reason: update.reason,
    message,
  } as C;
  return current.map((condition, at) => (at === index ? changed : condition));
}

/**
 * The condition of a type, or undefined (`meta.FindStatusCondition`).
 *
 * ## Example
 * ```ts
 * findCondition(deployment.status?.conditions, 'Available')?.status; // 'True'
 * ```
 */
export function findCondition<C extends Condition>(conditions: readonly C[] | undefined, type: string): C | undefined {
  return conditions?.find((condition) => condition.type === type);
}

/**
 * Whether the condition of a type is present with status `True` (`meta.IsStatusConditionTrue`).
 *
 * ## Example
 * ```ts
 * if (!isConditionTrue(widget.status?.conditions, 'Ready')) return requeueAfter(5_000);
 * ```
 */
export function isConditionTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findCondition(conditions, type)?.status === 'True';
}

/**
 * The conditions without the one of `type` (`meta.RemoveStatusCondition`): a new array, or
 * `conditions` itself when there was none of that type.
 *
 * ## Example
 * ```ts
 * removeCondition(widget.status?.conditions, 'Progressing');
 * ```
 */
export function removeCondition<C extends Condition>(conditions: readonly C[] | undefined, type: string): C[] {
  const current = conditions ?? [];
  if (!current.some((condition) => condition.type === type)) return current as C[];
  return current.filter((condition) => condition.type !== type);
}

/** `metav1.Time` on the wire: RFC 3339 in UTC, whole seconds. */
function metaTime(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}
