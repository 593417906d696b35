/**
 * A leader-elected controller on a work queue: every Namespace labelled `team=<name>` gets a
 * ConfigMap `team` holding `{ team: <name> }`; when the label goes, so does the ConfigMap.
 *
 * - Run several replicas: they elect a leader on a Lease (`leaderElection`). Every replica keeps
 *   its caches warm; only the leader reconciles (`whileLeader`), and when it stops, it lets its
 *   running reconciles finish, then releases the Lease, so another takes over within a retry
 *   period of that (within the lease duration if it dies), never while one still runs.
 * - `changedKeys` turns both informers into keys (a ConfigMap stands for its namespace);
 *   `reconcile` keeps one entry per key, never works on one namespace twice at once, and retries
 *   a failed reconcile with backoff (5 ms doubling per failure, 10 per second overall).
 * - Reconciles read the latest caches when they start, and write only the difference, through
 *   client-node's typed client (`CoreV1Api`; its patches need their content type set).
 *
 * Run: `npx ts-node examples/run/teamNamespaces.ts [identity]` (current kubeconfig context;
 * Ctrl-C stops and hands over). Start it twice to watch the election.
 */
import { CoreV1Api, PatchStrategy, setHeaderOptions, type KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { hostname } from 'node:os';
import { merge, Subscription } from 'rxjs';
import {
  configMaps,
  dropManagedFields,
  informer,
  namespaces,
  waitForSync,
  type ConfigMap,
  type Logger,
  type Namespace,
  type Snapshot,
} from 'rx-informer';
import { changedKeys, reconcile } from 'rx-informer/workqueue';
import { leaderElection, whileLeader, type LeaderElectionOptions } from 'rx-informer/leader-election';
import { errorLine, expectingStatus } from './clientNodeErrors';

/** The label a Namespace carries to get a team ConfigMap. */
export const TEAM_LABEL = 'team';
/** The ConfigMap kept in each team Namespace. */
export const CONFIG_MAP = 'team';
/** Marks the ConfigMaps this controller owns; its ConfigMap informer watches only these. */
export const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'team-namespaces' } as const;

/** Options of {@link main}. */
export interface TeamNamespacesOptions {
  /** This replica's identity in the election. Default: host name and process id. */
  readonly identity?: string;
  /** Where the Lease lives. Default 'default'. */
  readonly leaseNamespace?: string;
  /** Election timings (ms); client-go's defaults otherwise (15 s, 10 s, 2 s). */
  readonly timings?: Pick<LeaderElectionOptions, 'leaseDuration' | 'renewDeadline' | 'retryPeriod'>;
  /** Reconcile every namespace again this often (ms). Default 600 000. */
  readonly resyncPeriod?: number;
  /** How long to wait for the first lists. Default 30 000 ms. */
  readonly syncTimeout?: number;
  /** Stops the replica; `main` resolves once its reconciles have settled and the Lease is let go. */
  readonly signal?: AbortSignal;
  /** Where progress lines go. Default `console.log`. */
  readonly log?: (line: string) => void;
  /** The informers', queue's and election's logger. Default: warnings and errors to stderr (`silentLogger` for none). */
  readonly logger?: Logger;
}

/**
 * Runs one replica until `options.signal` aborts. Rejects when the caches cannot sync within
 * `syncTimeout` (a 403 from RBAC), with the informer's error.
 */
export async function main(kubeConfig: KubeConfig, options: TeamNamespacesOptions = {}): Promise<void> {
  const log = options.log ?? ((line: string) => console.log(line));
  const { logger } = options;
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const namespaceInformer = informer(kubeConfig, namespaces, { logger, transform: dropManagedFields });
  const configMapInformer = informer(kubeConfig, configMaps, { logger, transform: dropManagedFields, labelSelector: selectorOf(MANAGED_BY) });

  const caches = new Subscription();
  let namespacesNow: Snapshot<Namespace> | undefined;
  let configMapsNow: Snapshot<ConfigMap> | undefined;
  caches.add(namespaceInformer.informer$.subscribe((snapshot) => (namespacesNow = snapshot)));
  caches.add(configMapInformer.informer$.subscribe((snapshot) => (configMapsNow = snapshot)));
  let election: Subscription | undefined;
  try {
    await waitForSync([namespaceInformer, configMapInformer], { timeout: options.syncTimeout ?? 30_000, signal: options.signal });
    log('caches synced');

    // A namespace's key is its name (it is cluster-scoped); a ConfigMap stands for its namespace.
    const keys$ = merge(
      namespaceInformer.informer$.pipe(changedKeys({ resyncPeriod: options.resyncPeriod ?? 600_000 })),
      configMapInformer.informer$.pipe(changedKeys({ keysOf: (configMap: ConfigMap) => [configMap.metadata.namespace ?? ''] })),
    );
    // Only the leader reconciles. Each term's queue gets the term's signal: when the term ends
    // (the Lease is lost, or this replica stops), running reconciles finish and the queue
    // completes, and only then does another replica get the Lease.
    const identity = options.identity ?? `${hostname()}-${process.pid}`;
    await new Promise<void>((resolve, reject) => {
      election = leaderElection(kubeConfig, { namespace: options.leaseNamespace ?? 'default', name: 'team-namespaces', identity, logger, ...options.timings })
        .pipe(
          whileLeader(
            ({ signal }) =>
              keys$.pipe(
                reconcile(
                  async (key) => {
                    // Read the latest caches when the work starts, not the state an event carried.
                    const outcome = await reconcileNamespace(core, namespacesNow?.get(key), configMapsNow?.get(`${key}/${CONFIG_MAP}`), key);
                    if (outcome !== undefined) log(`${outcome} ${CONFIG_MAP} in ${key}`);
                  },
                  { concurrency: 2, logger, name: 'team-namespaces', signal },
                ),
              ),
            { signal: options.signal, logger },
          ),
        )
        .subscribe({
          next: (event) => {
            if (event.type === 'leading') log('leading');
            else if (event.type === 'following') log(`following ${event.holder ?? '(nobody)'}`);
            else if (event.type === 'lost') log(`lost the lease (${event.reason})`);
            else if (event.type === 'stopped') log(`work settled${event.settled ? '' : ' (not in time: the lease is left to expire)'}`);
            else if (event.value.type === 'failed') {
              const { key, retryIn, error } = event.value;
              log(`retrying ${key} in ${retryIn} ms: ${errorLine(error)}`);
            }
          },
          // After `stopped`: the work has settled and the Lease is being released.
          complete: resolve,
          error: reject,
        });
    });
  } finally {
    // Already ended after a stop; on a failure, unsubscribing stops the work, then lets the Lease go.
    election?.unsubscribe();
    caches.unsubscribe();
    log('stopped');
  }
}

/** What one reconcile did to the namespace's ConfigMap. */
type Outcome = 'created' | 'updated' | 'deleted' | undefined;

/** Makes the namespace's ConfigMap match its team label: present with `{ team }`, or absent. */
async function reconcileNamespace(core: CoreV1Api, namespace: Namespace | undefined, current: ConfigMap | undefined, name: string): Promise<Outcome> {
  const team = namespace?.metadata.deletionTimestamp === undefined ? namespace?.metadata.labels?.[TEAM_LABEL] : undefined;
  if (team === undefined) {
    if (current === undefined) return undefined;
    await expectingStatus(404, core.deleteNamespacedConfigMap({ namespace: name, name: CONFIG_MAP }));
    return 'deleted';
  }
  if (current?.data?.team === team) return undefined;
  if (current === undefined) {
    const body: V1ConfigMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: CONFIG_MAP, namespace: name, labels: { ...MANAGED_BY } }, data: { team } };
    // The cache lags our own writes, or someone made one by hand (409): take it over with a patch.
    if (await expectingStatus(409, core.createNamespacedConfigMap({ namespace: name, body }))) return 'created';
  }
  // A thrown error (a 500, a dropped connection) is retried by reconcile() with backoff. The
  // header makes it a merge patch: client-node's patch methods send a JSON Patch by default.
  await core.patchNamespacedConfigMap(
    { namespace: name, name: CONFIG_MAP, body: { metadata: { labels: MANAGED_BY }, data: { team } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  return 'updated';
}

function selectorOf(labels: Readonly<Record<string, string>>): string {
  return Object.entries(labels)
    .map(([key, value]) => `${key}=${value}`)
    .join(',');
}
