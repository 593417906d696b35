/**
 * A Deployment-like operator over a custom resource, written with `controller()` from
 * rx-informer/controller. For each App (`example.com/v1`, namespaced) it keeps
 *
 * - a ConfigMap `<name>-config` holding `spec.config`,
 * - a Service `<name>` that selects the App's pods (`app: <name>`) on `spec.port`,
 *
 * both owned by the App through a controller reference, and it registers the App's address in a
 * registry outside the cluster (a stand-in for DNS, a load balancer, a bucket), guarded by the
 * finalizer `example.com/registry`: a deleted App stays until it has been unregistered.
 *
 * - `.owns(configMaps).owns(services)`: a child's change (someone's edit, a deletion) reconciles
 *   its App, which puts it back. A burst of changes costs one more reconcile.
 * - `changedGeneration()` on the Apps: writes that leave the spec alone (the finalizer's addition,
 *   status) do not reconcile; a deletion does (the API server bumps the generation when it marks
 *   an object with finalizers), and so does an App deleted and created again under its name.
 * - `finalizer()`: the finalizer is added before the first apply; on deletion `cleanup`
 *   unregisters the App, and only then is the finalizer removed. A failed unregistration is
 *   retried with backoff; the App stays meanwhile. The children go by garbage collection.
 * - Every reconcile reads the caches once they show its key's own earlier writes, so it never
 *   creates a ConfigMap it created a moment ago (409), cleans up twice, or writes Ready again. The
 *   status write goes through rx-informer/writes, not `request.writes`: its answer is recorded
 *   with `writes.wrote`.
 * - Status through rx-informer/writes: once registered, the App's `Ready` condition (with its
 *   `observedGeneration`) is server-side applied to its status subresource under the operator's
 *   field manager, and the first time an App becomes ready at a generation a `Registered` Event
 *   is recorded about it (events.k8s.io/v1; repeats become a series, the recorder never blocks a
 *   reconcile and is flushed when the operator stops).
 *
 * Run: `npx ts-node examples/run/appOperator.ts [namespace]` (current kubeconfig context; Ctrl-C
 * stops), once the cluster serves the resource:
 *
 * ```sh
 * kubectl apply -f - <<'EOF'
 * apiVersion: apiextensions.k8s.io/v1
 * kind: CustomResourceDefinition
 * metadata: { name: apps.example.com }
 * spec:
 *   group: example.com
 *   scope: Namespaced
 *   names: { plural: apps, singular: app, kind: App }
 *   versions:
 *     - name: v1
 *       served: true
 *       storage: true
 *       schema: { openAPIV3Schema: { type: object, x-kubernetes-preserve-unknown-fields: true } }
 * EOF
 * ```
 */
import type { KubeConfig } from '@kubernetes/client-node';
import {
  apiVersionOf,
  changedGeneration,
  configMaps,
  defineResource,
  dropManagedFields,
  informerFactory,
  services,
  type ConfigMap,
  type KubeObject,
  type Logger,
  type OwnerReference,
  type Resource,
  type Service,
} from 'rx-informer';
import { controller, finalizer, type ControllerReconciler, type ControllerWrites, type FinalizerRequest } from 'rx-informer/controller';
import { applyStatus, eventRecorder, findCondition, setCondition, type Condition, type EventRecorder } from 'rx-informer/writes';
import { lastValueFrom } from 'rxjs';

/** An App: what the operator keeps in the cluster for it. */
export interface App extends KubeObject {
  readonly spec?: {
    /** The port its Service serves (and forwards to). Default 8080. */
    readonly port?: number;
    /** What its ConfigMap holds. */
    readonly config?: Readonly<Record<string, string>>;
  };
  readonly status?: {
    /** `Ready`: True once the App's children match it and it is registered. */
    readonly conditions?: readonly Condition[];
  };
}

/** `example.com/v1 apps`, namespaced. */
export const apps: Resource<App> = defineResource<App>({ group: 'example.com', version: 'v1', plural: 'apps', kind: 'App', namespaced: true });

/** The field manager of the operator's status writes. */
export const FIELD_MANAGER = 'example.com/app-operator';

/** The operator's finalizer on every App it has registered. */
export const REGISTRY_FINALIZER = 'example.com/registry';

/** Where Apps are known outside the cluster. Both calls must be idempotent: a retry repeats them. */
export interface Registry {
  /** Records the App's address. */
  register(key: string, address: string, signal: AbortSignal): Promise<void>;
  /** Forgets the App. */
  unregister(key: string, signal: AbortSignal): Promise<void>;
}

/** Options of {@link main}. All optional. */
export interface AppOperatorOptions {
  /** Watch one namespace. Default: all namespaces. */
  readonly namespace?: string;
  /** Where Apps are registered. Default: an in-process map ({@link memoryRegistry}). */
  readonly registry?: Registry;
  /** How long to wait for the first lists. Default 30 000 ms. */
  readonly syncTimeout?: number;
  /** Stops the operator; `main` resolves once running reconciles have settled and everything is released. */
  readonly signal?: AbortSignal;
  /** Where progress lines go. Default `console.log`. */
  readonly log?: (line: string) => void;
  /** The informers' and the work queue's logger. Default: warnings and errors to stderr (`silentLogger` for none). */
  readonly logger?: Logger;
}

/** The name of an App's ConfigMap. */
export const configName = (appName: string): string => `${appName}-config`;

/** The address an App is registered at: its Service's cluster DNS name and port. */
export const addressOf = (app: App): string => `${app.metadata.name}.${app.metadata.namespace ?? 'default'}.svc:${portOf(app)}`;

/** A registry in a Map, which logs each change it makes. */
export function memoryRegistry(log: (line: string) => void = () => undefined): Registry & { readonly entries: ReadonlyMap<string, string> } {
  const entries = new Map<string, string>();
  return {
    entries,
    register: async (key, address) => {
      if (entries.get(key) === address) return;
      entries.set(key, address);
      log(`registered ${key} at ${address}`);
    },
    unregister: async (key) => {
      if (entries.delete(key)) log(`unregistered ${key}`);
    },
  };
}

/**
 * Writes an App's status conditions (the whole list this operator owns) and resolves with the App
 * as the server stored it, which the reconcile records (`writes.wrote`) to read it back.
 */
export type ConditionsWriter = (app: App, conditions: readonly Condition[]) => Promise<App>;

/**
 * The operator's reconcile: under the finalizer, `apply` makes the App's ConfigMap and Service
 * match it, registers it, and, unless the App is Ready at its generation already, hands its
 * conditions with `Ready` set to `writeConditions`; `cleanup` unregisters it.
 */
export function appReconciler(registry: Registry, log: (line: string) => void, writeConditions?: ConditionsWriter): ControllerReconciler<App> {
  return finalizer<App>(REGISTRY_FINALIZER, {
    apply: async ({ key, primary: app, snapshots, writes, signal }: FinalizerRequest<App>) => {
      const namespace = app.metadata.namespace ?? '';
      const config = desiredConfigMap(app);
      const configNow = snapshots.of(configMaps).get(`${namespace}/${config.metadata.name}`);
      logOutcome(log, 'ConfigMap', config, await ensure(writes, configMaps, app, config, configNow, sameConfig, configPatch));
      const service = desiredService(app);
      const serviceNow = snapshots.of(services).get(`${namespace}/${service.metadata.name}`);
      logOutcome(log, 'Service', service, await ensure(writes, services, app, service, serviceNow, sameService, servicePatch));
      await registry.register(key, addressOf(app), signal);
      const conditions = readyConditions(app);
      // Recorded as this reconcile's write: the next reconcile of the App (its children's events
      // start one at once) waits for the cache to show it, so it finds the App Ready and writes
      // nothing, instead of writing Ready again with a new lastTransitionTime.
      if (conditions !== undefined && writeConditions !== undefined) writes.wrote(apps, await writeConditions(app, conditions));
    },
    cleanup: async ({ key, signal }) => {
      await registry.unregister(key, signal);
    },
  });
}

/**
 * Runs the operator until `options.signal` aborts. Rejects when the caches cannot sync within
 * `syncTimeout` (a 403 from RBAC, a resource the cluster does not serve).
 */
export async function main(kubeConfig: KubeConfig, options: AppOperatorOptions = {}): Promise<void> {
  const log = options.log ?? ((line: string) => console.log(line));
  const { namespace, logger } = options;
  const registry = options.registry ?? memoryRegistry(log);
  const factory = informerFactory(kubeConfig, { namespace, logger, transform: dropManagedFields });
  // Built before start(): owns() adds the owner index to the ConfigMap and Service informers.
  const operator = controller({ factory, kubeConfig }, apps, { predicates: [changedGeneration()] })
    .owns(configMaps)
    .owns(services);
  const stop = new AbortController();
  let settled = (): void => undefined;
  const stopped = new Promise<void>((resolve) => (settled = resolve));
  // The recorder stops after the run: a reconcile that settles during the stop still records its Event.
  const stopRecording = new AbortController();
  const recorder = eventRecorder(kubeConfig, { reportingController: FIELD_MANAGER, signal: stopRecording.signal, logger });
  const recorded = lastValueFrom(recorder.writes$, { defaultValue: undefined }).catch(() => undefined);
  factory.start();
  const running = operator.run(appReconciler(registry, log, (app, conditions) => markReady(kubeConfig, recorder, app, conditions)), { signal: stop.signal, logger }).subscribe({
    next: (event) => {
      if (event.type === 'failed') log(`reconcile ${event.key} failed: ${messageOf(event.error)}`);
      if (event.type === 'staleCache') log(`reconcile ${event.key} read a cache ${event.waited} ms behind its writes`);
    },
    error: (error: unknown) => {
      log(`stopped on an error: ${messageOf(error)}`);
      settled();
    },
    complete: () => settled(),
  });
  try {
    await factory.waitForSync({ timeout: options.syncTimeout ?? 30_000, signal: options.signal });
    log('caches synced');
    await aborted(options.signal);
  } finally {
    // The signal stops the work queue gracefully: running reconciles settle before the caches go.
    stop.abort();
    await stopped;
    stopRecording.abort();
    await recorded;
    running.unsubscribe();
    await factory.shutdown();
    log('stopped');
  }
}

/**
 * The App's conditions with `Ready` True at its generation, or undefined when they say so already:
 * a reconcile that changed nothing writes nothing.
 */
function readyConditions(app: App): Condition[] | undefined {
  const generation = app.metadata.generation;
  const ready = findCondition(app.status?.conditions, 'Ready');
  if (ready?.status === 'True' && ready.observedGeneration === generation) return undefined;
  return setCondition(app.status?.conditions, { type: 'Ready', status: 'True', reason: 'Registered', message: `registered at ${addressOf(app)}`, observedGeneration: generation });
}

/**
 * Applies the App's conditions (server-side apply of its status: the operator's field manager
 * owns them) and records a `Registered` Event: this is the first time the App is Ready at this
 * generation.
 */
async function markReady(kubeConfig: KubeConfig, recorder: EventRecorder, app: App, conditions: readonly Condition[]): Promise<App> {
  const { name, namespace } = app.metadata;
  const written = await lastValueFrom(applyStatus(kubeConfig, apps, { metadata: { name, namespace }, status: { conditions } }, { fieldManager: FIELD_MANAGER, force: true }));
  recorder.record(app, { type: 'Normal', reason: 'Registered', action: 'Register', note: `registered at ${addressOf(app)}` });
  return written;
}

/** What one ensure did. */
type Outcome = 'created' | 'updated' | undefined;

/**
 * Creates `desired` when it is missing, or patches it when it differs (a merge patch carrying the
 * resourceVersion read: a change made meanwhile fails it with 409 and the key is retried on the
 * newer object). An object controlled by something else is left alone, and the key fails.
 */
async function ensure<R extends KubeObject>(
  writes: ControllerWrites,
  resource: Resource<R>,
  app: App,
  desired: R,
  current: R | undefined,
  same: (current: R, desired: R) => boolean,
  patchOf: (current: R, desired: R) => Readonly<Record<string, unknown>>,
): Promise<Outcome> {
  if (current === undefined) {
    await writes.create(resource, desired);
    return 'created';
  }
  const controllerUid = current.metadata.ownerReferences?.find((owner) => owner.controller === true)?.uid;
  if (controllerUid !== undefined && controllerUid !== app.metadata.uid) {
    throw new Error(`${resource.kind} ${current.metadata.namespace}/${current.metadata.name} is controlled by another object (uid ${controllerUid})`);
  }
  if (controllerUid !== undefined && same(current, desired)) return undefined;
  const patch = { ...patchOf(current, desired), metadata: { resourceVersion: current.metadata.resourceVersion, ownerReferences: desired.metadata.ownerReferences } };
  await writes.patch(resource, current, { type: 'merge', patch });
  return 'updated';
}

function desiredConfigMap(app: App): ConfigMap {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: childMeta(app, configName(app.metadata.name)), data: { ...app.spec?.config } };
}

function desiredService(app: App): Service {
  const port = portOf(app);
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: childMeta(app, app.metadata.name),
    spec: { selector: { app: app.metadata.name }, ports: [{ name: 'http', port, targetPort: port }] },
  };
}

function childMeta(app: App, name: string): { name: string; namespace?: string; ownerReferences: OwnerReference[] } {
  const owner: OwnerReference = { apiVersion: apiVersionOf(apps), kind: apps.kind, name: app.metadata.name, uid: app.metadata.uid ?? '', controller: true, blockOwnerDeletion: true };
  return { name, namespace: app.metadata.namespace, ownerReferences: [owner] };
}

const sameConfig = (current: ConfigMap, desired: ConfigMap): boolean => sameRecord(current.data, desired.data);

/** The fields this operator sets; the API server's defaults (protocol, clusterIP, type) are left to it. */
function sameService(current: Service, desired: Service): boolean {
  const [port, ...others] = current.spec?.ports ?? [];
  const wanted = desired.spec?.ports?.[0];
  return others.length === 0 && port?.name === wanted?.name && port?.port === wanted?.port && String(port?.targetPort) === String(wanted?.targetPort) && sameRecord(current.spec?.selector, desired.spec?.selector);
}

/** A merge patch sets `data` key by key: someone else's keys become null, which removes them. */
const configPatch = (current: ConfigMap, desired: ConfigMap): Record<string, unknown> => ({ data: { ...nullsFor(current.data), ...desired.data } });

/** `ports` is a list, which a merge patch replaces whole; `selector` merges key by key. */
const servicePatch = (current: Service, desired: Service): Record<string, unknown> => ({
  spec: { selector: { ...nullsFor(current.spec?.selector), ...desired.spec?.selector }, ports: desired.spec?.ports },
});

function logOutcome(log: (line: string) => void, kind: string, object: KubeObject, outcome: Outcome): void {
  if (outcome !== undefined) log(`${outcome} ${kind} ${object.metadata.namespace}/${object.metadata.name}`);
}

function portOf(app: App): number {
  return app.spec?.port ?? 8080;
}

function sameRecord(actual: Readonly<Record<string, string>> | undefined, wanted: Readonly<Record<string, string>> | undefined): boolean {
  const keys = Object.keys(actual ?? {});
  return keys.length === Object.keys(wanted ?? {}).length && keys.every((key) => actual?.[key] === wanted?.[key]);
}

function nullsFor(record: Readonly<Record<string, string>> | undefined): Record<string, null> {
  return Object.fromEntries(Object.keys(record ?? {}).map((key) => [key, null]));
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Resolves when `signal` aborts (at once if it has); never without a signal. */
function aborted(signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return new Promise<void>(() => undefined);
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
