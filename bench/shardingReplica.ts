/**
 * One replica of bench/sharding.ts, in its own process (forked from the benchmark's build, with
 * `--expose-gc`): it caches its share of the pods with a sharded informer, reports its figures once
 * it serves the buckets the placement gives it and its cache holds them, then (when told to) times
 * the updates of its pods until its cache holds their last versions.
 *
 * Every 30 s until settled it prints what it is doing, read live: the buckets it serves and was
 * placed, its cache (pods, synced, when it last changed), the reflector's phase (listing since
 * when, items so far, failed attempts, the last error) and how often its bucket set changed and
 * why. A relist that starts over because the replica lost its buckets (a Lease renewed late on a
 * busy machine) shows there, and is told apart from a slow list.
 */
import { firstValueFrom, filter } from 'rxjs';
import type { KubeObject } from '../lib/base/object';
import { pods } from '../lib/resources/builtins';
import { bucketsOf } from '../lib/sharding/placement';
import { shardedInformer, type ShardedInformer } from '../lib/sharding/shardedInformer';
import type { InformerHealth } from '../lib/reflector/health';
import type { Snapshot } from '../lib/store/snapshot';
import { loopbackKubeConfig } from '../apiserver/src/kubeConfig';
import { replicaShard, type ReplicaCache, type RingTimings } from './shardReplica';

export const BUCKETS = 64;
/** Short ring timings, so that the loopback runs settle quickly. */
export const TIMINGS: RingTimings = { leaseDuration: 5_000, renewDeadline: 4_000, retryPeriod: 1_000 };
/** A label shard's Lease is a leader election's, whose holder stops renewDeadline + retryPeriod after its last renewal: less than leaseDuration. */
const LABEL_TIMINGS = { leaseDuration: 6_000, renewDeadline: 4_000, retryPeriod: 1_000 } as const;

export type ShardingMode = 'server' | 'client' | 'label';

/** Parent → replica, as its one argument (JSON). */
export interface ReplicaConfig {
  readonly podsUrl: string;
  readonly leasesUrl: string;
  readonly id: string;
  readonly members: readonly string[];
  readonly mode: ShardingMode;
  readonly ring: string;
  readonly leaseNamespace: string;
  readonly cache: ReplicaCache;
  /** How long a list may go without a byte (ms). */
  readonly listPageTimeoutMs: number;
  /** The bucket modes' ring timings; the library's defaults when absent. */
  readonly timings?: RingTimings;
  /** An update phase follows: the replica watches its changes for the updated pods (not otherwise: that is a callback per pod listed). */
  readonly updates: boolean;
}

/** Parent → replica: the updates of this replica's pods, and the `bench` label each pod ends with (by namespace/name). */
export type ReplicaCommand =
  /** Every replica is ready: join the ring now (so that none claims every bucket before the others have started). */
  | { readonly kind: 'start' }
  | { readonly kind: 'expect'; readonly updates: number; readonly finals: Readonly<Record<string, string>>; readonly sentAt: number }
  | { readonly kind: 'report-missing' };

/** What a replica measured once settled. */
export interface SettledFigures {
  /** Pods in its cache. */
  readonly objects: number;
  /** Heap used after a full GC. */
  readonly heapBytes: number;
  /** That, minus the heap before the informer started: the cache's share. */
  readonly cacheHeapBytes: number;
  /** The process's peak resident set so far. */
  readonly peakRssBytes: number;
  /** From subscribing to settled: wall time, and this process's CPU (user + system). */
  readonly syncMs: number;
  readonly cpuMs: number;
  /** The longest the event loop went without a turn, from joining to settled (the stall of swapping in the list among them). */
  readonly maxStallMs: number;
  /** Pods in its cache outside its buckets: 0, or the run fails. */
  readonly foreignPods: number;
  /** How often its bucket set changed on the way (acquired or released events). */
  readonly bucketChanges: number;
  /** Those changes: `acquired 16 at 1.2 s`, `released 30 (rebalanced) at 2.0 s` (from joining). */
  readonly bucketEvents: readonly string[];
}

/** Replica → parent. */
export type ReplicaReport =
  /** Loaded, informer built: waiting for `start`. */
  | { readonly kind: 'ready' }
  | ({ readonly kind: 'settled' } & SettledFigures)
  | { readonly kind: 'applied'; readonly updates: number; readonly firstAt: number; readonly lastAt: number }
  | { readonly kind: 'missing'; readonly id: string; readonly pending: number; readonly example: string | undefined };

const STALL_TICK_MS = 100;
const keyOf = (pod: KubeObject): string => `${pod.metadata.namespace}/${pod.metadata.name}`;
const benchLabel = (pod: KubeObject | undefined): string | undefined => pod?.metadata.labels?.['bench'];

function heapAfterGc(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}

const cpuMsNow = (): number => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** The informer, what "settled" means for it, and the live state its progress line prints. */
interface ReplicaShard {
  readonly shard: Pick<ShardedInformer<KubeObject>, 'informer$' | 'changes$' | 'health$'>;
  /** Synced, and serving exactly the buckets placed on it (label mode: holding any pod). O(1): it runs on the emission. */
  readonly settled: (snapshot: Snapshot<KubeObject>) => boolean;
  /** The pods of `snapshot` outside this replica's buckets (it must hold none), counted in slices between turns of the event loop. */
  readonly foreign: (snapshot: Snapshot<KubeObject>) => Promise<number>;
  readonly describe: () => string;
  /** The acquired and released events so far, each with when it came (seconds from joining). */
  readonly bucketEvents: () => readonly string[];
}

/** @param sinceJoined ms since the replica joined the ring (started its cache). */
function shardOf(config: ReplicaConfig, sinceJoined: () => number): ReplicaShard {
  const ring = { name: config.ring, namespace: config.leaseNamespace };
  if (config.mode === 'label') {
    const kubeConfig = loopbackKubeConfig({ url: config.podsUrl, tls: false, token: undefined });
    const labelShard = shardedInformer<KubeObject>(kubeConfig, pods, { mode: 'label', ring, identity: config.id, ...LABEL_TIMINGS, pageSize: 500 });
    // Not leading yet is a synced, empty cache; leading swaps in the whole list at once.
    return { shard: labelShard, settled: (s) => s.synced && s.size > 0, foreign: () => Promise.resolve(0), describe: () => 'label shard', bucketEvents: () => [] };
  }
  const placed = bucketsOf(config.id, config.members, BUCKETS).join();
  const shard = replicaShard({
    podsUrl: config.podsUrl,
    leasesUrl: config.leasesUrl,
    identity: config.id,
    ring,
    buckets: BUCKETS,
    mode: config.mode,
    cache: config.cache,
    ...(config.timings === undefined ? {} : { timings: config.timings }),
    pageSize: 500,
    listPageTimeoutMs: config.listPageTimeoutMs,
  });
  const events: string[] = [];
  const released = new Map<string, number>();
  shard.ownership$.subscribe((event) => {
    if (event.type !== 'acquired' && event.type !== 'released') return;
    const at = (sinceJoined() / 1000).toFixed(1);
    events.push(`${event.type} ${event.buckets.length}${event.type === 'released' ? ` (${event.reason})` : ''} at ${at} s`);
    if (event.type === 'released') released.set(event.reason, (released.get(event.reason) ?? 0) + 1);
  });
  const settled = (s: Snapshot<KubeObject>): boolean => s.synced && shard.owned().join() === placed;
  // Hashing every pod takes seconds at a million on a busy machine: in one go, on the emission,
  // it would add to the stall of swapping in the list, and miss the renew deadline.
  const foreign = async (s: Snapshot<KubeObject>): Promise<number> => {
    let count = 0;
    let sinceYield = 0;
    for (const pod of s.values()) {
      if (!shard.owns(pod)) count++;
      if (++sinceYield === 10_000) {
        sinceYield = 0;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    return count;
  };
  const describe = (): string => {
    const reasons = [...released].map(([reason, count]) => `${reason} ×${count}`).join(', ');
    return `serves ${shard.owned().length} buckets (placed ${placed.split(',').length}); bucket set changed ${events.length} times${reasons === '' ? '' : ` (released: ${reasons})`}`;
  };
  return { shard, settled, foreign, describe, bucketEvents: () => events };
}

/** The live state of a replica that has not settled yet, one line. */
function progressLine(id: string, describe: string, current: Snapshot<KubeObject> | undefined, changedAt: number, health: InformerHealth | undefined): string {
  const cache = current === undefined ? 'no cache yet' : `cache ${current.size} pods, synced ${current.synced}, last changed ${((Date.now() - changedAt) / 1000).toFixed(0)} s ago`;
  const reflector =
    health === undefined
      ? 'reflector idle'
      : `${health.phase} for ${((Date.now() - health.since) / 1000).toFixed(0)} s${health.listedItems === undefined ? '' : ` (${health.listedItems} items so far)`}${health.attempt > 0 ? `, attempt ${health.attempt + 1}` : ''}${health.lastError === undefined ? '' : `, last error: ${health.lastError.message.split('\n')[0]}`}`;
  return `${id}: ${describe}; ${cache}; ${reflector}\n`;
}

async function replica(config: ReplicaConfig): Promise<void> {
  const send = (report: ReplicaReport): void => void process.send!(report);
  const { id } = config;
  // The baseline: client-node loaded and the informer built, nothing listed yet.
  let startedAt = 0;
  const { shard, settled, foreign, describe, bucketEvents } = shardOf(config, () => Date.now() - startedAt);
  await new Promise<void>((resolve) => {
    const onStart = (command: ReplicaCommand): void => {
      if (command.kind !== 'start') return;
      process.off('message', onStart);
      resolve();
    };
    process.on('message', onStart);
    send({ kind: 'ready' });
  });
  const before = heapAfterGc();
  startedAt = Date.now();
  const cpuBefore = cpuMsNow();
  let firstAt = 0;
  let expected: Extract<ReplicaCommand, { kind: 'expect' }> | undefined;
  /** The pods whose last version the cache does not hold yet: namespace/name → their final `bench` label. */
  const pending = new Map<string, string>();
  /** When the cache last changed: the end, when every update was applied before the command arrived. */
  let changedAt = Date.now();
  const finish = (): void => {
    if (expected !== undefined && pending.size === 0) send({ kind: 'applied', updates: expected.updates, firstAt, lastAt: changedAt });
  };
  let current: Snapshot<KubeObject> | undefined;
  let health: InformerHealth | undefined;
  const watchingHealth = shard.health$.subscribe((h) => (health = h));
  const tracking = shard.informer$.subscribe((s) => {
    current = s;
    changedAt = Date.now();
  });
  const counting = !config.updates
    ? undefined
    : shard.changes$.subscribe((change) => {
        if (change.type === 'delete' || pending.size === 0) return;
        const key = keyOf(change.object);
        if (pending.get(key) !== benchLabel(change.object)) return;
        pending.delete(key);
        finish();
      });
  const progress = setInterval(() => process.stderr.write(progressLine(id, describe(), current, changedAt, health)), 30_000);
  // The longest the event loop went without a turn (a tick is due every STALL_TICK_MS).
  let maxStallMs = 0;
  let tickedAt = Date.now();
  const stalls = setInterval(() => {
    const now = Date.now();
    maxStallMs = Math.max(maxStallMs, now - tickedAt - STALL_TICK_MS);
    tickedAt = now;
  }, STALL_TICK_MS);
  const snapshot = await firstValueFrom(shard.informer$.pipe(filter(settled)));
  const syncMs = Date.now() - startedAt;
  const cpuMs = cpuMsNow() - cpuBefore;
  clearInterval(progress);
  watchingHealth.unsubscribe();
  const foreignPods = await foreign(snapshot);
  clearInterval(stalls);
  // Let the last relist's garbage go before measuring.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const heapBytes = heapAfterGc();
  const peakRssBytes = process.resourceUsage().maxRSS * 1024;
  send({ kind: 'settled', objects: snapshot.size, heapBytes, cacheHeapBytes: heapBytes - before, peakRssBytes, syncMs, cpuMs, maxStallMs, foreignPods, bucketChanges: bucketEvents().length, bucketEvents: bucketEvents() });
  process.on('message', (command: ReplicaCommand) => {
    if (command.kind === 'start') return;
    if (command.kind === 'report-missing') {
      send({ kind: 'missing', id, pending: pending.size, example: pending.keys().next().value });
      return;
    }
    firstAt = command.sentAt;
    // The watch and this channel race: updates applied before this message are in the cache already.
    for (const [key, final] of Object.entries(command.finals)) if (benchLabel(current?.get(key)) !== final) pending.set(key, final);
    expected = command;
    finish();
  });
  process.on('disconnect', () => {
    counting?.unsubscribe();
    tracking.unsubscribe();
    process.exit(0);
  });
}

if (require.main === module) {
  replica(JSON.parse(process.argv[2]!) as ReplicaConfig).catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
}
