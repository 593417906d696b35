/**
 * A small controller: for every Deployment, keep a ConfigMap `<name>-info` in its namespace with
 * `data: { replicas, image }`, owned by the Deployment through `ownerReferences`.
 *
 * - Two informers (Deployments, and ConfigMaps indexed by owner) share nothing but the KubeConfig.
 * - Workers start only once both caches are synced: a ConfigMap whose owner is not cached yet
 *   must not look orphaned.
 * - `handle()` gives each handler its own coalescing queue and serial calls, so it is the work
 *   queue: a Deployment that changes three times while a write is in flight is reconciled once more.
 * - The resync period re-delivers every Deployment, repairing any drift a missed event left.
 * - A ConfigMap edited or deleted by someone else is put back (its owner is reconciled).
 * - Writes go through client-node's typed client (`CoreV1Api`); its `patchNamespaced*` methods
 *   send a JSON Patch unless told otherwise, so the merge patch below sets its content type.
 *
 * Run: `npx ts-node examples/run/configMapPerDeployment.ts [namespace]` (current kubeconfig
 * context; Ctrl-C stops).
 */
import { CoreV1Api, PatchStrategy, setHeaderOptions, type KubeConfig, type V1ConfigMap, type V1OwnerReference } from '@kubernetes/client-node';
import { Subscription } from 'rxjs';
import {
  apiVersionOf,
  configMaps,
  deployments,
  dropManagedFields,
  informer,
  NAMESPACE_INDEX,
  namespaceIndex,
  OWNER_INDEX,
  ownerIndex,
  splitKey,
  waitForSync,
  type ConfigMap,
  type Deployment,
  type Logger,
  type Snapshot,
} from 'rx-informer';
import { errorLine, expectingStatus } from './clientNodeErrors';

/** Options of {@link main}. */
export interface ConfigMapControllerOptions {
  /** Watch one namespace. Default: all namespaces. */
  readonly namespace?: string;
  /** Re-reconcile every Deployment this often (ms). Default 30 000. */
  readonly resyncPeriod?: number;
  /** How long to wait for the first lists. Default 30 000 ms. */
  readonly syncTimeout?: number;
  /** Stops the controller; `main` resolves once everything is released. */
  readonly signal?: AbortSignal;
  /** Where progress lines go. Default `console.log`. */
  readonly log?: (line: string) => void;
  /** The informers' logger. Default: warnings and errors to stderr (`silentLogger` for none). */
  readonly logger?: Logger;
}

/** The name of the ConfigMap kept for a Deployment. */
export const infoName = (deploymentName: string): string => `${deploymentName}-info`;

/** What the ConfigMap of a Deployment should hold. */
export function desiredData(deployment: Deployment): Record<string, string> {
  return { replicas: String(deployment.spec?.replicas ?? 1), image: firstImage(deployment) };
}

/**
 * Runs the controller until `options.signal` aborts. Rejects when the caches cannot sync within
 * `syncTimeout` (a 403 from RBAC, a wrong namespace), with the informer's error.
 */
export async function main(kubeConfig: KubeConfig, options: ConfigMapControllerOptions = {}): Promise<void> {
  const log = options.log ?? ((line: string) => console.log(line));
  const { namespace, logger } = options;
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const deploymentInformer = informer(kubeConfig, deployments, { namespace, logger, transform: dropManagedFields });
  const configMapInformer = informer(kubeConfig, configMaps, {
    namespace,
    logger,
    transform: dropManagedFields,
    indexers: { [NAMESPACE_INDEX]: namespaceIndex, [OWNER_INDEX]: ownerIndex },
  });

  const running = new Subscription();
  let deploymentsNow: Snapshot<Deployment> | undefined;
  let configMapsNow: Snapshot<ConfigMap> | undefined;
  running.add(deploymentInformer.informer$.subscribe((snapshot) => (deploymentsNow = snapshot)));
  running.add(configMapInformer.informer$.subscribe((snapshot) => (configMapsNow = snapshot)));
  try {
    await waitForSync([deploymentInformer, configMapInformer], { timeout: options.syncTimeout ?? 30_000, signal: options.signal });
    log('caches synced');

    // Reconciles of one Deployment never overlap: the two handlers below may ask at once.
    const serial = new KeyedSerializer();
    // A failed reconcile is logged and left to the next event or resync to retry.
    const reconcile = (key: string): Promise<void> =>
      serial
        .run(key, async () => {
          // Read the latest caches when the work starts, not the state the event carried.
          const outcome = await reconcileOne(core, key, deploymentsNow?.get(key), configMapsNow);
          if (outcome !== undefined) log(`${outcome} ${infoName(splitKey(key).name)} for ${key}`);
        })
        .catch((error: unknown) => log(`reconcile ${key} failed: ${errorLine(error)}`));

    running.add(
      deploymentInformer
        .handle(
          {
            onAdd: (_deployment, { key }) => reconcile(key),
            onUpdate: (_old, _deployment, { key }) => reconcile(key),
            onDelete: (_deployment, { key }) => reconcile(key),
          },
          { resyncPeriod: options.resyncPeriod ?? 30_000 },
        )
        .subscribe(),
    );
    running.add(
      configMapInformer
        .handle({
          // The initial adds find ConfigMaps whose Deployment went while the controller was down.
          onAdd: (configMap) => ownerKeys(configMap).forEach((key) => void reconcile(key)),
          onUpdate: (_old, configMap) => ownerKeys(configMap).forEach((key) => void reconcile(key)),
          onDelete: (configMap) => ownerKeys(configMap).forEach((key) => void reconcile(key)),
        })
        .subscribe(),
    );

    await aborted(options.signal);
  } finally {
    running.unsubscribe();
    log('stopped');
  }
}

/** What one reconcile did: created, updated or deleted the ConfigMap, or nothing. */
type Outcome = 'created' | 'updated' | 'deleted' | undefined;

/** Makes the ConfigMap of the Deployment under `key` match it, or removes it when the Deployment is gone. */
async function reconcileOne(core: CoreV1Api, key: string, deployment: Deployment | undefined, cached: Snapshot<ConfigMap> | undefined): Promise<Outcome> {
  const { namespace, name } = splitKey(key);
  const configMapName = infoName(name);
  const current = cached?.get(`${namespace}/${configMapName}`);

  if (deployment === undefined || deployment.metadata.deletionTimestamp !== undefined) {
    // On a real cluster the garbage collector deletes owned objects too; deleting first is harmless.
    if (current === undefined) return undefined;
    await expectingStatus(404, core.deleteNamespacedConfigMap({ namespace, name: configMapName }));
    return 'deleted';
  }

  const data = desiredData(deployment);
  const ownerReferences: V1OwnerReference[] = [
    { apiVersion: apiVersionOf(deployments), kind: deployments.kind, name, uid: deployment.metadata.uid ?? '', controller: true, blockOwnerDeletion: true },
  ];
  if (current !== undefined && sameData(current.data, data) && current.metadata.ownerReferences?.[0]?.uid === deployment.metadata.uid) return undefined;

  if (current === undefined) {
    const body: V1ConfigMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: configMapName, namespace, ownerReferences }, data };
    // The cache lags our own writes: the ConfigMap may exist already (409). Patch it instead.
    if (await expectingStatus(409, core.createNamespacedConfigMap({ namespace, body }))) return 'created';
  }
  // A merge patch replaces `data` and `ownerReferences` whole and needs no resourceVersion.
  // Without the header, client-node would send the body as a JSON Patch, which it is not.
  await core.patchNamespacedConfigMap(
    { namespace, name: configMapName, body: { metadata: { ownerReferences }, data: { ...nullsFor(current?.data), ...data } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  return 'updated';
}

/** Keys of the Deployments that own a ConfigMap this controller made. */
function ownerKeys(configMap: ConfigMap): string[] {
  const namespace = configMap.metadata.namespace ?? '';
  return (configMap.metadata.ownerReferences ?? [])
    .filter((owner) => owner.kind === deployments.kind && owner.controller === true && infoName(owner.name) === configMap.metadata.name)
    .map((owner) => `${namespace}/${owner.name}`);
}

function firstImage(deployment: Deployment): string {
  const podSpec = deployment.spec?.template?.spec as { containers?: readonly { image?: unknown }[] } | undefined;
  const image = podSpec?.containers?.[0]?.image;
  return typeof image === 'string' ? image : '';
}

function sameData(actual: Readonly<Record<string, string>> | undefined, wanted: Record<string, string>): boolean {
  const keys = Object.keys(actual ?? {});
  return keys.length === Object.keys(wanted).length && keys.every((key) => actual?.[key] === wanted[key]);
}

/** A merge patch removes a key by setting it to null: drop keys someone else added. */
function nullsFor(data: Readonly<Record<string, string>> | undefined): Record<string, null> {
  return Object.fromEntries(Object.keys(data ?? {}).map((key) => [key, null]));
}

/** Resolves when `signal` aborts (at once if it has); never without a signal. */
function aborted(signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return new Promise<void>(() => undefined);
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/** Runs tasks one after another per key; different keys run concurrently. */
class KeyedSerializer {
  private readonly tails = new Map<string, Promise<void>>();

  run(key: string, task: () => Promise<void>): Promise<void> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const next = previous.then(task, task);
    const tail = next.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }
}
