/**
 * A pod watcher: list and watch pods, wait for the cache, print what it holds, then print each
 * change as it happens. Shows the informer's streams: `informer$` (keeps the cache), `health$`
 * (what the reflector is doing), `waitForSync` (sync with a deadline) and `changes$` (changes).
 *
 * Run: `npx ts-node examples/run/podWatcher.ts [namespace]` (current kubeconfig context).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { distinctUntilChanged, lastValueFrom, map, take, tap, toArray } from 'rxjs';
import { dropManagedFields, informer, NAMESPACE_INDEX, pods, waitForSync, type Change, type Pod } from 'rx-informer';

/** Options of {@link main}. */
export interface PodWatcherOptions {
  /** Watch one namespace. Default: all namespaces. */
  readonly namespace?: string;
  /** Stop after this many changes. Default 10. */
  readonly changes?: number;
  /** Give up when the first list has not completed after this many ms (RBAC, a dead server). Default 30 000. */
  readonly syncTimeout?: number;
  /** Where lines go. Default `console.log`. */
  readonly log?: (line: string) => void;
}

/** What {@link main} saw. */
export interface PodWatcherResult {
  /** Pods in the cache once synced. */
  readonly synced: number;
  /** The changes after the sync, as `add ns/name`, `update ns/name`, `delete ns/name`. */
  readonly changes: readonly string[];
}

/** Watches pods until `options.changes` changes have been seen after the initial sync. */
export async function main(kubeConfig: KubeConfig, options: PodWatcherOptions = {}): Promise<PodWatcherResult> {
  const log = options.log ?? ((line: string) => console.log(line));
  // managedFields is server-side-apply bookkeeping nobody here reads: do not keep it in memory.
  const podInformer = informer(kubeConfig, pods, { namespace: options.namespace, transform: dropManagedFields });

  const health = podInformer.health$
    .pipe(
      map((report) => `${report.phase}${report.lastError === undefined ? '' : ` (${report.lastError.message})`}`),
      distinctUntilChanged(),
    )
    .subscribe((line) => log(`health: ${line}`));
  const cache = podInformer.informer$.subscribe();
  try {
    const [snapshot] = await waitForSync([podInformer], { timeout: options.syncTimeout ?? 30_000 });
    const namespaces = snapshot.indexValues(NAMESPACE_INDEX);
    log(`synced: ${snapshot.size} pods in ${namespaces.length} namespaces at resourceVersion ${snapshot.resourceVersion}`);
    for (const namespace of namespaces.sort()) log(`  ${namespace}: ${snapshot.byIndex(NAMESPACE_INDEX, namespace).length}`);

    const changes = await lastValueFrom(
      podInformer.changes$.pipe(
        map(describe),
        tap(log),
        take(options.changes ?? 10),
        toArray(),
      ),
      { defaultValue: [] },
    );
    return { synced: snapshot.size, changes };
  } finally {
    health.unsubscribe();
    cache.unsubscribe(); // aborts the watch
  }
}

function describe(change: Change<Pod>): string {
  return `${change.type} ${change.key}`;
}
