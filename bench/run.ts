/**
 * The benchmark orchestrator: `npm run bench` (full, a few minutes) and `npm run bench:quick`
 * (about two minutes). It forks the server process once and a fresh client process per measurement,
 * interleaving the variants (a1, a2, b, c, d, a1, a2, b, c, d, …) under both GC settings, then writes
 * bench/results/*.json and regenerates the table of docs/PERFORMANCE.md (full run only, unless
 * --write-docs is given).
 *
 * Beside the paged scenario (the loopback server's default profile pages the first list), two
 * scenarios measure b and c syncing against a server that answers the first list whole (a 1.33
 * profile: `unpaged`) and one that serves streaming lists (a 1.36 profile: `streaming`), at 10k
 * and 100k pods, and, in the full run, an unpaged list of 150k pods: ~660 MB, beyond V8's
 * longest string.
 *
 * The object-size dimension (section 7) serves other kinds of objects (`ObjectKind`: pods without
 * managedFields, ~21 KB custom resources) at 1k and 100k cached (1k in the quick run).
 *
 * Options: --quick, --reps N, --events N (throughput phase), --gc default,semi64, --merge (keep
 * the runs of the previous results file that this run does not repeat), --only a1,b (variants), --sizes 1000,10000 (populations),
 * --objects pod,lean-pod,application (kinds of objects),
 * --scenarios paged,unpaged,streaming, --scenario-sizes 20000,130000 (the populations of the
 * unpaged and streaming scenarios instead of the profile's, e.g. the issue's 20k/100k/130k),
 * --write-docs, --no-docs. The full run first waits (2 min at most) for the machine to settle.
 * --report-only measures nothing: it renders the saved results (bench/results/<profile>.json) again,
 * the JSON and the tables, so that a change of how the tables render reaches docs/PERFORMANCE.md
 * without a two-hour run.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildForBench } from './build';
import { runClientProcess, ServerChild, type ClientOutcome } from './childProcesses';
import type { ClientConfig, ClientPlan, ClientResult, ObjectKind, Scenario, ServerCommand, ServerMessage, VariantName } from './protocol';
import { objectsOf, type BenchRun, type GcSetting, type Job, type Machine, type Profile, type RunRecord } from './records';
import { BUSY_LOAD_PER_CORE, writeReport } from './report';

const GC_FLAGS: Readonly<Record<GcSetting, readonly string[]>> = {
  default: [],
  semi64: ['--max-semi-space-size=64'],
};
/** Every client may grow to 8 GB of old space, so that the 100k-object runs measure rather than crash. */
const CLIENT_FLAGS = ['--expose-gc', '--max-old-space-size=8192'];
/** Extra flags for the clients, e.g. BENCH_CLIENT_FLAGS="--cpu-prof --cpu-prof-dir=bench/results/tmp/prof". */
const EXTRA_CLIENT_FLAGS = (process.env['BENCH_CLIENT_FLAGS'] ?? '').split(' ').filter((flag) => flag !== '');
const SERVER_FLAGS = ['--expose-gc', '--max-old-space-size=12288'];
/** Extra flags for the server process, e.g. BENCH_SERVER_FLAGS="--cpu-prof --cpu-prof-dir=bench/results/tmp/sprof". */
const EXTRA_SERVER_FLAGS = (process.env['BENCH_SERVER_FLAGS'] ?? '').split(' ').filter((flag) => flag !== '');
const ALL_VARIANTS: readonly VariantName[] = ['a1', 'a2', 'b', 'c', 'd'];
const ALL_OBJECTS: readonly ObjectKind[] = ['pod', 'lean-pod', 'application'];
const ALL_SCENARIOS: readonly Scenario[] = ['paged', 'unpaged', 'streaming'];
/** The variants of the unpaged and streaming scenarios: rx-informer and client-node. */
const SCENARIO_VARIANTS: readonly VariantName[] = ['b', 'c'];

const FULL: Profile = {
  name: 'full',
  reps: 3,
  gcSettings: ['default', 'semi64'],
  secondaryGcSettings: ['default', 'semi64'],
  syncSizes: [1_000, 10_000, 100_000],
  throughputCaches: [1_000, 100_000],
  throughputEvents: 100_000,
  latencyEvents: 2_000,
  latencyRate: 1_000,
  relistSize: 100_000,
  transformSize: 10_000,
  fanout: { cache: 1_000, events: 20_000, handlers: [10, 100] },
  unpagedSizes: [10_000, 100_000],
  streamingSizes: [10_000, 100_000],
  beyondStringLimit: 150_000,
  objectSizes: { kinds: ['lean-pod', 'application'], caches: [1_000, 100_000] },
  jobTimeoutMs: 900_000,
};

const QUICK: Profile = {
  name: 'quick',
  reps: 1,
  gcSettings: ['default', 'semi64'],
  secondaryGcSettings: ['default'],
  syncSizes: [1_000, 4_000],
  throughputCaches: [1_000, 4_000],
  throughputEvents: 4_000,
  latencyEvents: 500,
  latencyRate: 1_000,
  relistSize: 4_000,
  transformSize: 4_000,
  fanout: { cache: 1_000, events: 5_000, handlers: [10] },
  unpagedSizes: [4_000],
  streamingSizes: [4_000],
  beyondStringLimit: undefined,
  objectSizes: { kinds: ['lean-pod', 'application'], caches: [1_000] },
  jobTimeoutMs: 60_000,
};

interface Arguments {
  readonly profile: Profile;
  readonly variants: readonly VariantName[];
  readonly writeDocs: boolean;
  /** Only these server populations (debugging). */
  readonly sizes: readonly number[] | undefined;
  readonly scenarios: readonly Scenario[];
  /** Only these kinds of objects (`--objects pod,application`). */
  readonly objects: readonly ObjectKind[];
  /** Keep the runs of the previous results file that this run does not repeat. */
  readonly merge: boolean;
  /** A run narrowed by --sizes, --only, --gc, --events, --scenarios or --scenario-sizes writes `<profile>-partial.*` unless it merges. */
  readonly fileName: string;
}

function parseArguments(argv: readonly string[]): Arguments {
  const valueOf = (flag: string): string | undefined => {
    const index = argv.indexOf(flag);
    return index === -1 ? undefined : argv[index + 1];
  };
  const base = argv.includes('--quick') ? QUICK : FULL;
  const reps = valueOf('--reps');
  const events = valueOf('--events');
  const scenarioSizes = valueOf('--scenario-sizes')?.split(',').map(Number);
  const profile: Profile = {
    ...base,
    ...(reps === undefined ? {} : { reps: Number(reps) }),
    ...(events === undefined ? {} : { throughputEvents: Number(events) }),
    ...(scenarioSizes === undefined ? {} : { unpagedSizes: scenarioSizes, streamingSizes: scenarioSizes, beyondStringLimit: undefined }),
  };
  const only = valueOf('--only');
  const variants = only === undefined ? ALL_VARIANTS : ALL_VARIANTS.filter((v) => only.split(',').includes(v));
  const writeDocs = argv.includes('--no-docs') ? false : argv.includes('--write-docs') || profile.name === 'full';
  const sizes = valueOf('--sizes')?.split(',').map(Number);
  const gc = valueOf('--gc')?.split(',') as GcSetting[] | undefined;
  const withGc = gc === undefined ? profile : { ...profile, gcSettings: profile.gcSettings.filter((g) => gc.includes(g)), secondaryGcSettings: profile.secondaryGcSettings.filter((g) => gc.includes(g)) };
  const scenarioList = valueOf('--scenarios');
  const scenarios = scenarioList === undefined ? ALL_SCENARIOS : ALL_SCENARIOS.filter((scenario) => scenarioList.split(',').includes(scenario));
  const objectList = valueOf('--objects');
  const objects = objectList === undefined ? ALL_OBJECTS : ALL_OBJECTS.filter((kind) => objectList.split(',').includes(kind));
  const merge = argv.includes('--merge');
  const narrowed = ['--sizes', '--only', '--gc', '--events', '--scenarios', '--scenario-sizes', '--objects'].some((flag) => argv.includes(flag));
  const fileName = narrowed && !merge ? `${profile.name}-partial` : profile.name;
  return { profile: withGc, variants, writeDocs: writeDocs && (merge || !narrowed), sizes, scenarios, objects, merge, fileName };
}

/** One server set-up: a population of objects of one kind, answering lists as the scenario says. */
interface Setup {
  readonly pods: number;
  readonly scenario: Scenario;
  readonly objects: ObjectKind;
}

/** The set-ups of a run, largest population first within each scenario (results are written as the run goes). */
function setupsFor(profile: Profile, scenarios: readonly Scenario[], sizes: readonly number[] | undefined, objects: readonly ObjectKind[]): Setup[] {
  const paged = [...new Set([...profile.syncSizes, ...profile.throughputCaches, profile.relistSize, profile.transformSize, profile.fanout.cache])];
  const bySize = (a: Setup, b: Setup): number => b.pods - a.pods;
  const pods = 'pod' as const;
  const setups: Setup[] = [
    ...paged.map((count) => ({ pods: count, scenario: 'paged' as const, objects: pods })).sort(bySize),
    ...profile.objectSizes.kinds.flatMap((kind) => profile.objectSizes.caches.map((count) => ({ pods: count, scenario: 'paged' as const, objects: kind })).sort(bySize)),
    ...[...profile.unpagedSizes, ...(profile.beyondStringLimit === undefined ? [] : [profile.beyondStringLimit])].map((count) => ({ pods: count, scenario: 'unpaged' as const, objects: pods })).sort(bySize),
    ...profile.streamingSizes.map((count) => ({ pods: count, scenario: 'streaming' as const, objects: pods })).sort(bySize),
  ];
  return setups.filter((setup) => scenarios.includes(setup.scenario) && objects.includes(setup.objects) && (sizes === undefined || sizes.includes(setup.pods)));
}

/** The measurements of a set-up, in the order they run within a repetition. */
function jobsFor(setup: Setup, profile: Profile, gc: GcSetting, variants: readonly VariantName[]): Job[][] {
  if (setup.objects !== 'pod') return objectSizeJobsFor(setup, profile, gc, variants);
  if (setup.scenario === 'paged') return pagedJobsFor(setup.pods, profile, gc, variants);
  // Past V8's string limit, one GC setting is enough to show who syncs at all.
  if (setup.pods === profile.beyondStringLimit && gc !== 'default') return [];
  const plan: ClientPlan = { heap: false, throughputEvents: 0, latencyEvents: 0, latencyRate: 0, relist: false };
  const kind = setup.scenario;
  return [variants.filter((variant) => SCENARIO_VARIANTS.includes(variant)).map((variant) => ({ kind, pods: setup.pods, variant, gc, handlers: 1, dropManagedFields: false, plan }))];
}

/**
 * The throughput phase's events for a kind of objects: the custom resources (~21 KB) get a fifth
 * of the pods' events, about the same bytes on the wire, so that a cell takes seconds, not minutes.
 */
function objectSizeEvents(profile: Profile, objects: ObjectKind): number {
  return objects === 'application' ? Math.ceil(profile.throughputEvents / 5) : profile.throughputEvents;
}

/**
 * The object-size dimension: sync, heap, throughput and latency of every variant (no relist,
 * transform or fan-out), under the secondary GC settings (both in the full run, the default in
 * the quick one).
 */
function objectSizeJobsFor(setup: Setup, profile: Profile, gc: GcSetting, variants: readonly VariantName[]): Job[][] {
  if (!profile.secondaryGcSettings.includes(gc)) return [];
  const plan: ClientPlan = { heap: true, throughputEvents: objectSizeEvents(profile, setup.objects), latencyEvents: profile.latencyEvents, latencyRate: profile.latencyRate, relist: false };
  return [variants.map((variant) => ({ kind: 'main', pods: setup.pods, objects: setup.objects, variant, gc, handlers: 1, dropManagedFields: false, plan }))];
}

/** The measurements of one server population, in the order they run within a repetition. */
function pagedJobsFor(pods: number, profile: Profile, gc: GcSetting, variants: readonly VariantName[]): Job[][] {
  const groups: Job[][] = [];
  const isThroughputCache = profile.throughputCaches.includes(pods);
  if (profile.syncSizes.includes(pods) || isThroughputCache || pods === profile.relistSize) {
    const plan: ClientPlan = {
      heap: true,
      throughputEvents: isThroughputCache ? profile.throughputEvents : 0,
      latencyEvents: isThroughputCache ? profile.latencyEvents : 0,
      latencyRate: profile.latencyRate,
      relist: pods === profile.relistSize,
    };
    groups.push(variants.map((variant) => ({ kind: 'main', pods, variant, gc, handlers: 1, dropManagedFields: false, plan })));
  }
  const secondary = profile.secondaryGcSettings.includes(gc);
  if (pods === profile.transformSize && secondary) {
    const plan: ClientPlan = { heap: true, throughputEvents: 0, latencyEvents: 0, latencyRate: 0, relist: false };
    const transformable = variants.filter((v) => v === 'a2' || v === 'b');
    groups.push(transformable.map((variant) => ({ kind: 'transform', pods, variant, gc, handlers: 1, dropManagedFields: true, plan })));
  }
  if (pods === profile.fanout.cache && secondary) {
    const plan: ClientPlan = { heap: false, throughputEvents: profile.fanout.events, latencyEvents: 0, latencyRate: 0, relist: false };
    for (const handlers of profile.fanout.handlers) {
      groups.push(variants.map((variant) => ({ kind: 'fanout', pods, variant, gc, handlers, dropManagedFields: false, plan })));
    }
  }
  return groups;
}

/** The server child: bench/server.ts of the build. */
type ServerProcess = ServerChild<ServerCommand, ServerMessage>;

async function runJob(server: ServerProcess, buildDir: string, url: string, job: Job, timeoutMs: number): Promise<ClientOutcome> {
  const { plan } = job;
  await server.request({ type: 'arm', closeWatchAfterEvents: plan.relist ? plan.throughputEvents + plan.latencyEvents + 1 : undefined });
  const scenario: Scenario = job.kind === 'unpaged' || job.kind === 'streaming' ? job.kind : 'paged';
  const config: ClientConfig = { variant: job.variant, scenario, serverUrl: url, pods: job.pods, objects: objectsOf(job), dropManagedFields: job.dropManagedFields, handlers: job.handlers, plan };
  return runClientProcess(server, buildDir, config, [...CLIENT_FLAGS, ...GC_FLAGS[job.gc], ...EXTRA_CLIENT_FLAGS], timeoutMs);
}

function describe(job: Job): string {
  const extra = job.kind === 'fanout' ? ` ×${job.handlers} handlers` : job.kind === 'transform' ? ' -managedFields' : '';
  return `${job.kind} N=${job.pods}${objectsOf(job) === 'pod' ? '' : ` ${objectsOf(job)}`} ${job.variant} gc=${job.gc}${extra}`;
}

async function main(): Promise<void> {
  const { profile, variants, writeDocs, sizes, scenarios, objects, merge, fileName } = parseArguments(process.argv.slice(2));
  if (process.argv.includes('--report-only')) return renderSaved(profile, writeDocs);
  const started = Date.now();
  const loadAverageAtStart = await settledLoadAverage(profile);
  if (Number(process.versions.node.split('.')[0]) < 22) {
    throw new Error(`client-node 2.x needs Node ≥ 22.19; this is ${process.version}. Run through npm (node_modules/.bin/node).`);
  }
  const buildDir = buildForBench();
  const server: ServerProcess = new ServerChild(path.join(buildDir, 'bench', 'server.js'), [...SERVER_FLAGS, ...EXTRA_SERVER_FLAGS]);
  const previous = merge ? previousResults(profile, variants, sizes, scenarios, objects) : undefined;
  const runs: RunRecord[] = previous?.runs ?? [];
  // Sizes this invocation does not measure keep the merged file's, so its labels stay right.
  let podJsonBytes = previous?.podJsonBytes ?? 0;
  const objectJsonBytes: Partial<Record<ObjectKind, number>> = { ...previous?.objectJsonBytes };
  try {
    for (const setup of setupsFor(profile, scenarios, sizes, objects)) {
      const { pods, scenario } = setup;
      const ready = await server.request({ type: 'setup', pods, scenario, objects: setup.objects });
      if (ready.type !== 'ready') throw new Error(`server setup failed: ${ready.type === 'failed' ? ready.message : ready.type}`);
      objectJsonBytes[setup.objects] = ready.podJsonBytes;
      if (setup.objects === 'pod') podJsonBytes = ready.podJsonBytes;
      process.stdout.write(`server (${scenario}): ${pods} ${setup.objects}s of ~${Math.round(ready.podJsonBytes)} B JSON at ${ready.url}${ready.preSerialized ? ', updates pre-serialised' : ''}\n`);
      for (let rep = 0; rep < profile.reps; rep++) {
        for (const gc of profile.gcSettings) {
          for (const group of jobsFor(setup, profile, gc, variants)) {
            for (const job of group) {
              const jobStarted = Date.now();
              const outcome = await runJob(server, buildDir, ready.url, job, profile.jobTimeoutMs);
              const wallMs = Date.now() - jobStarted;
              runs.push({ job, rep, wallMs, ...outcome });
              process.stdout.write(`  ${describe(job)} rep ${rep + 1}: ${outcome.error === undefined ? summarize(outcome.result!) : `FAILED ${outcome.error.split('\n')[0]}`} (${(wallMs / 1000).toFixed(1)} s)\n`);
              // Results so far are written after every job, so an interrupted run still leaves them.
              writeReport({ profile, runs, machine: machineInfo(loadAverageAtStart), podJsonBytes, objectJsonBytes, startedAt: new Date(started).toISOString(), durationMs: Date.now() - started, complete: false }, { writeDocs, fileName });
            }
          }
        }
      }
    }
  } finally {
    await server.shutdown();
  }
  const written = writeReport({ profile, runs, machine: machineInfo(loadAverageAtStart), podJsonBytes, objectJsonBytes, startedAt: new Date(started).toISOString(), durationMs: Date.now() - started, complete: true }, { writeDocs, fileName });
  process.stdout.write(`\n${written.summary}\nwrote ${written.files.join(', ')} in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
}

/**
 * `--report-only`: the saved results of the profile rendered again (medians, targets, tables),
 * every field of the run as it was saved; the JSON's own medians and targets are recomputed.
 */
function renderSaved(profile: Profile, writeDocs: boolean): void {
  const file = path.join(__dirname, 'results', `${profile.name}.json`);
  const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as BenchRun;
  const { runs, machine, podJsonBytes, objectJsonBytes, startedAt, durationMs, complete } = saved;
  const bench: BenchRun = { profile: saved.profile, runs, machine, podJsonBytes, ...(objectJsonBytes === undefined ? {} : { objectJsonBytes }), startedAt, durationMs, complete };
  const written = writeReport(bench, { writeDocs });
  process.stdout.write(`${written.summary}\nrendered ${path.relative(process.cwd(), file)} again: wrote ${written.files.join(', ')}\n`);
}

/** What a `--merge` starts from: the saved runs of this profile and the object sizes measured for them. */
interface PreviousResults {
  readonly runs: RunRecord[];
  readonly podJsonBytes: number;
  readonly objectJsonBytes: Partial<Record<ObjectKind, number>>;
}

/** The previous runs of this profile, minus the jobs this run measures again, and their object sizes. */
function previousResults(profile: Profile, variants: readonly VariantName[], sizes: readonly number[] | undefined, scenarios: readonly Scenario[], objects: readonly ObjectKind[]): PreviousResults {
  const file = path.join(__dirname, 'results', `${profile.name}.json`);
  if (!fs.existsSync(file)) return { runs: [], podJsonBytes: 0, objectJsonBytes: {} };
  const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<PreviousResults> & { runs: RunRecord[] };
  const previous = saved.runs;
  const scenarioOf = (job: Job): Scenario => (job.kind === 'unpaged' || job.kind === 'streaming' ? job.kind : 'paged');
  const repeated = (job: Job): boolean =>
    variants.includes(job.variant) && profile.gcSettings.includes(job.gc) && (sizes === undefined || sizes.includes(job.pods)) && scenarios.includes(scenarioOf(job)) && objects.includes(objectsOf(job));
  return { runs: previous.filter((run) => !repeated(run.job)), podJsonBytes: saved.podJsonBytes ?? 0, objectJsonBytes: saved.objectJsonBytes ?? {} };
}

/**
 * The load average to start from. The full run first waits, two minutes at most, for the
 * one-minute load average to fall below {@link BUSY_LOAD_PER_CORE} per core, so that the tail of
 * work that just ended (a previous run's, say) is neither measured against nor reported as other
 * work sharing the cores; the quick run starts at once.
 */
async function settledLoadAverage(profile: Profile): Promise<number[]> {
  const busy = os.cpus().length * BUSY_LOAD_PER_CORE;
  const deadline = Date.now() + (profile.name === 'full' ? 120_000 : 0);
  while (os.loadavg()[0]! > busy && Date.now() < deadline) {
    process.stdout.write(`waiting for the load average (${os.loadavg()[0]!.toFixed(2)}) to fall below ${busy}\n`);
    await new Promise((resolve) => setTimeout(resolve, 10_000));
  }
  return os.loadavg();
}

function machineInfo(loadAverageAtStart: readonly number[]): Machine {
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    totalMemoryBytes: os.totalmem(),
    platform: `${os.platform()} ${os.release()}`,
    node: process.version,
    loadAverageAtStart,
    loadAverageAtEnd: os.loadavg(),
  };
}

function summarize(result: ClientResult): string {
  const parts = [`sync ${result.sync.syncMs.toFixed(0)} ms (cpu ${result.sync.cpuMs.toFixed(0)}), rss ${(result.sync.peakRssBytes / 2 ** 20).toFixed(0)} MiB, stall ${result.sync.maxStallMs.toFixed(0)} ms (cpu ${result.sync.maxStallCpuMs?.toFixed(0) ?? '–'})`];
  if (result.heapBytesPerObject !== undefined) parts.push(`heap ${(result.heapBytesPerObject / 1024).toFixed(1)} KiB/obj`);
  if (result.throughput !== undefined) parts.push(`${result.throughput.eventsPerSecond.toFixed(0)} ev/s (${result.throughput.cpuMicrosPerEvent.toFixed(0)} µs cpu/event, cpu ${(result.throughput.cpuShare * 100).toFixed(0)}%, ${result.throughput.delivered} delivered, server ${result.throughput.serverEventsPerSecond.toFixed(0)})`);
  if (result.latency !== undefined) parts.push(`p50 ${result.latency.p50Ms?.toFixed(2)} p99 ${result.latency.p99Ms?.toFixed(2)} ms`);
  if (result.relist !== undefined) parts.push(`relist ${result.relist.relistMs.toFixed(0)} ms (${result.relist.listRequests} lists), rss ${(result.relist.peakRssBytes / 2 ** 20).toFixed(0)} MiB`);
  return parts.join('; ');
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
