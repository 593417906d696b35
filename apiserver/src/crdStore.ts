import { customResourceDefinitions, type CustomResourceDefinition, type KubeObject, type Resource } from 'rx-informer';
import { ClusterStoreImpl } from './clusterStore';
import { CRD_CLEANUP_FINALIZER, crdForCreate, isCustomResourceDefinitions, withCondition } from './crdServing';
import type { StoredObject } from './history';

/**
 * The loopback server's store, with the registry strategy of CustomResourceDefinitions
 * (apiextensions `registry/customresourcedefinition`) on top of the generic one:
 *
 * 1. Create checks and defaults the CRD and clears its status (`crdForCreate`).
 * 2. The first DELETE of a CRD adds the `customresourcecleanup.apiextensions.k8s.io` finalizer and
 *    the condition `Terminating` "InstanceDeletionPending" before marking it deleted, so that the
 *    CRD stays until its finalizer (`crdControllers.ts`) has deleted its objects (`etcd.go`,
 *    `REST.Delete`). The API server does both in one write; here they are two (a MODIFIED with the
 *    finalizer, then the MODIFIED of the mark), the generic delete doing the second.
 *
 * Everything else, and every other resource, is the generic store's.
 */
export class ClusterStoreWithCrds extends ClusterStoreImpl {
  override createEntry(resource: Resource<KubeObject>, object: KubeObject): StoredObject {
    return super.createEntry(resource, isCustomResourceDefinitions(resource) ? crdForCreate(object) : object);
  }

  override delete<T extends KubeObject>(resource: Resource<T>, namespace: string | undefined, name: string): T {
    if (isCustomResourceDefinitions(resource)) {
      const crd = this.get(customResourceDefinitions, undefined, name);
      if (crd !== undefined && crd.metadata.deletionTimestamp === undefined && !(crd.metadata.finalizers ?? []).includes(CRD_CLEANUP_FINALIZER)) {
        const pending = withCondition(
          crd,
          { type: 'Terminating', status: 'True', reason: 'InstanceDeletionPending', message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon' },
          new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
        );
        this.update<CustomResourceDefinition>(customResourceDefinitions, { ...pending, metadata: { ...pending.metadata, finalizers: [...(crd.metadata.finalizers ?? []), CRD_CLEANUP_FINALIZER] } });
      }
    }
    return super.delete(resource, namespace, name);
  }
}
