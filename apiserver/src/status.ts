import type { Status } from 'rx-informer';
import type { Resource } from 'rx-informer';
import type { KubeObject } from 'rx-informer';

/**
 * `metav1.Status` bodies with the messages the real API server writes (PROTOCOL.md B.7, B.8), so
 * clients tested against the loopback server meet the same text they meet in production.
 */

type StatusDetails = NonNullable<Status['details']>;
type StatusCause = NonNullable<StatusDetails['causes']>[number];

/** A failure of the in-process store or of a request, carrying the Status the server answers with. */
export class ApiStatusError extends Error {
  readonly status: Status;

  constructor(status: Status) {
    super(status.message ?? `${status.code ?? 500} ${status.reason ?? 'Unknown'}`);
    this.name = 'ApiStatusError';
    this.status = status;
  }

  /** The HTTP code of the Status. */
  get code(): number {
    return this.status.code ?? 500;
  }
}

/** A Failure Status, shaped as `ErrorToAPIStatus` writes it (empty `metadata`, details only when set). */
export function failure(code: number, reason: string, message: string, details?: StatusDetails, metadata: Status['metadata'] = {}): Status {
  const status: Status = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata,
    status: 'Failure',
    message,
    reason,
    ...(details === undefined ? {} : { details }),
    code,
  };
  return status;
}

/** `deployments.apps`, or `pods` for the core group, as `GroupResource.String()` prints it. */
export function qualifiedResource(resource: Resource<KubeObject>): string {
  return resource.group === '' ? resource.plural : `${resource.plural}.${resource.group}`;
}

function resourceDetails(resource: Resource<KubeObject>, name?: string): StatusDetails {
  return {
    ...(name === undefined || name === '' ? {} : { name }),
    ...(resource.group === '' ? {} : { group: resource.group }),
    kind: resource.plural,
  };
}

/** 400 BadRequest, `NewBadRequest(message)`. */
export function badRequest(message: string): Status {
  return failure(400, 'BadRequest', message);
}

/** 401 as the authentication filter writes it. */
export function unauthorized(): Status {
  return failure(401, 'Unauthorized', 'Unauthorized');
}

/** 403 Forbidden with the RBAC authorizer's sentence. */
export function forbidden(resource: Resource<KubeObject>, user: string, verb: string, namespace: string | undefined, name?: string): Status {
  const scope = namespace === undefined || namespace === '' ? 'at the cluster scope' : `in the namespace "${namespace}"`;
  const message =
    `${qualifiedResource(resource)}${name === undefined ? '' : ` "${name}"`} is forbidden: ` +
    `User "${user}" cannot ${verb} resource "${resource.plural}" in API group "${resource.group}" ${scope}`;
  return failure(403, 'Forbidden', message, resourceDetails(resource, name));
}

/** 404 for an object that does not exist. */
export function notFound(resource: Resource<KubeObject>, name: string): Status {
  return failure(404, 'NotFound', `${qualifiedResource(resource)} "${name}" not found`, resourceDetails(resource, name));
}

/** 404 for a path the server does not serve. */
export function pathNotFound(): Status {
  return failure(404, 'NotFound', 'the server could not find the requested resource', {});
}

/** 405 for a verb the loopback server does not implement (patch, deletecollection, ...). */
export function methodNotAllowed(method: string): Status {
  return failure(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource (${method})`, {});
}

/** 409 AlreadyExists on create. */
export function alreadyExists(resource: Resource<KubeObject>, name: string): Status {
  return failure(409, 'AlreadyExists', `${qualifiedResource(resource)} "${name}" already exists`, resourceDetails(resource, name));
}

/** 409 Conflict on an update with a stale resourceVersion. */
export function conflict(resource: Resource<KubeObject>, name: string): Status {
  return failure(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualifiedResource(resource)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    resourceDetails(resource, name),
  );
}

/** 410 Expired, `NewResourceExpired(message)`. */
export function expired(message: string, continueToken?: string): Status {
  return failure(410, 'Expired', message, undefined, continueToken === undefined ? {} : { continue: continueToken });
}

/** The watch-cache message for a watch or exact list from before the history window (B.6). */
export function tooOldResourceVersion(requested: number, oldestAvailable: number): Status {
  return expired(`too old resource version: ${requested} (${oldestAvailable})`);
}

/** B.4: a continue token whose snapshot is gone and that cannot be continued. */
export const CONTINUE_EXPIRED_MESSAGE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.';

/**
 * B.4: a continue token whose resourceVersion etcd has compacted (`etcd3/errors.go`
 * `handleCompactedErrorForPaging`); the 410 carries a new token that continues at the latest
 * resourceVersion.
 */
export const CONTINUE_INCONSISTENT_MESSAGE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, ' +
  'or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an ' +
  'inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

/** B.4: an exact list whose resourceVersion is gone. */
export const LIST_TOO_OLD_MESSAGE = 'The resourceVersion for the provided list is too old.';

/** One `field.Error` of an Invalid Status. */
export interface FieldError {
  /** `FieldValueForbidden`, `FieldValueNotSupported`, `FieldValueRequired`, `FieldValueInvalid`, `FieldValueTooLong`. */
  readonly type: 'FieldValueForbidden' | 'FieldValueNotSupported' | 'FieldValueRequired' | 'FieldValueInvalid' | 'FieldValueTooLong';
  readonly field: string;
  /** The error body without the field: `Forbidden: ...`. */
  readonly body: string;
}

/** `field.Forbidden(path, detail)`. */
export function forbiddenField(field: string, detail: string): FieldError {
  return { type: 'FieldValueForbidden', field, body: `Forbidden: ${detail}` };
}

/** `field.NotSupported(path, value, supported)`. */
export function notSupportedField(field: string, value: string, supported: readonly string[]): FieldError {
  return {
    type: 'FieldValueNotSupported',
    field,
    body: `Unsupported value: ${JSON.stringify(value)}: supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}`,
  };
}

/** `field.Required(path, detail)`; an empty detail leaves the body at `Required value`. */
export function requiredField(field: string, detail: string): FieldError {
  return { type: 'FieldValueRequired', field, body: detail === '' ? 'Required value' : `Required value: ${detail}` };
}

/** `field.Invalid(path, value, detail)`, the value already printed as Go prints it (`%q` for a string). */
export function invalidField(field: string, printedValue: string, detail: string): FieldError {
  return { type: 'FieldValueInvalid', field, body: `Invalid value: ${printedValue}: ${detail}` };
}

/** `field.TooLong(path, value, max)`. */
export function tooLongField(field: string, max: number): FieldError {
  return { type: 'FieldValueTooLong', field, body: `Too long: may not be more than ${max} bytes` };
}

/**
 * 422 Invalid, `NewInvalid(groupKind, name, errors)`: the message joins the errors as
 * `errors.ToAggregate()` prints them (bare for one, bracketed for several).
 */
export function invalid(kind: string, group: string, name: string, errors: readonly FieldError[]): Status {
  const qualifiedKind = group === '' ? kind : `${kind}.${group}`;
  const texts = errors.map((e) => `${e.field}: ${e.body}`);
  const aggregate = texts.length === 1 ? texts[0]! : `[${texts.join(', ')}]`;
  const causes: StatusCause[] = errors.map((e) => ({ reason: e.type, message: e.body, field: e.field }));
  return failure(422, 'Invalid', `${qualifiedKind} "${name}" is invalid: ${aggregate}`, {
    ...(name === '' ? {} : { name }),
    group,
    kind,
    causes,
  });
}

/** 422 for invalid list or watch options (`ListOptions.meta.k8s.io`). */
export function invalidListOptions(errors: readonly FieldError[]): Status {
  return invalid('ListOptions', 'meta.k8s.io', '', errors);
}

/**
 * 504 "Too large resource version" (apiserver `storage/errors.go`), cause ResourceVersionTooLarge.
 * The watch cache asks for a retry after 1 s; etcd's refusal (`retryAfterSeconds` 0) carries none.
 */
export function tooLargeResourceVersion(requested: number | string, current: number | string, retryAfterSeconds = 1): Status {
  return failure(504, 'Timeout', `Timeout: Too large resource version: ${requested}, current: ${current}`, {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
    ...(retryAfterSeconds > 0 ? { retryAfterSeconds } : {}),
  });
}

/**
 * What an Exact list at a revision etcd has not reached got before 1.34: etcd's error, which the
 * API server does not recognise, so `ErrorToAPIStatus` makes it a 500 with no reason.
 */
export function etcdFutureRevision(): Status {
  // No reason: StatusReasonUnknown is "", which `omitempty` leaves out of the JSON.
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'etcdserver: mvcc: required revision is a future revision', code: 500 };
}

const REASONS: Readonly<Record<number, readonly [reason: string, message: string]>> = {
  400: ['BadRequest', 'the server rejected our request for an unknown reason'],
  401: ['Unauthorized', 'Unauthorized'],
  403: ['Forbidden', 'forbidden'],
  404: ['NotFound', 'the server could not find the requested resource'],
  405: ['MethodNotAllowed', 'the server does not allow this method on the requested resource'],
  409: ['Conflict', 'the server reported a conflict'],
  410: ['Expired', 'The resourceVersion for the provided list is too old.'],
  422: ['Invalid', 'the server rejected our request due to an error in our request'],
  429: ['TooManyRequests', 'the server has received too many requests and has asked us to try again later'],
  500: ['InternalError', 'Internal error occurred: injected fault'],
  503: ['ServiceUnavailable', 'the server is currently unable to handle the request'],
  504: ['Timeout', 'Timeout: request did not complete within the allotted timeout'],
};

/** A Status for an injected fault: reason and message default from the code, as the constructors give them. */
export function statusForCode(code: number, reason?: string, message?: string, retryAfterSeconds?: number): Status {
  const [defaultReason, defaultMessage] = REASONS[code] ?? ['Unknown', `an error on the server ("unknown") has prevented the request from succeeding`];
  const details: StatusDetails = {
    ...(code === 500 && message === undefined ? { causes: [{ message: 'injected fault' }] } : {}),
    ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
  };
  return failure(code, reason ?? defaultReason, message ?? defaultMessage, Object.keys(details).length === 0 && code !== 504 ? undefined : details);
}
