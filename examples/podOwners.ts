/**
 * Pods per owner, from metadata alone: a metadata-only informer (client-go's `metadatainformer`)
 * caches each pod's `metadata` and nothing else, which is all that counting pods per ReplicaSet,
 * Job or node-less owner needs, at a fraction of the memory of whole pods (docs/guides/metadata-only.md).
 * Shows `metadataOnly`, the owner index on `PartialObjectMetadata`, and `changes$`.
 *
 * Run: `npx ts-node examples/run/podOwners.ts [namespace]` (current kubeconfig context).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { lastValueFrom, map, take, tap, toArray } from 'rxjs';
import { informer, OWNER_INDEX, ownerIndex, pods, waitForSync, type Change, type PartialObjectMetadata } from 'rx-informer';

/** Options of {@link main}. */
export interface PodOwnersOptions {
  /** Count the pods of one namespace. Default: all namespaces. */
  readonly namespace?: string;
  /** Stop after this many changes. Default 5. */
  readonly changes?: number;
  /** Give up when the first list has not completed after this many ms. Default 30 000. */
  readonly syncTimeout?: number;
  /** Where lines go. Default `console.log`. */
  readonly log?: (line: string) => void;
}

/** What {@link main} saw once synced: pods per owner (`Kind/name`, or `(none)`), and the changes after. */
export interface PodOwnersResult {
  readonly owners: Readonly<Record<string, number>>;
  readonly changes: readonly string[];
}

/** Counts pods per owner, then reports `options.changes` changes with the owner they belong to. */
export async function main(kubeConfig: KubeConfig, options: PodOwnersOptions = {}): Promise<PodOwnersResult> {
  const log = options.log ?? ((line: string) => console.log(line));
  const podMetadata = informer(kubeConfig, pods, { namespace: options.namespace, metadataOnly: true, indexers: { [OWNER_INDEX]: ownerIndex } });
  const cache = podMetadata.informer$.subscribe();
  try {
    const [snapshot] = await waitForSync([podMetadata], { timeout: options.syncTimeout ?? 30_000 });
    const owners: Record<string, number> = {};
    for (const pod of snapshot.list()) owners[ownerOf(pod)] = (owners[ownerOf(pod)] ?? 0) + 1;
    log(`synced: ${snapshot.size} pods, ${snapshot.indexValues(OWNER_INDEX).length} owners`);
    for (const owner of Object.keys(owners).sort()) log(`  ${owner}: ${owners[owner]}`);

    const changes = await lastValueFrom(
      podMetadata.changes$.pipe(
        map(describe),
        tap(log),
        take(options.changes ?? 5),
        toArray(),
      ),
      { defaultValue: [] },
    );
    return { owners, changes };
  } finally {
    cache.unsubscribe(); // aborts the watch
  }
}

/** The controlling owner as `Kind/name`; the objects hold nothing but metadata. */
function ownerOf(pod: PartialObjectMetadata): string {
  const owner = pod.metadata.ownerReferences?.find((reference) => reference.controller === true);
  return owner === undefined ? '(none)' : `${owner.kind}/${owner.name}`;
}

function describe(change: Change<PartialObjectMetadata>): string {
  return `${change.type} ${change.key} (${ownerOf(change.object)})`;
}
