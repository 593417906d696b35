import type * as admissionregistration from 'kubernetes-types/admissionregistration/v1.js';
import type * as apiextensions from 'kubernetes-types/apiextensions/v1.js';
import type * as apps from 'kubernetes-types/apps/v1.js';
import type * as autoscaling from 'kubernetes-types/autoscaling/v2.js';
import type * as batch from 'kubernetes-types/batch/v1.js';
import type * as certificates from 'kubernetes-types/certificates/v1.js';
import type * as coordination from 'kubernetes-types/coordination/v1.js';
import type * as core from 'kubernetes-types/core/v1.js';
import type * as discovery from 'kubernetes-types/discovery/v1.js';
import type * as eventsV1Api from 'kubernetes-types/events/v1.js';
import type * as flowcontrol from 'kubernetes-types/flowcontrol/v1.js';
import type * as networking from 'kubernetes-types/networking/v1.js';
import type * as node from 'kubernetes-types/node/v1.js';
import type * as policy from 'kubernetes-types/policy/v1.js';
import type * as rbac from 'kubernetes-types/rbac/v1.js';
import type * as scheduling from 'kubernetes-types/scheduling/v1.js';
import type * as storage from 'kubernetes-types/storage/v1.js';
import type { ObjectMeta } from 'kubernetes-types/meta/v1.js';
import { defineResource, type Resource } from './resource';

/*
 * A descriptor for every built-in resource that can be listed and watched, at its stable (GA)
 * version, in the Kubernetes API that kubernetes-types describes (1.30). The object types are
 * kubernetes-types' (generated from the API's own OpenAPI: strings where the wire has strings),
 * with `metadata.name` present, as on every served object. `builtin<T>` checks each descriptor's
 * `apiVersion` and `kind` against its type. Groups, plurals and scopes: client-go's generated
 * informers (`informers/generic.go`, `informers/<group>/<version>/*.go`). Not here:
 * `componentstatuses` (deprecated since 1.19; get and list only, no watch), alpha and beta versions, and what became GA
 * after 1.30 (e.g. networking.k8s.io/v1 `ipaddresses` and `servicecidrs`, resource.k8s.io/v1):
 * describe those with `defineResource`.
 *
 * The `.js` in each import is for ES module consumers: kubernetes-types has no `exports` map, and
 * Node's ES module resolution (which TypeScript models under `node16`/`nodenext`) adds no extension.
 */

/** kubernetes-types' `ObjectMeta` with `name` present, as on every object the API server serves. */
export type ServedObjectMeta = ObjectMeta & { readonly name: string };

/**
 * A kubernetes-types object as the API server serves it: `metadata` and its `name` present
 * (kubernetes-types marks both optional, as for objects being written).
 */
export type Served<T extends { readonly metadata?: ObjectMeta }> = T & { readonly metadata: ServedObjectMeta };

/**
 * A built-in descriptor whose `apiVersion` and `kind` are checked against the kubernetes-types
 * type, which declares both as literals (`apiVersion?: "apps/v1"; kind?: "Deployment"`).
 */
function builtin<T extends { readonly apiVersion?: string; readonly kind?: string; readonly metadata?: ObjectMeta }>(
  apiVersion: NonNullable<T['apiVersion']>,
  kind: NonNullable<T['kind']>,
  plural: string,
  scope: 'Namespaced' | 'Cluster',
): Resource<Served<T>> {
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  // WireObject<Served<T>> is Served<T> (it extends KubeObject), which TypeScript cannot see for a generic T.
  return defineResource<Served<T>>({ group, version: apiVersion.slice(slash + 1), plural, kind, namespaced: scope === 'Namespaced' }) as Resource<Served<T>>;
}

// core/v1

/** A core/v1 ConfigMap, as the API server sends it. */
export type ConfigMap = Served<core.ConfigMap>;
/** core/v1 configmaps (namespaced). */
export const configMaps: Resource<ConfigMap> = builtin<core.ConfigMap>('v1', 'ConfigMap', 'configmaps', 'Namespaced');

/** A core/v1 Endpoints, as the API server sends it. */
export type Endpoints = Served<core.Endpoints>;
/** core/v1 endpoints (namespaced). Superseded by `endpointSlices` (discovery.k8s.io/v1) for most uses. */
export const endpoints: Resource<Endpoints> = builtin<core.Endpoints>('v1', 'Endpoints', 'endpoints', 'Namespaced');

/** A core/v1 Event, as the API server sends it. */
export type Event = Served<core.Event>;
/** core/v1 events (namespaced). The core events that `kubectl get events` shows; `eventsV1` is the events.k8s.io/v1 view of the same objects. */
export const events: Resource<Event> = builtin<core.Event>('v1', 'Event', 'events', 'Namespaced');

/** A core/v1 LimitRange, as the API server sends it. */
export type LimitRange = Served<core.LimitRange>;
/** core/v1 limitranges (namespaced). */
export const limitRanges: Resource<LimitRange> = builtin<core.LimitRange>('v1', 'LimitRange', 'limitranges', 'Namespaced');

/** A core/v1 Namespace, as the API server sends it. */
export type Namespace = Served<core.Namespace>;
/** core/v1 namespaces (cluster-scoped). */
export const namespaces: Resource<Namespace> = builtin<core.Namespace>('v1', 'Namespace', 'namespaces', 'Cluster');

/** A core/v1 Node, as the API server sends it. */
export type Node = Served<core.Node>;
/** core/v1 nodes (cluster-scoped). */
export const nodes: Resource<Node> = builtin<core.Node>('v1', 'Node', 'nodes', 'Cluster');

/** A core/v1 PersistentVolume, as the API server sends it. */
export type PersistentVolume = Served<core.PersistentVolume>;
/** core/v1 persistentvolumes (cluster-scoped). */
export const persistentVolumes: Resource<PersistentVolume> = builtin<core.PersistentVolume>('v1', 'PersistentVolume', 'persistentvolumes', 'Cluster');

/** A core/v1 PersistentVolumeClaim, as the API server sends it. */
export type PersistentVolumeClaim = Served<core.PersistentVolumeClaim>;
/** core/v1 persistentvolumeclaims (namespaced). */
export const persistentVolumeClaims: Resource<PersistentVolumeClaim> = builtin<core.PersistentVolumeClaim>('v1', 'PersistentVolumeClaim', 'persistentvolumeclaims', 'Namespaced');

/** A core/v1 Pod, as the API server sends it. */
export type Pod = Served<core.Pod>;
/** core/v1 pods (namespaced). */
export const pods: Resource<Pod> = builtin<core.Pod>('v1', 'Pod', 'pods', 'Namespaced');

/** A core/v1 PodTemplate, as the API server sends it. */
export type PodTemplate = Served<core.PodTemplate>;
/** core/v1 podtemplates (namespaced). */
export const podTemplates: Resource<PodTemplate> = builtin<core.PodTemplate>('v1', 'PodTemplate', 'podtemplates', 'Namespaced');

/** A core/v1 ReplicationController, as the API server sends it. */
export type ReplicationController = Served<core.ReplicationController>;
/** core/v1 replicationcontrollers (namespaced). */
export const replicationControllers: Resource<ReplicationController> = builtin<core.ReplicationController>('v1', 'ReplicationController', 'replicationcontrollers', 'Namespaced');

/** A core/v1 ResourceQuota, as the API server sends it. */
export type ResourceQuota = Served<core.ResourceQuota>;
/** core/v1 resourcequotas (namespaced). */
export const resourceQuotas: Resource<ResourceQuota> = builtin<core.ResourceQuota>('v1', 'ResourceQuota', 'resourcequotas', 'Namespaced');

/** A core/v1 Secret, as the API server sends it. */
export type Secret = Served<core.Secret>;
/** core/v1 secrets (namespaced). Values are base64. Consider a transform that drops `data` if you only need metadata. */
export const secrets: Resource<Secret> = builtin<core.Secret>('v1', 'Secret', 'secrets', 'Namespaced');

/** A core/v1 Service, as the API server sends it. */
export type Service = Served<core.Service>;
/** core/v1 services (namespaced). */
export const services: Resource<Service> = builtin<core.Service>('v1', 'Service', 'services', 'Namespaced');

/** A core/v1 ServiceAccount, as the API server sends it. */
export type ServiceAccount = Served<core.ServiceAccount>;
/** core/v1 serviceaccounts (namespaced). */
export const serviceAccounts: Resource<ServiceAccount> = builtin<core.ServiceAccount>('v1', 'ServiceAccount', 'serviceaccounts', 'Namespaced');

// admissionregistration.k8s.io/v1

/** A admissionregistration.k8s.io/v1 MutatingWebhookConfiguration, as the API server sends it. */
export type MutatingWebhookConfiguration = Served<admissionregistration.MutatingWebhookConfiguration>;
/** admissionregistration.k8s.io/v1 mutatingwebhookconfigurations (cluster-scoped). */
export const mutatingWebhookConfigurations: Resource<MutatingWebhookConfiguration> = builtin<admissionregistration.MutatingWebhookConfiguration>('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration', 'mutatingwebhookconfigurations', 'Cluster');

/** A admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy, as the API server sends it. */
export type ValidatingAdmissionPolicy = Served<admissionregistration.ValidatingAdmissionPolicy>;
/** admissionregistration.k8s.io/v1 validatingadmissionpolicies (cluster-scoped). */
export const validatingAdmissionPolicies: Resource<ValidatingAdmissionPolicy> = builtin<admissionregistration.ValidatingAdmissionPolicy>('admissionregistration.k8s.io/v1', 'ValidatingAdmissionPolicy', 'validatingadmissionpolicies', 'Cluster');

/** A admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBinding, as the API server sends it. */
export type ValidatingAdmissionPolicyBinding = Served<admissionregistration.ValidatingAdmissionPolicyBinding>;
/** admissionregistration.k8s.io/v1 validatingadmissionpolicybindings (cluster-scoped). */
export const validatingAdmissionPolicyBindings: Resource<ValidatingAdmissionPolicyBinding> = builtin<admissionregistration.ValidatingAdmissionPolicyBinding>('admissionregistration.k8s.io/v1', 'ValidatingAdmissionPolicyBinding', 'validatingadmissionpolicybindings', 'Cluster');

/** A admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration, as the API server sends it. */
export type ValidatingWebhookConfiguration = Served<admissionregistration.ValidatingWebhookConfiguration>;
/** admissionregistration.k8s.io/v1 validatingwebhookconfigurations (cluster-scoped). */
export const validatingWebhookConfigurations: Resource<ValidatingWebhookConfiguration> = builtin<admissionregistration.ValidatingWebhookConfiguration>('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', 'validatingwebhookconfigurations', 'Cluster');

// apiextensions.k8s.io/v1

/** A apiextensions.k8s.io/v1 CustomResourceDefinition, as the API server sends it. */
export type CustomResourceDefinition = Served<apiextensions.CustomResourceDefinition>;
/** apiextensions.k8s.io/v1 customresourcedefinitions (cluster-scoped). */
export const customResourceDefinitions: Resource<CustomResourceDefinition> = builtin<apiextensions.CustomResourceDefinition>('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'customresourcedefinitions', 'Cluster');

// apps/v1

/** A apps/v1 ControllerRevision, as the API server sends it. */
export type ControllerRevision = Served<apps.ControllerRevision>;
/** apps/v1 controllerrevisions (namespaced). */
export const controllerRevisions: Resource<ControllerRevision> = builtin<apps.ControllerRevision>('apps/v1', 'ControllerRevision', 'controllerrevisions', 'Namespaced');

/** A apps/v1 DaemonSet, as the API server sends it. */
export type DaemonSet = Served<apps.DaemonSet>;
/** apps/v1 daemonsets (namespaced). */
export const daemonSets: Resource<DaemonSet> = builtin<apps.DaemonSet>('apps/v1', 'DaemonSet', 'daemonsets', 'Namespaced');

/** A apps/v1 Deployment, as the API server sends it. */
export type Deployment = Served<apps.Deployment>;
/** apps/v1 deployments (namespaced). */
export const deployments: Resource<Deployment> = builtin<apps.Deployment>('apps/v1', 'Deployment', 'deployments', 'Namespaced');

/** A apps/v1 ReplicaSet, as the API server sends it. */
export type ReplicaSet = Served<apps.ReplicaSet>;
/** apps/v1 replicasets (namespaced). */
export const replicaSets: Resource<ReplicaSet> = builtin<apps.ReplicaSet>('apps/v1', 'ReplicaSet', 'replicasets', 'Namespaced');

/** A apps/v1 StatefulSet, as the API server sends it. */
export type StatefulSet = Served<apps.StatefulSet>;
/** apps/v1 statefulsets (namespaced). */
export const statefulSets: Resource<StatefulSet> = builtin<apps.StatefulSet>('apps/v1', 'StatefulSet', 'statefulsets', 'Namespaced');

// autoscaling/v2

/** A autoscaling/v2 HorizontalPodAutoscaler, as the API server sends it. */
export type HorizontalPodAutoscaler = Served<autoscaling.HorizontalPodAutoscaler>;
/** autoscaling/v2 horizontalpodautoscalers (namespaced). The v2 API (metrics, behavior); the server converts objects written through autoscaling/v1. */
export const horizontalPodAutoscalers: Resource<HorizontalPodAutoscaler> = builtin<autoscaling.HorizontalPodAutoscaler>('autoscaling/v2', 'HorizontalPodAutoscaler', 'horizontalpodautoscalers', 'Namespaced');

// batch/v1

/** A batch/v1 CronJob, as the API server sends it. */
export type CronJob = Served<batch.CronJob>;
/** batch/v1 cronjobs (namespaced). */
export const cronJobs: Resource<CronJob> = builtin<batch.CronJob>('batch/v1', 'CronJob', 'cronjobs', 'Namespaced');

/** A batch/v1 Job, as the API server sends it. */
export type Job = Served<batch.Job>;
/** batch/v1 jobs (namespaced). */
export const jobs: Resource<Job> = builtin<batch.Job>('batch/v1', 'Job', 'jobs', 'Namespaced');

// certificates.k8s.io/v1

/** A certificates.k8s.io/v1 CertificateSigningRequest, as the API server sends it. */
export type CertificateSigningRequest = Served<certificates.CertificateSigningRequest>;
/** certificates.k8s.io/v1 certificatesigningrequests (cluster-scoped). */
export const certificateSigningRequests: Resource<CertificateSigningRequest> = builtin<certificates.CertificateSigningRequest>('certificates.k8s.io/v1', 'CertificateSigningRequest', 'certificatesigningrequests', 'Cluster');

// coordination.k8s.io/v1

/** A coordination.k8s.io/v1 Lease, as the API server sends it. */
export type Lease = Served<coordination.Lease>;
/** coordination.k8s.io/v1 leases (namespaced). */
export const leases: Resource<Lease> = builtin<coordination.Lease>('coordination.k8s.io/v1', 'Lease', 'leases', 'Namespaced');

// discovery.k8s.io/v1

/** A discovery.k8s.io/v1 EndpointSlice, as the API server sends it. */
export type EndpointSlice = Served<discovery.EndpointSlice>;
/** discovery.k8s.io/v1 endpointslices (namespaced). */
export const endpointSlices: Resource<EndpointSlice> = builtin<discovery.EndpointSlice>('discovery.k8s.io/v1', 'EndpointSlice', 'endpointslices', 'Namespaced');

// events.k8s.io/v1

/** A events.k8s.io/v1 Event, as the API server sends it. */
export type EventsV1Event = Served<eventsV1Api.Event>;
/** events.k8s.io/v1 events (namespaced). The same events as the core `events`, in the events.k8s.io/v1 shape. */
export const eventsV1: Resource<EventsV1Event> = builtin<eventsV1Api.Event>('events.k8s.io/v1', 'Event', 'events', 'Namespaced');

// flowcontrol.apiserver.k8s.io/v1

/** A flowcontrol.apiserver.k8s.io/v1 FlowSchema, as the API server sends it. */
export type FlowSchema = Served<flowcontrol.FlowSchema>;
/** flowcontrol.apiserver.k8s.io/v1 flowschemas (cluster-scoped). */
export const flowSchemas: Resource<FlowSchema> = builtin<flowcontrol.FlowSchema>('flowcontrol.apiserver.k8s.io/v1', 'FlowSchema', 'flowschemas', 'Cluster');

/** A flowcontrol.apiserver.k8s.io/v1 PriorityLevelConfiguration, as the API server sends it. */
export type PriorityLevelConfiguration = Served<flowcontrol.PriorityLevelConfiguration>;
/** flowcontrol.apiserver.k8s.io/v1 prioritylevelconfigurations (cluster-scoped). */
export const priorityLevelConfigurations: Resource<PriorityLevelConfiguration> = builtin<flowcontrol.PriorityLevelConfiguration>('flowcontrol.apiserver.k8s.io/v1', 'PriorityLevelConfiguration', 'prioritylevelconfigurations', 'Cluster');

// networking.k8s.io/v1

/** A networking.k8s.io/v1 Ingress, as the API server sends it. */
export type Ingress = Served<networking.Ingress>;
/** networking.k8s.io/v1 ingresses (namespaced). */
export const ingresses: Resource<Ingress> = builtin<networking.Ingress>('networking.k8s.io/v1', 'Ingress', 'ingresses', 'Namespaced');

/** A networking.k8s.io/v1 IngressClass, as the API server sends it. */
export type IngressClass = Served<networking.IngressClass>;
/** networking.k8s.io/v1 ingressclasses (cluster-scoped). */
export const ingressClasses: Resource<IngressClass> = builtin<networking.IngressClass>('networking.k8s.io/v1', 'IngressClass', 'ingressclasses', 'Cluster');

/** A networking.k8s.io/v1 NetworkPolicy, as the API server sends it. */
export type NetworkPolicy = Served<networking.NetworkPolicy>;
/** networking.k8s.io/v1 networkpolicies (namespaced). */
export const networkPolicies: Resource<NetworkPolicy> = builtin<networking.NetworkPolicy>('networking.k8s.io/v1', 'NetworkPolicy', 'networkpolicies', 'Namespaced');

// node.k8s.io/v1

/** A node.k8s.io/v1 RuntimeClass, as the API server sends it. */
export type RuntimeClass = Served<node.RuntimeClass>;
/** node.k8s.io/v1 runtimeclasses (cluster-scoped). */
export const runtimeClasses: Resource<RuntimeClass> = builtin<node.RuntimeClass>('node.k8s.io/v1', 'RuntimeClass', 'runtimeclasses', 'Cluster');

// policy/v1

/** A policy/v1 PodDisruptionBudget, as the API server sends it. */
export type PodDisruptionBudget = Served<policy.PodDisruptionBudget>;
/** policy/v1 poddisruptionbudgets (namespaced). */
export const podDisruptionBudgets: Resource<PodDisruptionBudget> = builtin<policy.PodDisruptionBudget>('policy/v1', 'PodDisruptionBudget', 'poddisruptionbudgets', 'Namespaced');

// rbac.authorization.k8s.io/v1

/** A rbac.authorization.k8s.io/v1 ClusterRole, as the API server sends it. */
export type ClusterRole = Served<rbac.ClusterRole>;
/** rbac.authorization.k8s.io/v1 clusterroles (cluster-scoped). */
export const clusterRoles: Resource<ClusterRole> = builtin<rbac.ClusterRole>('rbac.authorization.k8s.io/v1', 'ClusterRole', 'clusterroles', 'Cluster');

/** A rbac.authorization.k8s.io/v1 ClusterRoleBinding, as the API server sends it. */
export type ClusterRoleBinding = Served<rbac.ClusterRoleBinding>;
/** rbac.authorization.k8s.io/v1 clusterrolebindings (cluster-scoped). */
export const clusterRoleBindings: Resource<ClusterRoleBinding> = builtin<rbac.ClusterRoleBinding>('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', 'clusterrolebindings', 'Cluster');

/** A rbac.authorization.k8s.io/v1 Role, as the API server sends it. */
export type Role = Served<rbac.Role>;
/** rbac.authorization.k8s.io/v1 roles (namespaced). */
export const roles: Resource<Role> = builtin<rbac.Role>('rbac.authorization.k8s.io/v1', 'Role', 'roles', 'Namespaced');

/** A rbac.authorization.k8s.io/v1 RoleBinding, as the API server sends it. */
export type RoleBinding = Served<rbac.RoleBinding>;
/** rbac.authorization.k8s.io/v1 rolebindings (namespaced). */
export const roleBindings: Resource<RoleBinding> = builtin<rbac.RoleBinding>('rbac.authorization.k8s.io/v1', 'RoleBinding', 'rolebindings', 'Namespaced');

// scheduling.k8s.io/v1

/** A scheduling.k8s.io/v1 PriorityClass, as the API server sends it. */
export type PriorityClass = Served<scheduling.PriorityClass>;
/** scheduling.k8s.io/v1 priorityclasses (cluster-scoped). */
export const priorityClasses: Resource<PriorityClass> = builtin<scheduling.PriorityClass>('scheduling.k8s.io/v1', 'PriorityClass', 'priorityclasses', 'Cluster');

// storage.k8s.io/v1

/** A storage.k8s.io/v1 CSIDriver, as the API server sends it. */
export type CSIDriver = Served<storage.CSIDriver>;
/** storage.k8s.io/v1 csidrivers (cluster-scoped). */
export const csiDrivers: Resource<CSIDriver> = builtin<storage.CSIDriver>('storage.k8s.io/v1', 'CSIDriver', 'csidrivers', 'Cluster');

/** A storage.k8s.io/v1 CSINode, as the API server sends it. */
export type CSINode = Served<storage.CSINode>;
/** storage.k8s.io/v1 csinodes (cluster-scoped). */
export const csiNodes: Resource<CSINode> = builtin<storage.CSINode>('storage.k8s.io/v1', 'CSINode', 'csinodes', 'Cluster');

/** A storage.k8s.io/v1 CSIStorageCapacity, as the API server sends it. */
export type CSIStorageCapacity = Served<storage.CSIStorageCapacity>;
/** storage.k8s.io/v1 csistoragecapacities (namespaced). */
export const csiStorageCapacities: Resource<CSIStorageCapacity> = builtin<storage.CSIStorageCapacity>('storage.k8s.io/v1', 'CSIStorageCapacity', 'csistoragecapacities', 'Namespaced');

/** A storage.k8s.io/v1 StorageClass, as the API server sends it. */
export type StorageClass = Served<storage.StorageClass>;
/** storage.k8s.io/v1 storageclasses (cluster-scoped). */
export const storageClasses: Resource<StorageClass> = builtin<storage.StorageClass>('storage.k8s.io/v1', 'StorageClass', 'storageclasses', 'Cluster');

/** A storage.k8s.io/v1 VolumeAttachment, as the API server sends it. */
export type VolumeAttachment = Served<storage.VolumeAttachment>;
/** storage.k8s.io/v1 volumeattachments (cluster-scoped). */
export const volumeAttachments: Resource<VolumeAttachment> = builtin<storage.VolumeAttachment>('storage.k8s.io/v1', 'VolumeAttachment', 'volumeattachments', 'Cluster');
