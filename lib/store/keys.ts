/**
 * Cache keys, as client-go's MetaNamespaceKeyFunc and SplitMetaNamespaceKey make them:
 * `namespace/name` for namespaced objects, `name` for cluster-scoped ones.
 */
import { ProtocolError } from '../base/errors';
import type { KubeObject } from '../base/object';

/** A key taken apart. `namespace` is '' for a cluster-scoped object. */
export interface SplitKey {
  readonly namespace: string;
  readonly name: string;
}

/**
 * The cache key of an object: `namespace/name`, or `name` when it has no namespace.
 *
 * @throws ProtocolError (`missing-metadata`) when the object has no `metadata.name` string: such an
 * object cannot have come from a well-behaved API server and cannot be cached.
 */
export function objectKey(object: KubeObject): string {
  const metadata: unknown = (object as { metadata?: unknown } | null | undefined)?.metadata;
  const name: unknown = typeof metadata === 'object' && metadata !== null ? (metadata as { name?: unknown }).name : undefined;
  if (typeof name !== 'string' || name === '') {
    throw new ProtocolError('missing-metadata', 'object has no metadata.name, so it has no cache key', safeExcerpt(object));
  }
  const namespace: unknown = (metadata as { namespace?: unknown }).namespace;
  return typeof namespace === 'string' && namespace !== '' ? `${namespace}/${name}` : name;
}

/**
 * Takes a key from {@link objectKey} apart, accepting and rejecting exactly what client-go's
 * `SplitMetaNamespaceKey` does: a key without '/' is a cluster-scoped name, a key with one '/'
 * is `namespace/name`, a key with more is an error. Like client-go it checks nothing else, so
 * `''`, `'/name'` and `'namespace/'` split into empty parts instead of failing: a key that
 * {@link objectKey} made never has an empty name, so check the parts when the key came from
 * elsewhere.
 *
 * @throws TypeError when the key has more than one '/' (client-go's "unexpected key format").
 */
export function splitKey(key: string): SplitKey {
  const slash = key.indexOf('/');
  if (slash < 0) return { namespace: '', name: key };
  if (key.indexOf('/', slash + 1) >= 0) throw new TypeError(`unexpected key format: ${JSON.stringify(key)}`);
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

function safeExcerpt(value: unknown): string | undefined {
  try {
    return JSON.stringify(value)?.slice(0, 200);
  } catch {
    return undefined;
  }
}
