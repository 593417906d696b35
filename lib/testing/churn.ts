import type { KubeObject } from '../store/object';
import type { Resource } from '../resource';
import { namespaces as namespaceResource, pods as podResource, type Namespace, type Pod } from '../resources';
import { hashString, pick, randomHex, randomInt, randomString, seededRandom, type Random } from './random';

export { seededRandom } from './random';
export type { Random } from './random';

/**
 * The part of the loopback server's `ClusterStore` the churn generator uses. Any store with these
 * methods will do, so the generator can also drive a fake in unit tests.
 */
export interface ChurnStore {
  /** Creates an object; the store sets uid, resourceVersion and creationTimestamp. */
  create<T extends KubeObject>(resource: Resource<T>, object: T): T;
  /** Replaces an object. */
  update<T extends KubeObject>(resource: Resource<T>, object: T): T;
  /** Deletes an object and returns its last state. */
  delete<T extends KubeObject>(resource: Resource<T>, namespace: string | undefined, name: string): T;
  /** The object under namespace/name, if any. */
  get<T extends KubeObject>(resource: Resource<T>, namespace: string | undefined, name: string): T | undefined;
  /** The objects of a resource, in one namespace or all. */
  list<T extends KubeObject>(resource: Resource<T>, namespace?: string): T[];
}

/** How much and what kind of churn to generate. Every default is documented on its field. */
export interface ChurnOptions {
  /** Seed of the random generator; the same seed replays the same mutations. Default 1. */
  readonly seed?: number;
  /** Namespaces `ns-0` ... `ns-(n-1)`. Default 10. */
  readonly namespaces?: number;
  /** Pods created by `populate()`, spread over the namespaces. Default 100. */
  readonly pods?: number;
  /** Mutation rates for `start()`, per second. Each defaults to 0. They also weight `step()`. */
  readonly createsPerSecond?: number;
  readonly updatesPerSecond?: number;
  readonly deletesPerSecond?: number;
  /** Give pods `metadata.managedFields` (~4.4 KB pods instead of ~1.3 KB). Default true. */
  readonly managedFields?: boolean;
  /**
   * The clock stamped into condition transition times on updates. Default `Date.now`; pass a fixed
   * clock to make the pod contents, not only the mutation sequence, repeatable.
   */
  readonly now?: () => number;
  /** Called when a timed mutation fails for a reason other than a vanished or taken pod; the churn has stopped. Default: a process warning. */
  readonly onError?: (error: unknown) => void;
}

/** What each kind of mutation has done so far. */
export interface ChurnStats {
  readonly creates: number;
  readonly updates: number;
  readonly deletes: number;
}

/** A running (or runnable) churn: seed the store, then mutate it step by step or on timers. */
export interface Churn {
  /** Creates the namespaces and the initial pods. Calling it again does nothing. */
  populate(): void;
  /** One create, update or delete, chosen by the seeded generator in proportion to the rates. */
  step(): void;
  /** Mutates at the configured rates on an unref'd timer (it never keeps the process alive). */
  start(): void;
  /** Clears the timer. `start()` may be called again. */
  stop(): void;
  readonly stats: ChurnStats;
}

/** Options of {@link makePod}. */
export interface MakePodOptions {
  /** Include two realistic `managedFields` entries (controller manager and kubelet). Default true. */
  readonly managedFields?: boolean;
  /** The `app` label; drawn from a fixed list when left out. */
  readonly app?: string;
  /** The `creationTimestamp`-like base for start and transition times, in ms. Default: drawn from January 2026. */
  readonly startedAt?: number;
}

interface AppProfile {
  readonly app: string;
  readonly tier: 'frontend' | 'backend' | 'data';
  readonly port: number;
  readonly cpu: string;
  readonly memory: string;
}

const APPS: readonly AppProfile[] = [
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
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const EPOCH_2026 = Date.UTC(2026, 0, 1);
const NODES = 16;

function timestamp(ms: number): string {
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
interface ReplicaSetShape {
  readonly profile: AppProfile;
  readonly hash: string;
  readonly uid: string;
  readonly image: string;
  readonly controllerFields: object;
}

const replicaSets = new Map<string, ReplicaSetShape>();

function replicaSetOf(namespace: string, profile: AppProfile): ReplicaSetShape {
  const key = `${namespace}/${profile.app}`;
  const cached = replicaSets.get(key);
  if (cached !== undefined) return cached;
  // Derived from the names, not drawn, so the same ReplicaSet keeps its hash and uid everywhere.
  const derive = seededRandom(hashString(key));
  const hash = randomString(derive, NAME_ALPHABET, 10);
  const hex = randomHex(derive, 32);
  const uid = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20)}`;
  const shape: ReplicaSetShape = {
    profile,
    hash,
    uid,
    image: `ghcr.io/shop/${profile.app}:1.${randomInt(derive, 20)}.${randomInt(derive, 10)}`,
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

function conditions(ready: boolean, scheduledAt: string, changedAt: string): object[] {
  const readiness = ready ? 'True' : 'False';
  return [
    { type: 'Ready', status: readiness, lastTransitionTime: changedAt },
    { type: 'PodScheduled', status: 'True', lastTransitionTime: scheduledAt },
  ];
}

function containerStatus(shape: ReplicaSetShape, containerID: string, phase: Phase, restartCount: number, since: string): object {
  const running = phase === 'Running';
  return {
    name: shape.profile.app,
    state: running ? { running: { startedAt: since } } : { waiting: { reason: 'ContainerCreating' } },
    ready: running,
    restartCount,
    containerID,
  };
}

/**
 * A realistic ReplicaSet-owned pod, as wire JSON: labels `app`/`tier`/`pod-template-hash`, an
 * owner reference to its ReplicaSet, one container with ports, resources and a volume mount,
 * tolerations, and a status with phase, conditions, container status and pod IP. About 4.4 KB of
 * JSON with managedFields and 1.3 KB without.
 *
 * Cheap by design (a few µs): field sets shared by every pod of one ReplicaSet are built once.
 * `uid`, `resourceVersion` and `creationTimestamp` are left for the store to set.
 *
 * ## Example
 * ```ts
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

/** The HTTP code a store error carries (`ApiStatusError.status.code`), read structurally. */
function statusCodeOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || !('status' in error)) return undefined;
  const status: unknown = error.status;
  if (typeof status !== 'object' || status === null || !('code' in status)) return undefined;
  return typeof status.code === 'number' ? status.code : undefined;
}

interface LivePod {
  readonly namespace: string;
  readonly name: string;
}

type Mutation = 'create' | 'update' | 'delete';

/** When every rate is 0, `step()` still mixes like `--churn`: 1 create : 8 updates : 1 delete. */
const DEFAULT_MIX = { create: 1, update: 8, delete: 1 } as const;
const COUNTERS = { create: 'creates', update: 'updates', delete: 'deletes' } as const;
/** A mutation may meet a pod someone else deleted or a name someone else took: try a few others. */
const MAX_ATTEMPTS = 8;
/** After an event-loop stall, catch up at most one second of backlog instead of bursting. */
const MAX_BACKLOG_SECONDS = 1;

class ChurnGenerator implements Churn {
  private readonly random: Random;
  private readonly namespaceNames: readonly string[];
  private readonly weights: Readonly<Record<Mutation, number>>;
  private readonly totalRate: number;
  private readonly now: () => number;
  private readonly managedFields: boolean;
  /** Live pods in an array (O(1) random pick) plus their positions (O(1) swap-remove). */
  private readonly live: LivePod[] = [];
  private readonly positions = new Map<string, number>();
  private populated = false;
  private timer: ReturnType<typeof setInterval> | undefined;
  private counts = { creates: 0, updates: 0, deletes: 0 };

  constructor(
    private readonly store: ChurnStore,
    private readonly options: ChurnOptions,
  ) {
    this.random = seededRandom(options.seed ?? 1);
    this.namespaceNames = Array.from({ length: Math.max(1, options.namespaces ?? 10) }, (_, i) => `ns-${i}`);
    const rates = { create: options.createsPerSecond ?? 0, update: options.updatesPerSecond ?? 0, delete: options.deletesPerSecond ?? 0 };
    this.totalRate = rates.create + rates.update + rates.delete;
    this.weights = this.totalRate > 0 ? rates : DEFAULT_MIX;
    this.now = options.now ?? Date.now;
    this.managedFields = options.managedFields ?? true;
  }

  get stats(): ChurnStats {
    return { ...this.counts };
  }

  populate(): void {
    if (this.populated) return;
    this.populated = true;
    for (const name of this.namespaceNames) {
      if (this.store.get(namespaceResource, undefined, name) === undefined) {
        const namespace: Namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { 'kubernetes.io/metadata.name': name } }, status: { phase: 'Active' } };
        this.store.create(namespaceResource, namespace);
      }
      // Pods already there (another churn, a test) join the pool, so updates and deletes reach them.
      for (const pod of this.store.list(podResource, name)) this.remember({ namespace: name, name: pod.metadata.name });
    }
    const count = this.options.pods ?? 100;
    for (let i = 0; i < count; i++) {
      const namespace = this.namespaceNames[i % this.namespaceNames.length] as string;
      for (let attempt = 0; attempt < MAX_ATTEMPTS && !this.create(namespace, undefined); attempt++);
    }
  }

  step(): void {
    const mutation = this.choose();
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const performed: Mutation = this.live.length === 0 ? 'create' : mutation;
      const done = performed === 'create' ? this.create(pick(this.random, this.namespaceNames), this.now()) : performed === 'update' ? this.update() : this.delete();
      if (done) {
        this.counts[COUNTERS[performed]]++;
        return;
      }
    }
  }

  start(): void {
    if (this.timer !== undefined || this.totalRate <= 0) return;
    this.populate();
    const startedAt = performance.now();
    let performed = 0;
    // One timer for all kinds: at high rates each tick performs the mutations that fell due.
    const periodMs = Math.min(100, Math.max(10, 1000 / this.totalRate));
    this.timer = setInterval(() => {
      const due = Math.floor(((performance.now() - startedAt) * this.totalRate) / 1000);
      const backlogLimit = Math.ceil(this.totalRate * MAX_BACKLOG_SECONDS);
      if (due - performed > backlogLimit) performed = due - backlogLimit;
      try {
        for (; performed < due; performed++) this.step();
      } catch (error) {
        this.stop();
        (this.options.onError ?? reportChurnError)(error);
      }
    }, periodMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private choose(): Mutation {
    const { create, update } = this.weights;
    const draw = this.random() * (create + update + this.weights.delete);
    return draw < create ? 'create' : draw < create + update ? 'update' : 'delete';
  }

  /** Creates one pod; false when the drawn name was taken (by us or by someone else). */
  private create(namespace: string, startedAt: number | undefined): boolean {
    const profile = pick(this.random, APPS);
    const shape = replicaSetOf(namespace, profile);
    const name = `${profile.app}-${shape.hash}-${randomString(this.random, NAME_ALPHABET, 5)}`;
    const pod = makePod(this.random, namespace, name, {
      app: profile.app,
      managedFields: this.managedFields,
      ...(startedAt === undefined ? {} : { startedAt }),
    });
    if (this.positions.has(`${namespace}/${name}`)) return false;
    try {
      this.store.create(podResource, pod);
    } catch (error) {
      if (statusCodeOf(error) === 409) return false;
      throw error;
    }
    this.remember({ namespace, name });
    return true;
  }

  /** Changes a pod's status (phase, readiness, restarts) and sometimes its labels. */
  private update(): boolean {
    const target = pick(this.random, this.live);
    const current = this.store.get(podResource, target.namespace, target.name);
    if (current === undefined) {
      this.forget(target);
      return false;
    }
    try {
      this.store.update(podResource, evolve(current, this.random, timestamp(this.now())));
    } catch (error) {
      if (statusCodeOf(error) !== 404) throw error;
      this.forget(target);
      return false;
    }
    return true;
  }

  private delete(): boolean {
    const target = pick(this.random, this.live);
    this.forget(target);
    try {
      this.store.delete(podResource, target.namespace, target.name);
    } catch (error) {
      if (statusCodeOf(error) === 404) return false;
      throw error;
    }
    return true;
  }

  private remember(pod: LivePod): void {
    const key = `${pod.namespace}/${pod.name}`;
    if (this.positions.has(key)) return;
    this.positions.set(key, this.live.length);
    this.live.push(pod);
  }

  private forget(pod: LivePod): void {
    const key = `${pod.namespace}/${pod.name}`;
    const index = this.positions.get(key);
    if (index === undefined) return;
    const last = this.live.pop() as LivePod;
    this.positions.delete(key);
    if (index < this.live.length) {
      this.live[index] = last;
      this.positions.set(`${last.namespace}/${last.name}`, index);
    }
  }
}

function reportChurnError(error: unknown): void {
  process.emitWarning(`churn stopped: ${error instanceof Error ? error.message : String(error)}`, 'ChurnWarning');
}

const PHASES: readonly Phase[] = ['Pending', 'Running', 'Running', 'Running', 'Succeeded', 'Failed'];

/** The next state of a pod: a new object, sharing untouched parts with the current one. */
function evolve(current: Pod, random: Random, changedAt: string): Pod {
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
    status: { ...status, phase, conditions: conditions(ready, scheduledAt, changedAt), containerStatuses },
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

/**
 * A seeded churn generator over a cluster store: namespaces `ns-0`..., realistic pods, then a
 * stream of creates, updates and deletes. Every choice (which mutation, which namespace and pod,
 * names, phases, labels) comes from `seededRandom(seed)`, so the same seed and the same starting
 * store replay the same sequence of mutations; only the timing of `start()` depends on the clock.
 *
 * `populate()` mutations are not counted in `stats`; `step()` mutations are. When all rates are 0,
 * `step()` mixes 1 create : 8 updates : 1 delete.
 *
 * ## Example
 * ```ts
 * const server = await startApiServer();
 * const churn = createChurn(server.store, { pods: 1000, updatesPerSecond: 200 });
 * churn.populate();
 * churn.start();
 * // ... later
 * churn.stop();
 * await server.close();
 * ```
 */
export function createChurn(store: ChurnStore, options: ChurnOptions = {}): Churn {
  return new ChurnGenerator(store, options);
}
