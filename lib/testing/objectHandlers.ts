import type { IncomingMessage } from 'node:http';
import type { KubeObject } from '../store/object';
import type { Resource } from '../resources/resource';
import type { ClusterStoreImpl } from './clusterStore';
import type { StoredObject } from './history';
import { ApiStatusError, badRequest, failure, notFound } from './status';

/**
 * Single-object verbs over HTTP (get, create, update, delete, and the status subresource), with
 * the API server's checks on the body: JSON only, an object with metadata, name and namespace
 * agreeing with the URL.
 */

/** The API server's default body limit (3 MiB). */
const MAX_BODY_BYTES = 3 * 1024 * 1024;

/** Reads a request body. @throws ApiStatusError 413 when it is too large */
export function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    request.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        failed = true;
        reject(new ApiStatusError(failure(413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728')));
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => {
      if (!failed) resolve(Buffer.concat(chunks));
    });
    request.on('error', (error) => {
      if (!failed) reject(error);
    });
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Parses a JSON body into an object for `resource`, checking what the API server checks.
 * @throws ApiStatusError 415 for non-JSON media types, 400 for malformed or mismatched bodies
 */
export function parseObjectBody(resource: Resource<KubeObject>, contentType: string | undefined, body: Buffer): KubeObject {
  const mediaType = (contentType ?? 'application/json').split(';')[0]!.trim().toLowerCase();
  if (mediaType !== 'application/json' && mediaType !== '' && mediaType !== '*/*') {
    throw new ApiStatusError(
      failure(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json`),
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new ApiStatusError(badRequest(`the object provided is unrecognized (must be of type ${resource.kind}): couldn't get version/kind; json parse error: ${detail}`));
  }
  if (!isRecord(parsed)) {
    throw new ApiStatusError(badRequest(`the object provided is unrecognized (must be of type ${resource.kind}): not a JSON object`));
  }
  if (parsed.kind !== undefined && parsed.kind !== resource.kind) {
    throw new ApiStatusError(badRequest(`the kind of the provided object (${String(parsed.kind)}) does not match the resource (${resource.kind})`));
  }
  const metadata = parsed.metadata ?? {};
  if (!isRecord(metadata)) throw new ApiStatusError(badRequest('metadata must be an object'));
  for (const field of ['name', 'namespace', 'generateName', 'resourceVersion'] as const) {
    if (metadata[field] !== undefined && typeof metadata[field] !== 'string') throw new ApiStatusError(badRequest(`metadata.${field} must be a string`));
  }
  for (const field of ['labels', 'annotations'] as const) {
    const map = metadata[field];
    if (map !== undefined && (!isRecord(map) || Object.values(map).some((v) => typeof v !== 'string'))) {
      throw new ApiStatusError(badRequest(`metadata.${field} must map strings to strings`));
    }
  }
  return { ...parsed, metadata: { ...metadata, name: typeof metadata.name === 'string' ? metadata.name : '' } } as KubeObject;
}

/** The patch types the loopback server applies; strategic merge is approximated by a JSON merge patch. */
const MERGE_PATCH_TYPES = new Set(['application/merge-patch+json', 'application/strategic-merge-patch+json']);

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

/**
 * PATCH of one object (or its status) with a JSON merge patch. Strategic merge patches are applied
 * as merge patches too: lists are replaced whole rather than merged by key.
 * @throws ApiStatusError 415 for JSON Patch and apply patches, 400 for a malformed patch, 404, 409
 */
export function patchObject(
  store: ClusterStoreImpl,
  resource: Resource<KubeObject>,
  namespace: string | undefined,
  name: string,
  contentType: string | undefined,
  body: Buffer,
  subresource: 'status' | undefined,
): StoredObject {
  const mediaType = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (!MERGE_PATCH_TYPES.has(mediaType)) {
    throw new ApiStatusError(
      failure(
        415,
        'UnsupportedMediaType',
        `the body of the request was in an unknown format - accepted media types include: application/merge-patch+json, application/strategic-merge-patch+json`,
      ),
    );
  }
  let patch: unknown;
  try {
    patch = JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw new ApiStatusError(badRequest(`error decoding patch: ${error instanceof Error ? error.message : String(error)}`));
  }
  if (!isRecord(patch)) throw new ApiStatusError(badRequest('error decoding patch: a merge patch must be a JSON object'));
  const existing = store.get(resource, namespace, name);
  if (existing === undefined) throw new ApiStatusError(notFound(resource, name));
  const patched = mergePatch(existing, patch) as KubeObject;
  if (!isRecord(patched.metadata) || (patched.metadata.name !== undefined && patched.metadata.name !== name)) {
    throw new ApiStatusError(badRequest('the patch may not change metadata.name'));
  }
  if (subresource === 'status') {
    const status = (patched as { status?: unknown }).status;
    return store.updateEntry(resource, { ...existing, status, metadata: { ...existing.metadata, resourceVersion: patched.metadata.resourceVersion } } as KubeObject);
  }
  return store.updateEntry(resource, { ...patched, metadata: { ...patched.metadata, name, ...(resource.namespaced ? { namespace: existing.metadata.namespace } : {}) } });
}

function withNamespace(resource: Resource<KubeObject>, object: KubeObject, pathNamespace: string | undefined): KubeObject {
  if (!resource.namespaced) return object;
  const bodyNamespace = object.metadata.namespace;
  if (pathNamespace !== undefined && bodyNamespace !== undefined && bodyNamespace !== '' && bodyNamespace !== pathNamespace) {
    throw new ApiStatusError(badRequest('the namespace of the provided object does not match the namespace sent on the request'));
  }
  const namespace = pathNamespace ?? (bodyNamespace || 'default');
  return { ...object, metadata: { ...object.metadata, namespace } };
}

/** GET of one object: its stored entry, whose cached bytes are the answer. @throws ApiStatusError 404 */
export function getObject(store: ClusterStoreImpl, resource: Resource<KubeObject>, namespace: string | undefined, name: string): StoredObject {
  const entry = store.entry(resource, namespace, name);
  if (entry === undefined) throw new ApiStatusError(notFound(resource, name));
  return entry;
}

/** POST to a collection. */
export function createObject(store: ClusterStoreImpl, resource: Resource<KubeObject>, namespace: string | undefined, object: KubeObject): StoredObject {
  return store.createEntry(resource, withNamespace(resource, object, namespace));
}

/** PUT of one object, or of its `status` subresource (which changes only `.status`). */
export function updateObject(
  store: ClusterStoreImpl,
  resource: Resource<KubeObject>,
  namespace: string | undefined,
  name: string,
  object: KubeObject,
  subresource: 'status' | undefined,
): StoredObject {
  if (object.metadata.name !== '' && object.metadata.name !== name) {
    throw new ApiStatusError(badRequest(`the name of the object (${object.metadata.name}) does not match the name on the URL (${name})`));
  }
  const named = withNamespace(resource, { ...object, metadata: { ...object.metadata, name } }, namespace);
  if (subresource === undefined) return store.updateEntry(resource, named);
  const existing = store.get(resource, named.metadata.namespace, name);
  if (existing === undefined) throw new ApiStatusError(notFound(resource, name));
  const status = (object as { status?: unknown }).status;
  const resourceVersion = object.metadata.resourceVersion;
  return store.updateEntry(resource, {
    ...existing,
    status,
    metadata: { ...existing.metadata, resourceVersion: resourceVersion === undefined || resourceVersion === '' ? existing.metadata.resourceVersion : resourceVersion },
  } as KubeObject);
}
