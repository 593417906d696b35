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
 * Takes a key from {@link objectKey} apart.
 *
 * @throws TypeError when the key has more than one '/' or an empty part, as client-go rejects it.
 */
export function splitKey(key: string): SplitKey {
  const slash = key.indexOf('/');
  if (slash < 0) {
    if (key === '') throw new TypeError('unexpected key format: empty key');
    return { namespace: '', name: key };
  }
  const namespace = key.slice(0, slash);
  const name = key.slice(slash + 1);
  if (namespace === '' || name === '' || name.includes('/')) throw new TypeError(`unexpected key format: ${JSON.stringify(key)}`);
  return { namespace, name };
}

function safeExcerpt(value: unknown): string | undefined {
  try {
    return JSON.stringify(value)?.slice(0, 200);
  } catch {
    return undefined;
  }
}
