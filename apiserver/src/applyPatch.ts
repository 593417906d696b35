import type { KubeObject } from 'rx-informer';
import { parse } from 'yaml';
import type { ServedResource } from './builtinResources';
import type { ClusterStoreImpl } from './clusterStore';
import type { StoredObject } from './history';
import { ApplyConflicts, applyFields, FieldManagerError } from './managedFields';
import { checkWrite, storeCreate, storeUpdate } from './objectWrites';
import { fieldManagerScope } from './registryStrategy';
import { ApiStatusError, badRequest, failure, notFound, qualifiedResource } from './status';

/**
 * Server-side apply (`PATCH` with `Content-Type: application/apply-patch+yaml`), as the API
 * server's patch handler runs it (apiserver `endpoints/handlers/patch.go`, `applyPatcher`): the body
 * is a YAML (or JSON) object, decoded as `sigs.k8s.io/yaml` decodes it; the field manager merges it
 * into the live object, or into an empty one when the name is missing, which the apply then
 * creates (201; not through `/status`, whose REST refuses creates); then the name and namespace
 * checks of every patch, and the kind's strategy.
 *
 * The YAML parser is the `yaml` package in YAML 1.1 mode, as the Go decoder (`yes`, `on` are
 * booleans), with timestamps left as strings, as go-yaml leaves them when decoding into an
 * interface.
 */

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** go-yaml v2 decodes timestamps into an interface{} as strings. */
const YAML_OPTIONS = {
  version: '1.1',
  customTags: (tags: readonly unknown[]) => tags.filter((tag) => (tag as { tag?: string }).tag !== 'tag:yaml.org,2002:timestamp'),
} as const;

/** What Go calls a decoded JSON value's type in an unmarshal error. */
function goTypeName(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'boolean') return 'bool';
  return typeof value;
}

/**
 * The applied object of a request body.
 * @throws ApiStatusError 400 `error decoding YAML: ...` for a body that is not one YAML object
 */
export function decodeApplyBody(body: Buffer): Json {
  let decoded: unknown;
  try {
    decoded = parse(body.toString('utf8'), YAML_OPTIONS as never);
  } catch (error) {
    throw new ApiStatusError(badRequest(`error decoding YAML: ${error instanceof Error ? error.message : String(error)}`));
  }
  if (decoded === null || decoded === undefined) return {};
  if (!isObject(decoded)) {
    throw new ApiStatusError(
      badRequest(`error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal ${goTypeName(decoded)} into Go value of type map[string]interface {}`),
    );
  }
  return JSON.parse(JSON.stringify(decoded)) as Json;
}

/** The field manager's errors as the API server answers them. */
function asStatusError(error: unknown): unknown {
  if (error instanceof ApplyConflicts) {
    // errors.NewApplyConflict: reason Conflict, one cause per field, no name or kind.
    return new ApiStatusError(failure(409, 'Conflict', error.message, { causes: error.causes() }));
  }
  if (error instanceof FieldManagerError) {
    if (error.kind === 'badRequest') return new ApiStatusError(badRequest(error.message));
    // A plain Go error: ErrorToAPIStatus makes it a 500 without a reason.
    return new ApiStatusError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: error.message, code: 500 });
  }
  return error;
}

/** `rest.WipeObjectMetaSystemFields`, for an apply that creates. */
function wipeSystemFields(object: Json): Json {
  const metadata = isObject(object['metadata']) ? object['metadata'] : {};
  const { creationTimestamp: _c, uid: _u, deletionTimestamp: _d, deletionGracePeriodSeconds: _g, selfLink: _s, ...rest } = metadata;
  return { ...object, metadata: rest };
}

/**
 * A server-side apply of `body` by `manager` to `name` (or its status).
 * @throws ApiStatusError 400 for a body that is not an object of the resource's kind or renames it, 404 through `/status` to a missing name, 409 for conflicts or a stale resourceVersion, 500 for lists the types refuse
 */
export function applyPatch(
  store: ClusterStoreImpl,
  served: ServedResource,
  namespace: string | undefined,
  name: string,
  body: Buffer,
  subresource: 'status' | undefined,
  manager: string,
  force: boolean,
): { readonly entry: StoredObject; readonly created: boolean } {
  const resource = served.resource;
  const existing = store.entry(resource, namespace, name);
  const config = decodeApplyBody(body);
  const scope = fieldManagerScope(served, subresource);
  const run = (live: KubeObject | undefined): { readonly object: Json; readonly unchanged: boolean } => {
    try {
      return applyFields(scope, live as unknown as Json | undefined, config, manager, force);
    } catch (error) {
      throw asStatusError(error);
    }
  };
  if (existing === undefined) {
    // The status REST's Update passes forceAllowCreate false: no create through /status.
    if (subresource !== undefined) throw new ApiStatusError(notFound(resource, name));
    const uid = isObject(config['metadata']) ? config['metadata']['uid'] : undefined;
    if (typeof uid === 'string' && uid !== '') {
      throw new ApiStatusError(
        failure(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedResource(resource)} "${name}": uid mismatch: the provided object specified uid ${uid}, and no existing object was found`, {
          name,
          ...(resource.group === '' ? {} : { group: resource.group }),
          kind: resource.plural,
        }),
      );
    }
    const object = checkWrite(resource, namespace, name, wipeSystemFields(run(undefined).object) as unknown as KubeObject);
    return { entry: storeCreate(store, served, object), created: true };
  }
  const { object, unchanged } = run(existing.object);
  const checked = checkWrite(resource, namespace, name, object as unknown as KubeObject);
  // Nothing changed, not even an owner: the API server's storage writes nothing either.
  if (unchanged) return { entry: existing, created: false };
  return { entry: storeUpdate(store, served, subresource, existing.object, checked), created: false };
}
