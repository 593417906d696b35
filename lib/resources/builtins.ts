import type { KubeObject } from '../store/object';
import { defineResource, type Resource } from './resource';

/**
 * Typed descriptors for the built-in resources most informers watch. Object types are the wire
 * JSON, loose where the API is large: narrow them in your own code as needed.
 */

/** A core/v1 Pod, as the wire JSON. */
export interface Pod extends KubeObject {
  readonly spec?: {
    readonly nodeName?: string;
    readonly containers?: readonly { readonly name: string; readonly image?: string }[];
    readonly [field: string]: unknown;
  };
  readonly status?: {
    readonly phase?: 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';
    readonly podIP?: string;
    readonly [field: string]: unknown;
  };
}

/** A core/v1 ConfigMap. */
export interface ConfigMap extends KubeObject {
  readonly data?: Readonly<Record<string, string>>;
  readonly binaryData?: Readonly<Record<string, string>>;
}

/** A core/v1 Secret. Values are base64. */
export interface Secret extends KubeObject {
  readonly type?: string;
  readonly data?: Readonly<Record<string, string>>;
}

/** A core/v1 Namespace. */
export interface Namespace extends KubeObject {
  readonly status?: { readonly phase?: 'Active' | 'Terminating' };
}

/** A core/v1 Service. */
export interface Service extends KubeObject {
  readonly spec?: { readonly selector?: Readonly<Record<string, string>>; readonly [field: string]: unknown };
}

/** A core/v1 Node. */
export interface Node extends KubeObject {
  readonly spec?: { readonly unschedulable?: boolean; readonly [field: string]: unknown };
  readonly status?: { readonly [field: string]: unknown };
}

/** An apps/v1 Deployment. */
export interface Deployment extends KubeObject {
  readonly spec?: {
    readonly replicas?: number;
    readonly selector?: { readonly matchLabels?: Readonly<Record<string, string>> };
    readonly template?: { readonly metadata?: { readonly labels?: Readonly<Record<string, string>> }; readonly spec?: unknown };
    readonly [field: string]: unknown;
  };
  readonly status?: { readonly replicas?: number; readonly readyReplicas?: number; readonly observedGeneration?: number };
}

/**
 * A coordination.k8s.io/v1 Lease: a named lock with a holder and an expiry, what leader election
 * (`leaderElection`) and node heartbeats use. Times are MicroTime strings
 * (`2006-01-02T15:04:05.000000Z`).
 */
export interface Lease extends KubeObject {
  readonly spec?: {
    /** Who holds it; '' or absent when nobody does (a holder releasing it writes ''). */
    readonly holderIdentity?: string;
    /** How long (s) others must see it unchanged before they may take it over. */
    readonly leaseDurationSeconds?: number;
    readonly acquireTime?: string;
    readonly renewTime?: string;
    /** How many times it changed holders. */
    readonly leaseTransitions?: number;
    /** Coordinated leader election only (KEP-4355). */
    readonly strategy?: string;
    /** Coordinated leader election only: the holder asked to take over. */
    readonly preferredHolder?: string;
  };
}

/** core/v1 pods (namespaced). */
export const pods: Resource<Pod> = defineResource<Pod>({ group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true });
/** core/v1 configmaps (namespaced). */
export const configMaps: Resource<ConfigMap> = defineResource<ConfigMap>({ group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true });
/** core/v1 secrets (namespaced). Consider a transform that drops `data` if you only need metadata. */
export const secrets: Resource<Secret> = defineResource<Secret>({ group: '', version: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true });
/** core/v1 services (namespaced). */
export const services: Resource<Service> = defineResource<Service>({ group: '', version: 'v1', plural: 'services', kind: 'Service', namespaced: true });
/** core/v1 namespaces (cluster-scoped). */
export const namespaces: Resource<Namespace> = defineResource<Namespace>({ group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false });
/** core/v1 nodes (cluster-scoped). */
export const nodes: Resource<Node> = defineResource<Node>({ group: '', version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false });
/** apps/v1 deployments (namespaced). */
export const deployments: Resource<Deployment> = defineResource<Deployment>({ group: 'apps', version: 'v1', plural: 'deployments', kind: 'Deployment', namespaced: true });
/** coordination.k8s.io/v1 leases (namespaced). */
export const leases: Resource<Lease> = defineResource<Lease>({ group: 'coordination.k8s.io', version: 'v1', plural: 'leases', kind: 'Lease', namespaced: true });
