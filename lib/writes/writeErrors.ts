import { StatusError, type Status } from '../base/errors';

/**
 * The typed errors of writes: a write that lost a race with another writer ({@link ConflictError})
 * and a server-side apply that would take fields another manager owns ({@link ApplyConflictError}).
 * Both are `StatusError`s (`kind: 'status'`, the HTTP `code`, the server's `status`), so code that
 * already reads those keeps working.
 */

/**
 * A write that lost a race: the object changed on the server since the version it was derived
 * from. The API server says so with a 409 Conflict (a stale `metadata.resourceVersion` in an
 * update or a merge patch), or with a 422 for a JSON Patch whose leading `test` of
 * `/metadata/resourceVersion` (or any later operation) no longer applies: apiserver
 * `endpoints/handlers/patch.go` answers every JSON Patch that does not apply with
 * `NewGenericServerResponse(422, ...)`, "the server rejected our request due to an error in our
 * request", without naming the operation.
 *
 * The remedy is to read again and redo the edit: throw it from a reconcile and the work queue
 * retries the key, by which time the cache holds the newer version.
 *
 * ## Example
 * ```ts
 * import { reconcile } from 'rx-informer/workqueue';
 * import { ConflictError } from 'rx-informer/writes';
 *
 * keys$.pipe(reconcile(writeLabel)).subscribe((event) => {
 *   // A lost race is routine: the queue retries it from the newer cached version.
 *   if (event.type === 'failed' && !(event.error instanceof ConflictError)) console.error(event.key, event.error);
 * });
 * ```
 */
export class ConflictError extends StatusError {
  constructor(status: Status, retryAfterSeconds?: number, request?: string) {
    super(status, retryAfterSeconds, request);
  }
}

/** How a conflicting manager last wrote its fields: a server-side apply, or any other write. */
export type ManagedFieldsOperation = 'Apply' | 'Update';

/**
 * One field a server-side apply would take from another manager, as the API server names it in
 * the Status of its 409 (apimachinery `managedfields/internal/conflict.go`).
 */
export interface ApplyConflict {
  /** The manager that owns the field: its `fieldManager` (`kubectl`, `my-controller`, `kube-controller-manager`). */
  readonly manager: string;
  /**
   * `Apply` when the manager owns the field through server-side apply; `Update` when through any
   * other write (create, update, patch), whose message adds ` using <apiVersion>`.
   */
  readonly operation: ManagedFieldsOperation;
  /** The API version the manager wrote with, for an `Update` (`apps/v1`). */
  readonly apiVersion: string | undefined;
  /** When the manager wrote, when the server said (`2024-05-01T10:00:00Z`). */
  readonly time: string | undefined;
  /** The subresource the manager wrote through (`status`, `scale`), when not the object itself. */
  readonly subresource: string | undefined;
  /**
   * The field, as structured-merge-diff prints a path: `.spec.replicas`,
   * `.spec.containers[name="app"].image`, `.metadata.labels.tier`.
   */
  readonly field: string;
}

/**
 * A server-side apply that would change fields another field manager owns, answered 409 Conflict
 * because it was not forced. `conflicts` lists each field with its owner, read from the Status's
 * `details.causes` (type `FieldManagerConflict`, message `conflict with "<manager>"[ with
 * subresource "<name>"][ using <apiVersion>[ at <time>]]`, field the path). The message is the
 * server's: `Apply failed with 1 conflict: conflict with "kubectl" using apps/v1: .spec.replicas`.
 *
 * Retrying does not help: either stop setting the fields (leave them to their owner), or take
 * them with `force: true`, which controllers usually do for the fields they own by design.
 *
 * ## Example
 * ```ts
 * import { lastValueFrom } from 'rxjs';
 * import { deployments } from 'rx-informer';
 * import { apply, ApplyConflictError } from 'rx-informer/writes';
 *
 * try {
 *   await lastValueFrom(apply(kubeConfig, deployments, { metadata: { name: 'web', namespace: 'shop' }, spec: { replicas: 3 } }, { fieldManager: 'scaler' }));
 * } catch (error) {
 *   if (!(error instanceof ApplyConflictError)) throw error;
 *   error.managers;  // ['kubectl']
 *   error.conflicts; // [{ manager: 'kubectl', operation: 'Update', apiVersion: 'apps/v1', field: '.spec.replicas', ... }]
 * }
 * ```
 */
export class ApplyConflictError extends StatusError {
  /** Each conflicting field with its owner, in the server's order. */
  readonly conflicts: readonly ApplyConflict[];

  constructor(status: Status, retryAfterSeconds?: number, request?: string) {
    super(status, retryAfterSeconds, request);
    this.conflicts = applyConflictsOf(status);
  }

  /** The managers that own conflicting fields, each once, in the order they first appear. */
  get managers(): readonly string[] {
    return [...new Set(this.conflicts.map((conflict) => conflict.manager))];
  }
}

/** `metav1.CauseTypeFieldManagerConflict`. */
const FIELD_MANAGER_CONFLICT = 'FieldManagerConflict';

/** The message's grammar: `printManager` in conflict.go, a Go `%q` string then optional clauses. */
const CONFLICT_MESSAGE = /^conflict with ("(?:[^"\\]|\\.)*")(?: with subresource ("(?:[^"\\]|\\.)*"))?(?: using (\S+)(?: at (\S+))?)?$/;

/**
 * The conflicts a 409 Status names, from its `details.causes` of type `FieldManagerConflict`. A
 * cause whose message has another shape keeps the whole message as its manager (nothing is lost
 * to a server that words it differently).
 *
 * ## Example
 * ```ts
 * applyConflictsOf({ kind: 'Status', apiVersion: 'v1', code: 409, reason: 'Conflict', details: { causes: [
 *   { reason: 'FieldManagerConflict', message: 'conflict with "kubectl" using apps/v1', field: '.spec.replicas' },
 * ] } });
 * // [{ manager: 'kubectl', operation: 'Update', apiVersion: 'apps/v1', time: undefined, subresource: undefined, field: '.spec.replicas' }]
 * ```
 */
export function applyConflictsOf(status: Status): ApplyConflict[] {
  const causes = status.details?.causes ?? [];
  // metav1.StatusCause serialises its type as `reason`.
  return causes.filter((cause) => cause.reason === FIELD_MANAGER_CONFLICT).map((cause) => parseConflict(cause.message ?? '', cause.field ?? ''));
}

function parseConflict(message: string, field: string): ApplyConflict {
  const match = CONFLICT_MESSAGE.exec(message);
  if (match === null) return { manager: message, operation: 'Apply', apiVersion: undefined, time: undefined, subresource: undefined, field };
  const [, manager = '""', subresource, apiVersion, time] = match;
  return {
    manager: unquote(manager),
    operation: apiVersion === undefined ? 'Apply' : 'Update',
    apiVersion,
    time,
    subresource: subresource === undefined ? undefined : unquote(subresource),
    field,
  };
}

/** A Go `%q` string: JSON's escapes cover what managers' names contain; anything else is kept as written. */
function unquote(quoted: string): string {
  try {
    return JSON.parse(quoted) as string;
  } catch {
    return quoted.slice(1, -1);
  }
}

/** What a write sent, which decides how a 409 or 422 reads. */
export type WriteKind = 'json-patch' | 'merge-patch' | 'apply' | 'other';

/** `NewGenericServerResponse(422, ...)`'s message: what a JSON Patch that does not apply gets. */
const PATCH_DOES_NOT_APPLY = 'the server rejected our request due to an error in our request';

/**
 * The typed error for a failed write: a 409 naming field managers is an
 * {@link ApplyConflictError}; any other 409 Conflict (not AlreadyExists), and the 422 a JSON Patch
 * gets when one of its operations (the leading `test` of the resourceVersion first) no longer
 * applies, a {@link ConflictError}; anything else is returned as it is.
 *
 * ## Example
 * ```ts
 * const error = writeErrorOf(statusErrorFromResponse(422, {}, body, 'PATCH /api/v1/namespaces/a/pods/b'), 'json-patch');
 * error instanceof ConflictError; // true when body is the generic 422 of a JSON Patch that does not apply
 * ```
 */
export function writeErrorOf(error: StatusError, kind: WriteKind): StatusError {
  const { status, retryAfterSeconds, request } = error;
  if (error.code === 409 && status.details?.causes?.some((cause) => cause.reason === FIELD_MANAGER_CONFLICT) === true) {
    return new ApplyConflictError(status, retryAfterSeconds, request);
  }
  if (error.code === 409 && error.reason === 'Conflict') return new ConflictError(status, retryAfterSeconds, request);
  if (error.code === 422 && kind === 'json-patch' && status.message === PATCH_DOES_NOT_APPLY && (status.details?.causes ?? []).length === 0) {
    return new ConflictError(status, retryAfterSeconds, request);
  }
  return error;
}
