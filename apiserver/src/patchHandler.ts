import type { Resource } from 'rx-informer';
import type { KubeObject } from 'rx-informer';
import { applyPatch } from './applyPatch';
import { isCustomResource, type ServedResource } from './builtinResources';
import type { ClusterStoreImpl } from './clusterStore';
import { jsonOf, type StoredObject } from './history';
import { applyJsonPatch, decodeJsonPatch, JsonPatchDecodeError, JsonPatchError } from './jsonPatch';
import { checkWrite, checkWriteOptions, updateWithManager } from './objectWrites';
import { queryBoolean } from './listOptions';
import { ApiStatusError, badRequest, failure, notFound } from './status';
import { strategicMergePatch, StrategicMergePatchError } from './strategicMergePatch';

/**
 * PATCH of one object or its status, as the API server's patch handler answers it (apiserver
 * `endpoints/handlers/patch.go`): the patch types each kind of resource accepts, the order of its
 * checks (type, JSON syntax, existence, application, name), and its error Statuses.
 *
 * | Content-Type | built-in resources | custom resources |
 * |---|---|---|
 * | `application/json-patch+json` | RFC 6902 (`jsonPatch.ts`) | same |
 * | `application/merge-patch+json` | RFC 7386 | same |
 * | `application/strategic-merge-patch+json` | `strategicMergePatch.ts` | 415, as the API server |
 * | `application/apply-patch+yaml` (server-side apply) | `applyPatch.ts` | same |
 * | anything else (`application/apply-patch+cbor` too: its gate is off) | 415 from the router, without a reason | 415 listing the accepted types |
 *
 * Every patch but apply records its field manager as an `Update` (`managedFields.ts`); options are
 * checked first (`force` only with apply, which needs `fieldManager`: 422).
 */

const JSON_PATCH = 'application/json-patch+json';
const MERGE_PATCH = 'application/merge-patch+json';
const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';
const APPLY_PATCH = 'application/apply-patch+yaml';

/** What the API server accepts for custom resources (apiextensions-apiserver's patch handler, CBOR gate off). */
const CUSTOM_RESOURCE_PATCH_TYPES = [JSON_PATCH, MERGE_PATCH, APPLY_PATCH];

/** `apimachinery` `MaxJSONPatchOperations`. */
const MAX_JSON_PATCH_OPERATIONS = 10_000;

/** `negotiation.NewUnsupportedMediaTypeError(accepted)`. */
export function unsupportedMediaType(accepted: readonly string[], more = ''): ApiStatusError {
  return new ApiStatusError(failure(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}${more}`));
}

/**
 * What the API server's router (go-restful, whose PATCH routes list the patch types they consume)
 * answers to any other type: `NewGenericServerResponse(415, ...)`, which has no reason for 415.
 */
function routerUnsupportedMediaType(): ApiStatusError {
  return new ApiStatusError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'the server responded with the status code 415 but did not return more information',
    details: {},
    code: 415,
  });
}

/** `errors.NewGenericServerResponse(422, ...)`: a JSON Patch that does not apply; the reason stays in the server's log. */
function patchDoesNotApply(): ApiStatusError {
  return new ApiStatusError(failure(422, 'Invalid', 'the server rejected our request due to an error in our request', {}));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** RFC 7386: objects merge key by key, null deletes, anything else (arrays included) replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return patch;
  const result: Record<string, unknown> = isRecord(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

/** The Content-Type up to its first parameter, compared as the patch handler compares it (exactly). */
function patchTypeOf(contentType: string | undefined): string {
  const value = contentType ?? '';
  const semicolon = value.indexOf(';');
  return semicolon > 0 ? value.slice(0, semicolon) : value;
}

/** Refuses the patch types the API server does not take for `resource`. */
function checkPatchType(resource: Resource<KubeObject>, patchType: string): void {
  if (isCustomResource(resource)) {
    if (!CUSTOM_RESOURCE_PATCH_TYPES.includes(patchType)) throw unsupportedMediaType(CUSTOM_RESOURCE_PATCH_TYPES);
  } else if (patchType !== JSON_PATCH && patchType !== MERGE_PATCH && patchType !== STRATEGIC_MERGE_PATCH && patchType !== APPLY_PATCH) {
    throw routerUnsupportedMediaType();
  }
}

/** The patched object: the patch applied to the stored object's wire JSON. */
function patchedObject(resource: Resource<KubeObject>, patchType: string, existing: StoredObject, patch: unknown): KubeObject {
  switch (patchType) {
    case JSON_PATCH: {
      let operations;
      try {
        operations = decodeJsonPatch(patch);
      } catch (error) {
        if (error instanceof JsonPatchDecodeError) throw new ApiStatusError(badRequest(error.message));
        throw error;
      }
      if (operations.length > MAX_JSON_PATCH_OPERATIONS) {
        throw new ApiStatusError(
          failure(413, 'RequestEntityTooLarge', `Request entity too large: The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${operations.length}`),
        );
      }
      const document = JSON.parse(jsonOf(existing)) as Record<string, unknown>;
      try {
        applyJsonPatch(document, operations);
      } catch (error) {
        if (error instanceof JsonPatchError) throw patchDoesNotApply();
        throw error;
      }
      return document as unknown as KubeObject;
    }
    case MERGE_PATCH:
      // jsonpatch.MergePatch: a patch that is not an object is ErrBadJSONPatch.
      if (!isRecord(patch)) throw new ApiStatusError(badRequest('Invalid JSON Patch'));
      return mergePatch(existing.object, patch) as KubeObject;
    default:
      try {
        return strategicMergePatch(resource, existing.object, patch);
      } catch (error) {
        if (!(error instanceof StrategicMergePatchError)) throw error;
        // interpretStrategicMergePatchError: format errors are 400s, content errors a generic 422,
        // and anything else a Status-less error that ErrorToAPIStatus makes a 500 without a reason.
        if (error.code === 400) throw new ApiStatusError(badRequest(error.message));
        if (error.code === 422) throw patchDoesNotApply();
        throw new ApiStatusError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: error.message, code: 500 });
      }
  }
}

/** Who patches and how, from the request: the query's options and the User-Agent's field manager. */
export interface PatchRequest {
  readonly contentType: string | undefined;
  readonly query: Readonly<Record<string, string>>;
  /** `managerOrUserAgent` of the request, what a non-apply patch records. */
  readonly manager: string;
}

/**
 * PATCH of one object or of its `status` subresource (whose strategy keeps everything the kind's
 * status endpoint does not change). A `metadata.resourceVersion` left in the patched object is a
 * precondition (409 when stale). Server-side apply may create the object (`created`).
 * @throws ApiStatusError 415 for a patch type the resource does not take, 422 for bad options, 400 for a malformed patch or a renamed object, 404, 409, 413, 422
 */
export function patchObject(
  store: ClusterStoreImpl,
  served: ServedResource,
  namespace: string | undefined,
  name: string,
  body: Buffer,
  subresource: 'status' | undefined,
  request: PatchRequest,
): { readonly entry: StoredObject; readonly created: boolean } {
  const resource = served.resource;
  const patchType = patchTypeOf(request.contentType);
  checkPatchType(resource, patchType);
  checkWriteOptions('PatchOptions', request.query, patchType === APPLY_PATCH);
  if (patchType === APPLY_PATCH) {
    const force = request.query['force'] !== undefined && queryBoolean(request.query['force']);
    return applyPatch(store, served, namespace, name, body, subresource, request.query['fieldManager']!, force);
  }
  let patch: unknown;
  try {
    patch = JSON.parse(body.toString('utf8'));
  } catch {
    throw new ApiStatusError(badRequest('invalid JSON patch'));
  }
  const existing = store.entry(resource, namespace, name);
  if (existing === undefined) throw new ApiStatusError(notFound(resource, name));
  const patched = checkWrite(resource, existing.object.metadata.namespace, name, patchedObject(resource, patchType, existing, patch));
  return { entry: updateWithManager(store, served, subresource, existing.object, patched, request.manager), created: false };
}
