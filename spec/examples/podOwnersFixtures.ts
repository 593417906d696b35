import { pods, type Pod } from '../../lib/resources/builtins';
import type { ApiServer } from '../../apiserver/src';

/** A pod of `namespace`, controlled by the ReplicaSet `owner` when one is named. */
export function ownedPod(namespace: string, name: string, owner?: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      namespace,
      name,
      ...(owner === undefined ? {} : { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: owner, uid: `uid-${owner}`, controller: true }] }),
    },
    spec: { containers: [{ name: 'c', image: 'nginx' }] },
  };
}

/** Namespace `a`'s pods before the example starts: two of web-rs, one of db-rs, one without an owner. */
export function createOwnedPods(store: ApiServer['store']): void {
  store.create(pods, ownedPod('a', 'web-1', 'web-rs'));
  store.create(pods, ownedPod('a', 'web-2', 'web-rs'));
  store.create(pods, ownedPod('a', 'db-1', 'db-rs'));
  store.create(pods, ownedPod('a', 'loner'));
}

/** What podOwners prints once synced over {@link createOwnedPods}'s pods. */
export const SYNCED_OWNER_LINES: readonly string[] = ['synced: 4 pods, 2 owners', '  (none): 1', '  ReplicaSet/db-rs: 1', '  ReplicaSet/web-rs: 2'];
