import type { IncomingMessage } from 'node:http';
import type { KubeObject } from 'rx-informer';
import type { Resource } from 'rx-informer';
import type { ServedResource } from './builtinResources';
import type { ClusterStoreImpl } from './clusterStore';
import type { StoredObject } from './history';
import { createWithManager, updateWithManager } from './objectWrites';
import { unsupportedMediaType } from './patchHandler';
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

/** Protobuf, what kubectl's typed generators (`kubectl create configmap ...`) send. */
const PROTOBUF = 'application/vnd.kubernetes.protobuf';

/**
 * How to send JSON instead, appended to the API server's 415 message: the real API server also
 * reads YAML, protobuf and (behind a gate) CBOR, the loopback server only JSON.
 */
function jsonOnlyAdvice(mediaType: string): string {
  const kubectl =
    mediaType === PROTOBUF
      ? '; kubectl sends protobuf from its typed generators (kubectl create configmap, secret, deployment ...): send JSON instead with ' +
        '`kubectl create -f FILE.json --validate=false`, or generate it: `kubectl create configmap NAME --from-literal=KEY=VALUE --dry-run=client -o json | kubectl create -f - --validate=false`'
      : '';
  return ` (the loopback API server reads JSON only, not ${mediaType}${kubectl})`;
}

/**
 * Parses a JSON body into an object for `resource`, checking what the API server checks.
 * @throws ApiStatusError 415 for non-JSON media types, 400 for malformed or mismatched bodies
 */
export function parseObjectBody(resource: Resource<KubeObject>, contentType: string | undefined, body: Buffer): KubeObject {
  const mediaType = (contentType ?? 'application/json').split(';')[0]!.trim().toLowerCase();
  if (mediaType !== 'application/json' && mediaType !== '' && mediaType !== '*/*') throw unsupportedMediaType(['application/json'], jsonOnlyAdvice(mediaType));
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

/** POST to a collection, by `manager` (what `metadata.managedFields` records). */
export function createObject(store: ClusterStoreImpl, served: ServedResource, namespace: string | undefined, object: KubeObject, manager: string): StoredObject {
  return createWithManager(store, served, withNamespace(served.resource, object, namespace), manager);
}

/**
 * PUT of one object, or of its `status` subresource, by `manager`: the kind's strategy decides
 * what each changes (`registryStrategy.ts`).
 */
export function updateObject(
  store: ClusterStoreImpl,
  served: ServedResource,
  namespace: string | undefined,
  name: string,
  object: KubeObject,
  subresource: 'status' | undefined,
  manager: string,
): StoredObject {
  const resource = served.resource;
  if (object.metadata.name !== '' && object.metadata.name !== name) {
    throw new ApiStatusError(badRequest(`the name of the object (${object.metadata.name}) does not match the name on the URL (${name})`));
  }
  const named = withNamespace(resource, { ...object, metadata: { ...object.metadata, name } }, namespace);
  const existing = store.get(resource, named.metadata.namespace, name);
  if (existing === undefined) throw new ApiStatusError(notFound(resource, name));
  return updateWithManager(store, served, subresource, existing, named, manager);
}
