/**
 * Per-replica figures of sharded informers: `node -r ts-node/register/transpile-only bench/sharding.ts`.
 *
 * One loopback API server (this process) holds `--pods` pods (the churn generator's, with
 * managedFields, ~4.4 KB each); for each replica count in `--replicas` (default 1,2,4) and each
 * mode in `--modes` (default server,client,label), that many replica processes (forked,
 * `--expose-gc`) run a sharded pod informer on one ring. In `label` mode this process plays
 * timebertt's sharder: before the runs it labels every pod with its shard for each replica count
 * (one ring per count, `bench-label-<N>`, placing each pod where the bucket modes' placement puts
 * it, so every mode splits the pods alike), and the replicas select their label. Once every replica serves the buckets the placement
 * gives it and its cache is synced, each reports its heap after a full GC, minus its heap before
 * the informer started (the cache's share of the heap). Then this process updates `--events` pods
 * as fast as it can, and each replica reports how long it took until its cache held the last
 * version of every pod of its own that was updated (from the first update sent): its events/s.
 * The replica checks the final state, not a count of update changes: a relist folds several
 * updates of a pod into one change, and a bucket lost and won back mid-run (its Lease renewed
 * late on a busy machine) brings its pods back as adds. A run that does not finish within
 * `--timeout` seconds (default 900) fails, naming the replicas and the pods they still miss.
 * Runs are interleaved
 * (round 1 of every configuration, then round 2, ...: `--reps` rounds) and reported as ranges.
 *
 * The goal: per-replica heap ≈ 1/N of one replica's in `server` and `label` modes; `client` mode
 * decodes every event on every replica, so its events/s do not grow with N.
 *
 * Cost: `--pods 20000 --reps 1` (9 configurations) took about 6 minutes on a loaded 2-core machine;
 * `--pods 100000 --reps 1 --events 2000` (9 configurations) took 262 s on a quiet one, its largest
 * process at 1.2 GB resident (the server holds every pod; a replica gets 4 GB of heap).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import { firstValueFrom, filter } from 'rxjs';
import { pods, type Pod } from '../lib/resources/builtins';
import { bucketsOf } from '../lib/sharding/placement';
import { objectBucket } from '../lib/sharding/shardListerWatcher';
import { shardLabelOf } from '../lib/sharding/labelShard';
import { shardedInformer, type ShardFilterMode } from '../lib/sharding/shardedInformer';
import type { Snapshot } from '../lib/store/snapshot';
import { createChurn } from '../apiserver/src/churn';
import { loopbackKubeConfig } from '../apiserver/src/kubeConfig';
import { startApiServer, type ApiServer } from '../apiserver/src/server';

const BUCKETS = 64;
const TIMINGS = { leaseDuration: 5_000, renewDeadline: 4_000, retryPeriod: 1_000 } as const;

type Mode = ShardFilterMode | 'label';
/** The sharder's ring for `replicas` replicas in `label` mode: one per count, since the pods carry its label. */
const labelRing = (replicas: number): string => `bench-label-${replicas}`;
const membersOf = (replicas: number): string[] => Array.from({ length: replicas }, (_, i) => `replica-${i}`);

/** Parent → replica: the updates of this replica's pods, and the `bench` label each pod ends with (by namespace/name). */
type Command = { readonly kind: 'expect'; readonly updates: number; readonly finals: Readonly<Record<string, string>>; readonly sentAt: number };
/** Replica → parent. */
type Report =
  | { readonly kind: 'settled'; readonly heapBytes: number; readonly cacheHeapBytes: number; readonly objects: number }
  | { readonly kind: 'applied'; readonly updates: number; readonly firstAt: number; readonly lastAt: number }
  | { readonly kind: 'missing'; readonly id: string; readonly pending: number; readonly example: string | undefined };

const keyOf = (pod: Pod): string => `${pod.metadata.namespace}/${pod.metadata.name}`;
const benchLabel = (pod: Pod | undefined): string | undefined => pod?.metadata.labels?.['bench'];

function heapAfterGc(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}

/** A replica process: caches its share, reports its heap, then times the updates of its pods until its cache holds their last versions. */
async function replica(url: string, id: string, members: readonly string[], mode: Mode, ring: string, leaseNamespace: string): Promise<void> {
  const send = (report: Report): void => void process.send!(report);
  // The baseline: client-node loaded (the KubeConfig) and the informer built, nothing listed yet.
  const kubeConfig = loopbackKubeConfig({ url, tls: false, token: undefined });
  const placed = bucketsOf(id, members, BUCKETS).join();
  const ringRef = { name: ring, namespace: leaseNamespace };
  let shard: ReturnType<typeof shardedInformer<Pod>>;
  let settled: (snapshot: Snapshot<Pod>) => boolean;
  let describe: () => string;
  if (mode === 'label') {
    const labelShard = shardedInformer<Pod>(kubeConfig, pods, { mode, ring: ringRef, identity: id, ...TIMINGS, pageSize: 500 });
    shard = labelShard;
    // Not leading yet is a synced, empty cache; leading swaps in the whole list at once.
    settled = (s) => s.synced && s.size > 0;
    describe = () => 'label shard';
  } else {
    const bucketShard = shardedInformer<Pod>(kubeConfig, pods, { ring: ringRef, identity: id, buckets: BUCKETS, mode, ...TIMINGS, pageSize: 500 });
    shard = bucketShard;
    settled = (s) => s.synced && bucketShard.owned().join() === placed && [...s.values()].every((pod) => bucketShard.owns(pod));
    describe = () => `${bucketShard.owned().length} buckets (placed ${placed.split(',').length})`;
  }
  const before = heapAfterGc();
  let firstAt = 0;
  let expected: Command | undefined;
  /** The pods whose last version the cache does not hold yet: namespace/name → their final `bench` label. */
  const pending = new Map<string, string>();
  /** When the cache last changed: the end, when every update was applied before the command arrived. */
  let changedAt = 0;
  const finish = (): void => {
    if (expected !== undefined && pending.size === 0) send({ kind: 'applied', updates: expected.updates, firstAt, lastAt: changedAt });
  };
  let current: Snapshot<Pod> | undefined;
  const tracking = shard.informer$.subscribe((s) => (current = s));
  const counting = shard.changes$.subscribe((change) => {
    changedAt = Date.now();
    if (change.type === 'delete' || pending.size === 0) return;
    const key = keyOf(change.object);
    if (pending.get(key) !== benchLabel(change.object)) return;
    pending.delete(key);
    finish();
  });
  let latest = { synced: false, size: 0 };
  const progress = setInterval(() => process.stderr.write(`${id}: ${describe()}, ${latest.size} pods, synced ${latest.synced}\n`), 30_000);
  const snapshot = await firstValueFrom(
    shard.informer$.pipe(
      filter((s) => {
        latest = { synced: s.synced, size: s.size };
        return settled(s);
      }),
    ),
  );
  clearInterval(progress);
  // Let the last relist's garbage go before measuring.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const heapBytes = heapAfterGc();
  send({ kind: 'settled', heapBytes, cacheHeapBytes: heapBytes - before, objects: snapshot.size });
  process.on('message', (command: Command | { readonly kind: 'report-missing' }) => {
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
    counting.unsubscribe();
    tracking.unsubscribe();
    process.exit(0);
  });
}

interface RunResult {
  readonly replicas: number;
  readonly mode: Mode;
  readonly cacheHeapMb: number[];
  readonly objects: number[];
  readonly eventsPerSecond: number[];
}

function nextReport<K extends Report['kind']>(child: ChildProcess, kind: K): Promise<Extract<Report, { kind: K }>> {
  return new Promise((resolve, reject) => {
    const onMessage = (report: Report): void => {
      if (report.kind !== kind) return;
      child.off('message', onMessage);
      resolve(report as Extract<Report, { kind: K }>);
    };
    child.on('message', onMessage);
    child.once('exit', (code) => reject(new Error(`replica exited with ${code}`)));
  });
}

/** `work`, or an error naming each replica's missing pods once `timeoutMs` has passed. */
async function withinTimeout<T>(work: Promise<T>, timeoutMs: number, children: readonly ChildProcess[], what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const reports = children.map((child) => nextReport(child, 'missing'));
      for (const child of children) child.send({ kind: 'report-missing' });
      void Promise.all(reports).then(
        (missing) => reject(new Error(`${what}: not done after ${timeoutMs / 1000} s; ${missing.map((m) => `${m.id} misses ${m.pending} pods (e.g. ${m.example ?? '-'})`).join('; ')}`)),
        reject,
      );
    }, timeoutMs);
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}

async function runOnce(server: ApiServer, replicas: number, mode: Mode, events: number, round: number, timeoutMs: number): Promise<RunResult> {
  // A fresh ring per run (label mode: the pods' ring, with its Leases in a namespace of this round).
  const ring = mode === 'label' ? labelRing(replicas) : `bench-${mode}-${replicas}-${round}`;
  const leaseNamespace = `bench-${mode}-${replicas}-${round}`;
  const members = membersOf(replicas);
  const children = members.map((id) =>
    fork(__filename, ['--replica', server.url, id, members.join(','), mode, ring, leaseNamespace], {
      execArgv: ['-r', 'ts-node/register/transpile-only', '--expose-gc', '--max-old-space-size=4096'],
    }),
  );
  try {
    const settled = await Promise.all(children.map((child) => nextReport(child, 'settled')));
    // Updates, as fast as the store takes them; each replica applies those of its own pods.
    const all = server.store.list(pods);
    const chosen = Array.from({ length: events }, (_, i) => all[(i * 7919) % all.length]!);
    // Every mode serves the placement's buckets once settled (label mode: the sharder placed them so).
    // Unique per run: the pods keep the last run's labels.
    const tag = `${mode}-${replicas}-${round}`;
    const perReplica: Omit<Command, 'sentAt'>[] = members.map((id) => {
      const owned = new Set(bucketsOf(id, members, BUCKETS));
      const finals: Record<string, string> = {};
      let updates = 0;
      for (const [i, pod] of chosen.entries()) {
        if (!owned.has(objectBucket(pod, 'uid', BUCKETS))) continue;
        updates++;
        finals[keyOf(pod)] = `${tag}-${i}`;
      }
      return { kind: 'expect', updates, finals };
    });
    const sentAt = Date.now();
    const applied = children.map((child) => nextReport(child, 'applied'));
    children.forEach((child, i) => child.send({ ...perReplica[i]!, sentAt }));
    for (const [i, pod] of chosen.entries()) {
      const current = server.store.get(pods, pod.metadata.namespace, pod.metadata.name)!;
      server.store.update(pods, { ...current, metadata: { ...current.metadata, resourceVersion: undefined, labels: { ...current.metadata.labels, bench: `${tag}-${i}` } } });
      // Let the watches drain now and then, as a real API server's would between writes.
      if (i % 500 === 499) await new Promise((resolve) => setImmediate(resolve));
    }
    const done = await withinTimeout(Promise.all(applied), timeoutMs, children, `${mode} ×${replicas}, round ${round + 1}`);
    return {
      replicas,
      mode,
      cacheHeapMb: settled.map((report) => report.cacheHeapBytes / 2 ** 20),
      objects: settled.map((report) => report.objects),
      eventsPerSecond: done.map((report) => (report.updates * 1000) / Math.max(1, report.lastAt - report.firstAt)),
    };
  } finally {
    for (const child of children) child.disconnect();
    await Promise.all(children.map((child) => new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once('exit', resolve)))));
  }
}

/** The sharder's part in `label` mode: labels every pod with its shard in each count's ring, placed as the bucket modes place it. */
async function labelShards(server: ApiServer, replicaCounts: readonly number[]): Promise<void> {
  const owners = replicaCounts.map((replicas) => {
    const members = membersOf(replicas);
    const ownerOf: string[] = [];
    for (const id of members) for (const bucket of bucketsOf(id, members, BUCKETS)) ownerOf[bucket] = id;
    return { label: shardLabelOf(labelRing(replicas)), ownerOf };
  });
  for (const [i, pod] of server.store.list(pods).entries()) {
    const bucket = objectBucket(pod, 'uid', BUCKETS);
    const labels = { ...pod.metadata.labels };
    for (const { label, ownerOf } of owners) labels[label] = ownerOf[bucket]!;
    server.store.update(pods, { ...pod, metadata: { ...pod.metadata, resourceVersion: undefined, labels } });
    if (i % 5_000 === 4_999) await new Promise((resolve) => setImmediate(resolve));
  }
}

function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : process.argv[at + 1]!;
}

const range = (values: readonly number[], digits = 1): string => {
  const low = Math.min(...values);
  const high = Math.max(...values);
  return low.toFixed(digits) === high.toFixed(digits) ? low.toFixed(digits) : `${low.toFixed(digits)}–${high.toFixed(digits)}`;
};

async function main(): Promise<void> {
  const podCount = Number(option('--pods', '100000'));
  const events = Number(option('--events', '5000'));
  const reps = Number(option('--reps', '2'));
  const timeoutMs = Number(option('--timeout', '900')) * 1000;
  const replicaCounts = option('--replicas', '1,2,4').split(',').map(Number);
  const modes = option('--modes', 'server,client,label').split(',') as Mode[];
  const started = Date.now();
  const server = await startApiServer({ historyLimit: Math.max(10_000, events * 2) });
  createChurn(server.store, { pods: podCount, namespaces: 10, seed: 1 }).populate();
  if (modes.includes('label')) await labelShards(server, replicaCounts);
  process.stdout.write(`${podCount} pods, ${events} updates, ${BUCKETS} buckets, ${reps} rounds; load average ${loadavg().map((l: number) => l.toFixed(1)).join(' ')}\n`);
  const results: RunResult[] = [];
  for (let round = 0; round < reps; round++) {
    for (const mode of modes) {
      for (const replicas of replicaCounts) {
        const result = await runOnce(server, replicas, mode, events, round, timeoutMs);
        results.push(result);
        process.stdout.write(`round ${round + 1} ${mode} ×${replicas}: cache heap MB ${result.cacheHeapMb.map((v) => v.toFixed(1)).join(' ')}; objects ${result.objects.join(' ')}; events/s ${result.eventsPerSecond.map((v) => v.toFixed(0)).join(' ')}\n`);
      }
    }
  }
  process.stdout.write('\nmode    replicas  cache heap per replica (MB)  ÷ one replica’s  objects per replica  events/s per replica\n');
  for (const mode of modes) {
    const single = results.filter((r) => r.mode === mode && r.replicas === 1).flatMap((r) => r.cacheHeapMb);
    const singleMean = single.reduce((a, b) => a + b, 0) / Math.max(1, single.length);
    for (const replicas of replicaCounts) {
      const runs = results.filter((r) => r.mode === mode && r.replicas === replicas);
      const heap = runs.flatMap((r) => r.cacheHeapMb);
      process.stdout.write(
        `${mode.padEnd(8)}${String(replicas).padEnd(10)}${range(heap).padEnd(29)}${range(heap.map((h) => h / singleMean), 2).padEnd(17)}${range(runs.flatMap((r) => r.objects), 0).padEnd(21)}${range(runs.flatMap((r) => r.eventsPerSecond), 0)}\n`,
      );
    }
  }
  process.stdout.write(`\ntook ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  await server.close();
}

if (process.argv[2] === '--replica') {
  const [, , , url, id, members, mode, ring, leaseNamespace] = process.argv;
  replica(url!, id!, members!.split(','), mode as Mode, ring!, leaseNamespace!).catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
} else {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
}
