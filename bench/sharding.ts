/**
 * Per-replica figures of sharded informers: `node -r ts-node/register/transpile-only bench/sharding.ts`.
 *
 * For each replica count in `--replicas` (default 1,2,4) and each mode in `--modes`, that many
 * replica processes (bench/shardingReplica.ts, forked from the benchmark's build with
 * `--expose-gc`) run a sharded pod informer on one ring; once all have loaded they join at once.
 * Once every replica serves the buckets the placement gives it and its cache holds them, each
 * reports its pods, its heap after a full GC (and that minus its heap before the informer started:
 * the cache's share), its peak RSS, and the wall and CPU time from joining to that point.
 *
 * Two sources of pods (`--source`):
 *
 * - `loopback` (default): one loopback API server (this process) holds `--pods` pods (the churn
 *   generator's, with managedFields, ~4.4 KB each) and the ring's Leases; replicas cache whole pods.
 *   Modes `server,client,label` (default all). In `label` mode this process plays timebertt's
 *   sharder: before the runs it labels every pod with its shard for each replica count (one ring
 *   per count, `bench-label-<N>`, placing each pod where the bucket modes' placement puts it, so
 *   every mode splits the pods alike), and the replicas select their label. After the heap, this
 *   process updates `--events` pods as fast as it can, and each replica reports how long it took
 *   until its cache held the last version of every pod of its own that was updated (from the first
 *   update sent): its events/s. The replica checks the final state, not a count of update changes:
 *   a relist folds several updates of a pod into one change, and a bucket lost and won back mid-run
 *   (its Lease renewed late on a busy machine) brings its pods back as adds. A run that does not
 *   finish within `--timeout` seconds (default 900) fails, naming the replicas and the pods they
 *   still miss. The server holds every pod, so this source stops short of a million.
 * - `generator`: the million-pod generating server (bench/million/generatorServer.ts, a fresh
 *   process per configuration) renders `--pods` pods as it streams them and answers each replica's
 *   shard selector (`server` mode, the default here; `client` mode works too, every replica then
 *   receiving every pod); this process serves only the ring's Leases. `--cache lean` (default:
 *   `transform: dropManagedFields`, as bench:million's lean mode) or `metadata` (`metadataOnly`)
 *   or `whole`. No update phase. Also reported: each replica's longest event-loop stall and its
 *   bucket-set changes (a replica that missed its renew deadline lists again: its figures then
 *   include that), the generating server's peak RSS and CPU. The replicas use the library's
 *   default ring timings. Results are merged into bench/results/sharding-million.json (or
 *   `--out NAME`), by size, cache, mode, replica count and round. A million pods over 1, 2 and 4
 *   replicas (issue 35 item 4), whole pods less managedFields, then metadata only:
 *
 *       node -r ts-node/register/transpile-only bench/sharding.ts --source generator --pods 1000000 --replicas 1,2,4 --reps 1
 *       node -r ts-node/register/transpile-only bench/sharding.ts --source generator --pods 1000000 --replicas 1,2,4 --reps 1 --cache metadata
 *
 * Runs are interleaved (round 1 of every configuration, then round 2, ...: `--reps` rounds,
 * default 2) and reported as ranges; one configuration runs at a time. `--max-old-space-size` caps
 * each replica's heap (MB; default 4096 for loopback, 8192 for generator), so that a replica that
 * cannot hold its share fails instead of exhausting a shared machine.
 *
 * The goal: per-replica heap ≈ 1/N of one replica's in `server` and `label` modes; `client` mode
 * decodes every event on every replica, so its events/s and CPU do not shrink with N.
 *
 * Cost: loopback `--pods 20000 --reps 1` (9 configurations) took about 6 minutes on a loaded 2-core
 * machine; `--pods 100000 --reps 1 --events 2000` (9 configurations) took 262 s on a quiet one, its
 * largest process at 1.2 GB resident (the server holds every pod). Generator at a million pods:
 * the three configurations of one round took 4.5 minutes lean and 3 metadata-only at load 2–4,
 * 8 to 20 at load 8–18; the largest process is the single replica (3.0 GB resident lean, 1.0 GB
 * metadata-only); the server stays near 130 MB.
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pods } from '../lib/resources/builtins';
import { bucketsOf } from '../lib/sharding/placement';
import { objectBucket } from '../lib/sharding/shardListerWatcher';
import { shardLabelOf } from '../lib/sharding/labelShard';
import { createChurn } from '../apiserver/src/churn';
import { startApiServer, type ApiServer } from '../apiserver/src/server';
import { buildForBench } from './build';
import { forkGenerator } from './million/run';
import type { ReplicaCache } from './shardReplica';
import { BUCKETS, TIMINGS, type ReplicaCommand, type ReplicaConfig, type ReplicaReport, type SettledFigures, type ShardingMode } from './shardingReplica';

type Source = 'loopback' | 'generator';
/** How long a list may go without a byte: a million-pod list takes minutes on a busy machine. */
const LIST_PAGE_TIMEOUT_MS = 30 * 60_000;
const MiB = 2 ** 20;
const RESULTS_DIR = path.join(__dirname, 'results');

interface Options {
  readonly source: Source;
  readonly podCount: number;
  readonly events: number;
  readonly reps: number;
  readonly timeoutMs: number;
  readonly replicaCounts: readonly number[];
  readonly modes: readonly ShardingMode[];
  readonly cache: ReplicaCache;
  readonly maxOldSpaceMb: number;
  readonly results: string;
}

function parseOptions(argv: readonly string[]): Options {
  const option = (name: string, fallback: string): string => {
    const at = argv.indexOf(name);
    return at === -1 ? fallback : argv[at + 1]!;
  };
  const source = option('--source', 'loopback') as Source;
  if (source !== 'loopback' && source !== 'generator') throw new Error(`--source must be loopback or generator, got ${source}`);
  const generated = source === 'generator';
  const modes = option('--modes', generated ? 'server' : 'server,client,label').split(',') as ShardingMode[];
  if (generated && modes.includes('label')) throw new Error('the generating server has no sharder: --modes server,client with --source generator');
  return {
    source,
    podCount: Number(option('--pods', generated ? '1000000' : '100000')),
    events: generated ? 0 : Number(option('--events', '5000')),
    reps: Number(option('--reps', '2')),
    timeoutMs: Number(option('--timeout', '900')) * 1000,
    replicaCounts: option('--replicas', '1,2,4').split(',').map(Number),
    modes,
    cache: option('--cache', generated ? 'lean' : 'whole') as ReplicaCache,
    maxOldSpaceMb: Number(option('--max-old-space-size', generated ? '8192' : '4096')),
    results: path.join(RESULTS_DIR, `${option('--out', 'sharding-million')}.json`),
  };
}

/** The sharder's ring for `replicas` replicas in `label` mode: one per count, since the pods carry its label. */
const labelRing = (replicas: number): string => `bench-label-${replicas}`;
const membersOf = (replicas: number): string[] => Array.from({ length: replicas }, (_, i) => `replica-${i}`);
const keyOf = (pod: { metadata: { namespace?: string; name?: string } }): string => `${pod.metadata.namespace}/${pod.metadata.name}`;

interface RunResult {
  readonly replicas: number;
  readonly mode: ShardingMode;
  readonly round: number;
  /** Per replica, in member order. */
  readonly figures: SettledFigures[];
  /** Loopback only: each replica's events/s over the updates of its pods. */
  readonly eventsPerSecond: number[];
  /** Generator only: the generating server's peak RSS and CPU over the configuration. */
  readonly server?: { readonly peakRssBytes: number; readonly cpuMs: number };
  readonly wallMs: number;
  readonly loadAverage: readonly number[];
}

function nextReport<K extends ReplicaReport['kind']>(child: ChildProcess, kind: K): Promise<Extract<ReplicaReport, { kind: K }>> {
  return new Promise((resolve, reject) => {
    const onMessage = (report: ReplicaReport): void => {
      if (report.kind !== kind) return;
      child.off('message', onMessage);
      resolve(report as Extract<ReplicaReport, { kind: K }>);
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
      for (const child of children) child.send({ kind: 'report-missing' } satisfies ReplicaCommand);
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

/** The replicas of one configuration: forked, and started together once every one has loaded; then settled. */
async function startReplicas(buildDir: string, options: Options, configs: readonly ReplicaConfig[]): Promise<{ children: ChildProcess[]; settled: SettledFigures[] }> {
  const children = configs.map((config) =>
    fork(path.join(buildDir, 'bench', 'shardingReplica.js'), [JSON.stringify(config)], { execArgv: ['--expose-gc', `--max-old-space-size=${options.maxOldSpaceMb}`] }),
  );
  try {
    await Promise.all(children.map((child) => nextReport(child, 'ready')));
    const settled = children.map((child) => nextReport(child, 'settled'));
    for (const child of children) child.send({ kind: 'start' } satisfies ReplicaCommand);
    const figures = (await Promise.all(settled)).map(({ kind: _kind, ...rest }) => rest);
    const leaking = figures.findIndex((f) => f.foreignPods > 0);
    if (leaking !== -1) throw new Error(`${configs[leaking]!.id} caches ${figures[leaking]!.foreignPods} pods outside its buckets`);
    return { children, settled: figures };
  } catch (error) {
    await stopReplicas(children);
    throw error;
  }
}

async function stopReplicas(children: readonly ChildProcess[]): Promise<void> {
  for (const child of children) if (child.connected) child.disconnect();
  await Promise.all(children.map((child) => new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(undefined) : child.once('exit', resolve)))));
}

/** One configuration against the loopback server: heap, then the update phase. */
async function runLoopback(buildDir: string, options: Options, server: ApiServer, replicas: number, mode: ShardingMode, round: number): Promise<RunResult> {
  const started = Date.now();
  const loadAverage = os.loadavg();
  // A fresh ring per run (label mode: the pods' ring, with its Leases in a namespace of this round).
  const ring = mode === 'label' ? labelRing(replicas) : `bench-${mode}-${replicas}-${round}`;
  const leaseNamespace = `bench-${mode}-${replicas}-${round}`;
  const members = membersOf(replicas);
  const configs = members.map((id): ReplicaConfig => ({ podsUrl: server.url, leasesUrl: server.url, id, members, mode, ring, leaseNamespace, cache: options.cache, listPageTimeoutMs: LIST_PAGE_TIMEOUT_MS, timings: TIMINGS, updates: true }));
  const { children, settled } = await startReplicas(buildDir, options, configs);
  try {
    // Updates, as fast as the store takes them; each replica applies those of its own pods.
    const all = server.store.list(pods);
    const chosen = Array.from({ length: options.events }, (_, i) => all[(i * 7919) % all.length]!);
    // Every mode serves the placement's buckets once settled (label mode: the sharder placed them so).
    // Unique per run: the pods keep the last run's labels.
    const tag = `${mode}-${replicas}-${round}`;
    const perReplica = members.map((id) => {
      const owned = new Set(bucketsOf(id, members, BUCKETS));
      const finals: Record<string, string> = {};
      let updates = 0;
      for (const [i, pod] of chosen.entries()) {
        if (!owned.has(objectBucket(pod, 'uid', BUCKETS))) continue;
        updates++;
        finals[keyOf(pod)] = `${tag}-${i}`;
      }
      return { kind: 'expect' as const, updates, finals };
    });
    const sentAt = Date.now();
    const applied = children.map((child) => nextReport(child, 'applied'));
    children.forEach((child, i) => child.send({ ...perReplica[i]!, sentAt } satisfies ReplicaCommand));
    for (const [i, pod] of chosen.entries()) {
      const current = server.store.get(pods, pod.metadata.namespace, pod.metadata.name)!;
      server.store.update(pods, { ...current, metadata: { ...current.metadata, resourceVersion: undefined, labels: { ...current.metadata.labels, bench: `${tag}-${i}` } } });
      // Let the watches drain now and then, as a real API server's would between writes.
      if (i % 500 === 499) await new Promise((resolve) => setImmediate(resolve));
    }
    const done = await withinTimeout(Promise.all(applied), options.timeoutMs, children, `${mode} ×${replicas}, round ${round + 1}`);
    const eventsPerSecond = done.map((report) => (report.updates * 1000) / Math.max(1, report.lastAt - report.firstAt));
    return { replicas, mode, round, figures: settled, eventsPerSecond, wallMs: Date.now() - started, loadAverage };
  } finally {
    await stopReplicas(children);
  }
}

/** One configuration against a fresh generating server: the replicas' figures and the server's. */
async function runGenerated(buildDir: string, options: Options, leaseServer: ApiServer, replicas: number, mode: ShardingMode, round: number): Promise<RunResult> {
  const started = Date.now();
  const loadAverage = os.loadavg();
  const generator = forkGenerator(buildDir);
  try {
    const ready = await generator.request({ type: 'setup', pods: options.podCount });
    if (ready.type !== 'ready') throw new Error(`generator server: ${ready.type === 'failed' ? ready.message : ready.type}`);
    const ring = `bench-${options.cache}-${mode}-${replicas}-${round}`;
    const members = membersOf(replicas);
    // The library's default ring timings: the 5 s Leases of the loopback runs do not outlast the
    // event-loop stalls of a million-pod share on a busy machine (a replica that misses its renew
    // deadline drops its buckets and lists them again from scratch).
    const configs = members.map((id): ReplicaConfig => ({ podsUrl: ready.url, leasesUrl: leaseServer.url, id, members, mode, ring, leaseNamespace: 'default', cache: options.cache, listPageTimeoutMs: LIST_PAGE_TIMEOUT_MS, updates: false }));
    const { children, settled } = await startReplicas(buildDir, options, configs);
    await stopReplicas(children);
    const memory = await generator.request({ type: 'memory' });
    const server = memory.type === 'memory' ? { peakRssBytes: memory.peakRssBytes, cpuMs: memory.cpuMs } : undefined;
    return { replicas, mode, round, figures: settled, eventsPerSecond: [], ...(server === undefined ? {} : { server }), wallMs: Date.now() - started, loadAverage };
  } finally {
    await generator.shutdown();
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

const range = (values: readonly number[], digits = 1): string => {
  const low = Math.min(...values);
  const high = Math.max(...values);
  return low.toFixed(digits) === high.toFixed(digits) ? low.toFixed(digits) : `${low.toFixed(digits)}–${high.toFixed(digits)}`;
};

function summaryLine(result: RunResult): string {
  const heap = result.figures.map((f) => (f.cacheHeapBytes / MiB).toFixed(1)).join(' ');
  const events = result.eventsPerSecond.length === 0 ? '' : `; events/s ${result.eventsPerSecond.map((v) => v.toFixed(0)).join(' ')}`;
  const server = result.server === undefined ? '' : `; server peak RSS ${(result.server.peakRssBytes / MiB).toFixed(0)} MiB, CPU ${(result.server.cpuMs / 1000).toFixed(1)} s`;
  return `round ${result.round + 1} ${result.mode} ×${result.replicas}: cache heap MB ${heap}; objects ${result.figures.map((f) => f.objects).join(' ')}; peak RSS MiB ${result.figures.map((f) => (f.peakRssBytes / MiB).toFixed(0)).join(' ')}; synced s ${result.figures.map((f) => (f.syncMs / 1000).toFixed(1)).join(' ')} (CPU ${result.figures.map((f) => (f.cpuMs / 1000).toFixed(1)).join(' ')})${events}${server} (${(result.wallMs / 1000).toFixed(0)} s)\n`;
}

/** The loopback source's table: per mode and replica count, ranges over replicas and rounds. */
function loopbackTable(results: readonly RunResult[], options: Options): string {
  let out = '\nmode    replicas  cache heap per replica (MB)  ÷ one replica’s  objects per replica  events/s per replica\n';
  for (const mode of options.modes) {
    const single = results.filter((r) => r.mode === mode && r.replicas === 1).flatMap((r) => r.figures.map((f) => f.cacheHeapBytes / MiB));
    const singleMean = single.reduce((a, b) => a + b, 0) / Math.max(1, single.length);
    for (const replicas of options.replicaCounts) {
      const runs = results.filter((r) => r.mode === mode && r.replicas === replicas);
      const heap = runs.flatMap((r) => r.figures.map((f) => f.cacheHeapBytes / MiB));
      out += `${mode.padEnd(8)}${String(replicas).padEnd(10)}${range(heap).padEnd(29)}${range(heap.map((h) => h / singleMean), 2).padEnd(17)}${range(runs.flatMap((r) => r.figures.map((f) => f.objects)), 0).padEnd(21)}${range(runs.flatMap((r) => r.eventsPerSecond), 0)}\n`;
    }
  }
  return out;
}

/** A generator run as saved: the configuration, then what each replica and the server measured. */
interface GeneratedRecord extends RunResult {
  readonly pods: number;
  readonly cache: ReplicaCache;
  /** The replicas' ring timings: the library's defaults. */
  readonly ringTimings: 'defaults';
  readonly at: string;
}

/** The generator source's table (markdown): one row per replica of each configuration. */
export function generatedTable(records: readonly GeneratedRecord[]): string {
  const rows = [
    '| N | cache | mode | replicas | replica | pods held | heap after GC (MiB) | of which the cache (MiB) | cache heap/pod (B) | peak RSS (MiB) | synced (s) | CPU (s) | longest stall (s) | bucket set changes | server peak RSS (MiB) | server CPU (s) | load |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const record of records) {
    record.figures.forEach((f, i) => {
      const server = record.server === undefined ? '| – | – ' : `| ${(record.server.peakRssBytes / MiB).toFixed(0)} | ${(record.server.cpuMs / 1000).toFixed(0)} `;
      rows.push(
        `| ${record.pods.toLocaleString('en')} | ${record.cache} | ${record.mode} | ${record.replicas} | ${i} | ${f.objects.toLocaleString('en')} | ${(f.heapBytes / MiB).toFixed(0)} | ${(f.cacheHeapBytes / MiB).toFixed(0)} | ${f.objects === 0 ? '–' : (f.cacheHeapBytes / f.objects).toFixed(0)} | ${(f.peakRssBytes / MiB).toFixed(0)} | ${(f.syncMs / 1000).toFixed(1)} | ${(f.cpuMs / 1000).toFixed(1)} | ${f.maxStallMs === undefined ? '–' : (f.maxStallMs / 1000).toFixed(1)} | ${f.bucketChanges} ${server}| ${record.loadAverage[0]?.toFixed(1) ?? '–'} |`,
      );
    });
  }
  return rows.join('\n');
}

function saveGenerated(file: string, record: GeneratedRecord): GeneratedRecord[] {
  const previous: GeneratedRecord[] = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as { runs: GeneratedRecord[] }).runs : [];
  const same = (a: GeneratedRecord): boolean => a.pods === record.pods && a.cache === record.cache && a.mode === record.mode && a.replicas === record.replicas && a.round === record.round;
  const runs = [...previous.filter((r) => !same(r)), record];
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify({ machine: { cpus: os.cpus().length, totalMemoryBytes: os.totalmem(), node: process.version }, runs }, null, 1)}\n`);
  return runs;
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const started = Date.now();
  const buildDir = buildForBench();
  const generated = options.source === 'generator';
  const server = await startApiServer({ historyLimit: Math.max(10_000, options.events * 2) });
  try {
    if (!generated) {
      createChurn(server.store, { pods: options.podCount, namespaces: 10, seed: 1 }).populate();
      if (options.modes.includes('label')) await labelShards(server, options.replicaCounts);
    }
    process.stdout.write(
      `${options.source}: ${options.podCount} pods (${options.cache}), ${options.events} updates, ${BUCKETS} buckets, ${options.reps} rounds; load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}\n`,
    );
    const results: RunResult[] = [];
    let saved: GeneratedRecord[] = [];
    for (let round = 0; round < options.reps; round++) {
      for (const mode of options.modes) {
        for (const replicas of options.replicaCounts) {
          const result = generated ? await runGenerated(buildDir, options, server, replicas, mode, round) : await runLoopback(buildDir, options, server, replicas, mode, round);
          results.push(result);
          process.stdout.write(summaryLine(result));
          if (generated) saved = saveGenerated(options.results, { ...result, pods: options.podCount, cache: options.cache, ringTimings: 'defaults', at: new Date(Date.now() - result.wallMs).toISOString() });
        }
      }
    }
    process.stdout.write(generated ? `\n${generatedTable(saved.filter((r) => r.pods === options.podCount && r.cache === options.cache))}\n` : loopbackTable(results, options));
    process.stdout.write(`\ntook ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  } finally {
    await server.close();
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
}
