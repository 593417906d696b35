/**
 * The shape of a Kubernetes object as it travels on the wire: plain JSON, string timestamps.
 * rx-informer never turns objects into client-node model classes.
 */

/** An entry of `metadata.ownerReferences`. */
export interface OwnerReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  readonly controller?: boolean;
  readonly blockOwnerDeletion?: boolean;
}

/** The part of `metadata` that rx-informer reads. Other fields pass through untouched. */
export interface ObjectMeta {
  readonly name: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly generation?: number;
  readonly creationTimestamp?: string;
  readonly deletionTimestamp?: string;
  readonly generateName?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly ownerReferences?: readonly OwnerReference[];
  readonly finalizers?: readonly string[];
  readonly managedFields?: readonly unknown[];
}

/**
 * Any Kubernetes object. Generic APIs default to this type; give them your own
 * (`interface Pod extends KubeObject { spec: ...; status?: ... }`) for typed access.
 */
export interface KubeObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: ObjectMeta;
}
