/**
 * Realistic pods for the churn generator and the benchmarks: the shape a Deployment's pods have on
 * a real cluster (labels, ownerReferences, managedFields, status), and how their status evolves.
 */
import type { ContainerStatus, PodCondition } from 'kubernetes-types/core/v1.js';
import { type Pod } from 'rx-informer';
import { hashString, pick, randomHex, randomInt, randomString, seededRandom, type Random } from './random';

/** Options of {@link makePod}. */
export interface MakePodOptions {
  /** Include two realistic `managedFields` entries (controller manager and kubelet). Default true. */
  readonly managedFields?: boolean;
  /** The `app` label; drawn from a fixed list when left out. */
  readonly app?: string;
  /** The `creationTimestamp`-like base for start and transition times, in ms. Default: drawn from January 2026. */
  readonly startedAt?: number;
}

export interface AppProfile {
  readonly app: string;
  readonly tier: 'frontend' | 'backend' | 'data';
  readonly port: number;
  readonly cpu: string;
  readonly memory: string;
}

export const APPS: readonly AppProfile[] = [
  { app: 'web', tier: 'frontend', port: 3000, cpu: '100m', memory: '128Mi' },
  { app: 'gateway', tier: 'frontend', port: 8080, cpu: '250m', memory: '256Mi' },
  { app: 'api', tier: 'backend', port: 8080, cpu: '200m', memory: '256Mi' },
  { app: 'auth', tier: 'backend', port: 8443, cpu: '100m', memory: '128Mi' },
  { app: 'checkout', tier: 'backend', port: 8080, cpu: '200m', memory: '384Mi' },
  { app: 'worker', tier: 'backend', port: 9090, cpu: '500m', memory: '512Mi' },
  { app: 'notifier', tier: 'backend', port: 8080, cpu: '50m', memory: '64Mi' },
  { app: 'search', tier: 'data', port: 9200, cpu: '1', memory: '2Gi' },
  { app: 'cache', tier: 'data', port: 6379, cpu: '250m', memory: '1Gi' },
  { app: 'ingest', tier: 'data', port: 8080, cpu: '500m', memory: '768Mi' },
];
const APPS_BY_NAME = new Map(APPS.map((profile) => [profile.app, profile]));
/** The profile of an `app` given to makePod that is not in the list above. */
const DEFAULT_PROFILE: AppProfile = { app: 'app', tier: 'backend', port: 8080, cpu: '100m', memory: '128Mi' };

/** The alphabet Kubernetes uses for generated name suffixes (no vowels, no confusable digits). */
export const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const EPOCH_2026 = Date.UTC(2026, 0, 1);
const NODES = 16;

export function timestamp(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19) + 'Z';
}

/** Empty field-set markers are shared: managedFields only ever gets serialised, never edited. */
const F = Object.freeze({});
const CONDITION_FIELDS = Object.freeze({ '.': F, 'f:lastProbeTime': F, 'f:lastTransitionTime': F, 'f:status': F, 'f:type': F });
const ENV_FIELDS = Object.freeze({ '.': F, 'f:name': F, 'f:value': F });
const ENV_FROM_FIELD_FIELDS = Object.freeze({ '.': F, 'f:name': F, 'f:valueFrom': { '.': F, 'f:fieldRef': F } });
const PROBE_FIELDS = Object.freeze({
  '.': F,
  'f:failureThreshold': F,
  'f:httpGet': { '.': F, 'f:path': F, 'f:port': F, 'f:scheme': F },
  'f:initialDelaySeconds': F,
  'f:periodSeconds': F,
  'f:successThreshold': F,
  'f:timeoutSeconds': F,
});
const KUBELET_STATUS_FIELDS = Object.freeze({
  'f:conditions': Object.freeze({
    'k:{"type":"ContainersReady"}': CONDITION_FIELDS,
    'k:{"type":"Initialized"}': CONDITION_FIELDS,
    'k:{"type":"PodReadyToStartContainers"}': CONDITION_FIELDS,
    'k:{"type":"PodScheduled"}': CONDITION_FIELDS,
    'k:{"type":"Ready"}': CONDITION_FIELDS,
  }),
  'f:containerStatuses': F,
  'f:hostIP': F,
  'f:phase': F,
  'f:startTime': F,
});

/** What every pod of one ReplicaSet shares; computed once per namespace and app. */
export interface ReplicaSetShape {
  readonly profile: AppProfile;
  readonly hash: string;
  readonly uid: string;
  readonly image: string;
  /** The digest the image resolved to, as the container runtime reports it (`repo@sha256:...`). */
  readonly imageID: string;
  readonly controllerFields: object;
}

const replicaSets = new Map<string, ReplicaSetShape>();

export function replicaSetOf(namespace: string, profile: AppProfile): ReplicaSetShape {
  const key = `${namespace}/${profile.app}`;
  const cached = replicaSets.get(key);
  if (cached !== undefined) return cached;
  // Derived from the names, not drawn, so the same ReplicaSet keeps its hash and uid everywhere.
  const derive = seededRandom(hashString(key));
  const hash = randomString(derive, NAME_ALPHABET, 10);
  const hex = randomHex(derive, 32);
  const uid = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20)}`;
  const repository = `ghcr.io/shop/${profile.app}`;
  const image = `${repository}:1.${randomInt(derive, 20)}.${randomInt(derive, 10)}`;
  const shape: ReplicaSetShape = {
    profile,
    hash,
    uid,
    image,
    imageID: `${repository}@sha256:${randomHex(seededRandom(hashString(image)), 64)}`,
    controllerFields: controllerManagerFields(profile, uid),
  };
  replicaSets.set(key, shape);
  return shape;
}

function controllerManagerFields(profile: AppProfile, uid: string): object {
  return Object.freeze({
    'f:metadata': {
      'f:labels': { '.': F, 'f:app': F, 'f:pod-template-hash': F, 'f:tier': F },
      'f:ownerReferences': { '.': F, [`k:{"uid":"${uid}"}`]: F },
    },
    'f:spec': {
      'f:containers': {
        [`k:{"name":"${profile.app}"}`]: {
          '.': F,
          'f:image': F,
          'f:imagePullPolicy': F,
          'f:name': F,
          'f:ports': { '.': F, [`k:{"containerPort":${profile.port},"protocol":"TCP"}`]: { '.': F, 'f:containerPort': F, 'f:protocol': F } },
          'f:resources': { '.': F, 'f:limits': { '.': F, 'f:cpu': F, 'f:memory': F }, 'f:requests': { '.': F, 'f:cpu': F, 'f:memory': F } },
          'f:env': {
            '.': F,
            'k:{"name":"LOG_LEVEL"}': ENV_FIELDS,
            'k:{"name":"OTEL_EXPORTER_OTLP_ENDPOINT"}': ENV_FIELDS,
            'k:{"name":"POD_NAMESPACE"}': ENV_FROM_FIELD_FIELDS,
            'k:{"name":"POD_NAME"}': ENV_FROM_FIELD_FIELDS,
          },
          'f:livenessProbe': PROBE_FIELDS,
          'f:readinessProbe': PROBE_FIELDS,
          'f:securityContext': { '.': F, 'f:allowPrivilegeEscalation': F, 'f:readOnlyRootFilesystem': F, 'f:runAsNonRoot': F },
          'f:terminationMessagePath': F,
          'f:terminationMessagePolicy': F,
          'f:volumeMounts': { '.': F, 'k:{"mountPath":"/etc/app"}': { '.': F, 'f:mountPath': F, 'f:name': F, 'f:readOnly': F } },
        },
      },
      'f:dnsPolicy': F,
      'f:enableServiceLinks': F,
      'f:restartPolicy': F,
      'f:schedulerName': F,
      'f:securityContext': F,
      'f:terminationGracePeriodSeconds': F,
      'f:tolerations': F,
      'f:volumes': { '.': F, 'k:{"name":"config"}': { '.': F, 'f:configMap': { '.': F, 'f:name': F }, 'f:name': F } },
    },
  });
}

type Phase = NonNullable<NonNullable<Pod['status']>['phase']>;

function conditions(ready: boolean, scheduledAt: string, changedAt: string): PodCondition[] {
  const readiness = ready ? 'True' : 'False';
  return [
    { type: 'Ready', status: readiness, lastTransitionTime: changedAt },
    { type: 'PodScheduled', status: 'True', lastTransitionTime: scheduledAt },
  ];
}

/**
 * A container status as the kubelet reports it, with every field the API's OpenAPI requires
 * (`name`, `ready`, `restartCount`, `image`, `imageID`): typed clients such as the Python one
 * refuse a pod whose status lacks any of them.
 */
function containerStatus(shape: ReplicaSetShape, containerID: string, phase: Phase, restartCount: number, since: string): ContainerStatus {
  const running = phase === 'Running';
  return {
    name: shape.profile.app,
    state: running ? { running: { startedAt: since } } : { waiting: { reason: 'ContainerCreating' } },
    ready: running,
    restartCount,
    image: shape.image,
    imageID: shape.imageID,
    containerID,
    started: running,
  };
}

/**
 * A realistic ReplicaSet-owned pod, as wire JSON: labels `app`/`tier`/`pod-template-hash`, an
 * owner reference to its ReplicaSet, one container with ports, resources and a volume mount,
 * tolerations, and a status with phase, conditions, container status and pod IP; with
 * managedFields, most of its JSON is theirs (docs/PERFORMANCE.md, "Method", has the sizes).
 *
 * Cheap by design: field sets shared by every pod of one ReplicaSet are built once.
 * `uid`, `resourceVersion` and `creationTimestamp` are left for the store to set.
 *
 * ## Example
 * ```ts
 * import { makePod, seededRandom } from 'rx-informer-apiserver';
 *
 * const pod = makePod(seededRandom(7), 'ns-0', 'api-x', { app: 'api', managedFields: false });
 * ```
 */
export function makePod(random: Random, namespace: string, name: string, options: MakePodOptions = {}): Pod {
  const profile = options.app === undefined ? pick(random, APPS) : (APPS_BY_NAME.get(options.app) ?? { ...DEFAULT_PROFILE, app: options.app });
  const shape = replicaSetOf(namespace, profile);
  const app = profile.app;
  const node = randomInt(random, NODES);
  const podIP = `10.244.${node}.${2 + randomInt(random, 250)}`;
  const hostIP = `10.0.0.${10 + node}`;
  const started = options.startedAt ?? EPOCH_2026 + randomInt(random, 30 * 24 * 3600) * 1000;
  const scheduledAt = timestamp(started);
  const phase: Phase = random() < 0.9 ? 'Running' : 'Pending';
  const containerID = `containerd://${randomHex(random, 64)}`;
  const metadata = {
    name,
    namespace,
    labels: { app, tier: profile.tier, 'pod-template-hash': shape.hash },
    ownerReferences: [
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `${app}-${shape.hash}`, uid: shape.uid, controller: true, blockOwnerDeletion: true },
    ],
    ...(options.managedFields === false
      ? {}
      : {
          managedFields: [
            { manager: 'kube-controller-manager', operation: 'Update', apiVersion: 'v1', time: scheduledAt, fieldsType: 'FieldsV1', fieldsV1: shape.controllerFields },
            {
              manager: 'kubelet',
              operation: 'Update',
              apiVersion: 'v1',
              time: timestamp(started + 4000),
              fieldsType: 'FieldsV1',
              fieldsV1: { 'f:status': { ...KUBELET_STATUS_FIELDS, 'f:hostIPs': { '.': F, [`k:{"ip":"${hostIP}"}`]: { '.': F, 'f:ip': F } }, 'f:podIP': F, 'f:podIPs': { '.': F, [`k:{"ip":"${podIP}"}`]: { '.': F, 'f:ip': F } } } },
              subresource: 'status',
            },
          ],
        }),
  };
  const container = {
    name: app,
    image: shape.image,
    ports: [{ containerPort: profile.port, protocol: 'TCP' }],
    resources: { limits: { cpu: profile.cpu, memory: profile.memory }, requests: { cpu: profile.cpu, memory: profile.memory } },
    volumeMounts: [{ name: 'config', readOnly: true, mountPath: '/etc/app' }],
  };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata,
    spec: {
      containers: [container],
      volumes: [{ name: 'config', configMap: { name: `${app}-config` } }],
      nodeName: `node-${node}`,
      restartPolicy: 'Always',
      tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' }],
    },
    status: {
      phase,
      hostIP,
      conditions: conditions(phase === 'Running', scheduledAt, timestamp(started + 4000)),
      podIP,
      containerStatuses: [containerStatus(shape, containerID, phase, 0, timestamp(started + 3000))],
    },
  };
}

const PHASES: readonly Phase[] = ['Pending', 'Running', 'Running', 'Running', 'Succeeded', 'Failed'];

/** The next state of a pod: a new object, sharing untouched parts with the current one. */
export function evolvePod(current: Pod, random: Random, changedAt: string): Pod {
  const status = current.status ?? {};
  const previous = (status['containerStatuses'] as readonly ContainerStatusShape[] | undefined)?.[0];
  const conditionsNow = (status['conditions'] as readonly { type: string; lastTransitionTime?: string }[] | undefined) ?? [];
  const scheduledAt = conditionsNow.find((c) => c.type === 'PodScheduled')?.lastTransitionTime ?? changedAt;
  const draw = random();
  // 40% readiness flips, 30% container restarts, 30% phase changes.
  const restarted = draw >= 0.4 && draw < 0.7;
  const phase: Phase = draw < 0.7 ? 'Running' : pick(random, PHASES);
  const ready = draw < 0.4 ? !(previous?.ready ?? false) : phase === 'Running' && !restarted;
  const restartCount = (previous?.restartCount ?? 0) + (restarted ? 1 : 0);
  const running = phase === 'Running';
  const runningSince = restarted ? changedAt : (previous?.state?.running?.startedAt ?? changedAt);
  const containerStatuses =
    previous === undefined
      ? []
      : [
          {
            ...previous,
            state: containerState(phase, runningSince, changedAt),
            ...(restarted ? { lastState: { terminated: { exitCode: 137, reason: 'OOMKilled', finishedAt: changedAt } } } : {}),
            ready,
            restartCount,
            started: running,
          },
        ];
  const relabel = random() < 0.1;
  const labels = current.metadata.labels ?? {};
  return {
    ...current,
    metadata: relabel ? { ...current.metadata, labels: { ...labels, track: labels['track'] === 'canary' ? 'stable' : 'canary' } } : current.metadata,
    status: { ...status, phase, conditions: conditions(ready, scheduledAt, changedAt), containerStatuses: containerStatuses as ContainerStatus[] },
  };
}

function containerState(phase: Phase, runningSince: string, changedAt: string): object {
  if (phase === 'Running') return { running: { startedAt: runningSince } };
  if (phase === 'Pending') return { waiting: { reason: 'ContainerCreating' } };
  const failed = phase === 'Failed';
  return { terminated: { exitCode: failed ? 1 : 0, reason: failed ? 'Error' : 'Completed', finishedAt: changedAt } };
}

interface ContainerStatusShape {
  readonly ready?: boolean;
  readonly restartCount?: number;
  readonly state?: { readonly running?: { readonly startedAt?: string } };
}
