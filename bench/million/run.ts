/**
 * The million-object run: `npm run bench:million` (a million pods, about an hour on two cores), or
 * `npm run bench:million -- --sizes 100000 --events 20000` for a shorter one.
 *
 * The pods come from the generating server (generatorServer.ts), in its own process, which writes
 * them as it streams them (its memory stays in the tens of MB at any size, reported beside the
 * clients'). Each measurement runs one of the benchmark's clients (bench/clients) in a fresh
 * process capped at `--max-old-space-size` (default 8192 MB, so that a client that cannot hold the
 * million fails instead of exhausting a shared machine), in two modes:
 * - `lean`: pods of ~4.4 KB with managedFields, which b and a2 drop before caching
 *   (`transform: dropManagedFields`); c and d cannot drop them and keep whole pods;
 * - `metadata`: b with `metadataOnly: true`, a2 parsing the same `PartialObjectMetadata` into its
 *   Map (managedFields dropped too); c and d have no metadata-only informer and do not run;
 * and two ways to list:
 * - `streaming`: b and a2 list with a streaming list (`sendInitialEvents`, one event per pod);
 * - `unpaged`: the whole collection in one response, as every API server answers the informer's
 *   first list (`resourceVersion=0`). c and d list like this in both (client-node and
 *   kubernetes-fluent-client have no streaming list), so they run in this one only.
 * Then `--events` MODIFIED events (default 100,000), as fast as the client takes them.
 *
 * Per client: time to synced, CPU, peak RSS and peak heap up to synced, heap per object after two
 * forced GCs, longest event-loop stall during the sync, events/s of the updates; a client that
 * fails is recorded with its error (the last line of its stderr when it crashed).
 *
 * Options: --sizes 1000000 (comma-separated), --modes lean,metadata, --lists streaming,unpaged,
 * --only a2,b,c,d, --events N, --max-old-space-size MB, --reps N (alternating a2, b, c, d, a2, …),
 * --out NAME. Writes bench/results/million.json (or NAME.json; merged by size, mode, list and variant with what it held) and
 * prints the table that docs/PERFORMANCE.md quotes.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildForBench } from '../build';
import { runClientProcess, ServerChild, type ClientOutcome } from '../childProcesses';
import type { ClientConfig, ClientResult, VariantName } from '../protocol';
import type { MillionServerCommand, MillionServerMessage } from './messages';

type Mode = 'lean' | 'metadata';
type ListKind = 'streaming' | 'unpaged';

interface MillionJob {
  readonly pods: number;
  readonly mode: Mode;
  readonly list: ListKind;
  readonly variant: VariantName;
  readonly rep: number;
}

interface MillionRecord {
  readonly job: MillionJob;
  readonly result?: ClientResult;
  readonly error?: string;
  readonly wallMs: number;
  /** The generating server's own peak RSS over the run so far, and its heap after the job. */
  readonly server: { readonly peakRssBytes: number; readonly heapUsedBytes: number };
  readonly loadAverage: readonly number[];
  readonly at: string;
}

const RESULTS_DIR = path.join(__dirname, '..', 'results');
const JOB_TIMEOUT_MS = 45 * 60_000;
/** b's list and initial-events timeouts: a million-object list takes minutes on a busy machine. */
const LIST_TIMEOUT_MS = 30 * 60_000;

interface Arguments {
  readonly sizes: readonly number[];
  readonly modes: readonly Mode[];
  readonly lists: readonly ListKind[];
  readonly variants: readonly VariantName[];
  readonly events: number;
  readonly maxOldSpaceMb: number;
  readonly reps: number;
  /** bench/results/<out>.json (default `million`): runs in parallel write files of their own. */
  readonly results: string;
}

function parseArguments(argv: readonly string[]): Arguments {
  const valueOf = (flag: string): string | undefined => {
    const index = argv.indexOf(flag);
    return index === -1 ? undefined : argv[index + 1];
  };
  const listOf = <T extends string>(flag: string, all: readonly T[]): readonly T[] => {
    const value = valueOf(flag);
    return value === undefined ? all : all.filter((item) => value.split(',').includes(item));
  };
  return {
    sizes: (valueOf('--sizes') ?? '1000000').split(',').map(Number),
    modes: listOf<Mode>('--modes', ['lean', 'metadata']),
    lists: listOf<ListKind>('--lists', ['streaming', 'unpaged']),
    variants: listOf<VariantName>('--only', ['a2', 'b', 'c', 'd']),
    events: Number(valueOf('--events') ?? 100_000),
    maxOldSpaceMb: Number(valueOf('--max-old-space-size') ?? 8192),
    reps: Number(valueOf('--reps') ?? 1),
    results: path.join(RESULTS_DIR, `${valueOf('--out') ?? 'million'}.json`),
  };
}

/** c and d list in one response whatever the scenario, keep whole pods and have no metadata-only mode. */
function runs(variant: VariantName, mode: Mode, list: ListKind): boolean {
  if (variant === 'a1') return false;
  if (variant === 'c' || variant === 'd') return mode === 'lean' && list === 'unpaged';
  return true;
}

/** The generating server's process: bench/million/generatorServer.ts of the build. */
export type GeneratorProcess = ServerChild<MillionServerCommand, MillionServerMessage>;

/** Forks the generating server from the build; 1 GB of heap is plenty, since it holds no pods. */
export function forkGenerator(buildDir: string): GeneratorProcess {
  return new ServerChild(path.join(buildDir, 'bench', 'million', 'generatorServer.js'), ['--max-old-space-size=1024']);
}

function runJob(server: GeneratorProcess, buildDir: string, url: string, job: MillionJob, args: Arguments): Promise<ClientOutcome> {
  const config: ClientConfig = {
    variant: job.variant,
    scenario: job.list,
    serverUrl: url,
    pods: job.pods,
    objects: 'pod',
    dropManagedFields: job.mode === 'lean',
    metadataOnly: job.mode === 'metadata',
    listTimeoutMs: LIST_TIMEOUT_MS,
    handlers: 1,
    plan: { heap: true, throughputEvents: args.events, latencyEvents: 0, latencyRate: 0, relist: false },
  };
  return runClientProcess(server, buildDir, config, ['--expose-gc', `--max-old-space-size=${args.maxOldSpaceMb}`], JOB_TIMEOUT_MS);
}

const MiB = 2 ** 20;

function describe(job: MillionJob): string {
  return `N=${job.pods} ${job.mode} ${job.list} ${job.variant}`;
}

function summarize(result: ClientResult): string {
  const { sync } = result;
  const parts = [
    `sync ${(sync.syncMs / 1000).toFixed(1)} s (cpu ${(sync.cpuMs / 1000).toFixed(1)} s)`,
    `peak rss ${(sync.peakRssBytes / MiB).toFixed(0)} MiB, peak heap ${((sync.peakHeapBytes ?? 0) / MiB).toFixed(0)} MiB`,
    `stall ${sync.maxStallMs.toFixed(0)} ms (cpu ${sync.maxStallCpuMs?.toFixed(0) ?? '–'})`,
  ];
  if (result.heapBytesPerObject !== undefined) parts.push(`heap ${result.heapBytesPerObject.toFixed(0)} B/obj`);
  if (result.throughput !== undefined) parts.push(`${result.throughput.eventsPerSecond.toFixed(0)} ev/s (${result.throughput.cpuMicrosPerEvent.toFixed(0)} µs cpu/event)`);
  return parts.join('; ');
}

function loadRecords(file: string): MillionRecord[] {
  if (!fs.existsSync(file)) return [];
  return (JSON.parse(fs.readFileSync(file, 'utf8')) as { runs: MillionRecord[] }).runs;
}

/** The table docs/PERFORMANCE.md quotes: one row per run. */
export function markdownTable(records: readonly MillionRecord[]): string {
  const rows = [
    '| N | mode | list | client | synced (s) | CPU (s) | peak RSS (MiB) | peak heap (MiB) | heap/object (B) | longest stall (ms; CPU) | updates/s (of) | server peak RSS (MiB) | load |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const record of records) {
    const { job, result } = record;
    const load = record.loadAverage[0]?.toFixed(1) ?? '–';
    const serverRss = (record.server.peakRssBytes / MiB).toFixed(0);
    if (result === undefined) {
      rows.push(`| ${job.pods.toLocaleString('en')} | ${job.mode} | ${job.list} | ${job.variant} | failed: ${(record.error ?? '').split('\n')[0]?.slice(0, 160)} (after ${(record.wallMs / 1000).toFixed(0)} s) | | | | | | | ${serverRss} | ${load} |`);
      continue;
    }
    const { sync } = result;
    rows.push(
      `| ${job.pods.toLocaleString('en')} | ${job.mode} | ${job.list} | ${job.variant} | ${(sync.syncMs / 1000).toFixed(1)} | ${(sync.cpuMs / 1000).toFixed(1)} | ${(sync.peakRssBytes / MiB).toFixed(0)} | ${((sync.peakHeapBytes ?? 0) / MiB).toFixed(0)} | ${result.heapBytesPerObject?.toFixed(0) ?? '–'} | ${sync.maxStallMs.toFixed(0)}; ${sync.maxStallCpuMs?.toFixed(0) ?? '–'} | ${result.throughput === undefined ? '–' : `${result.throughput.eventsPerSecond.toFixed(0)} (${result.throughput.events.toLocaleString('en')})`} | ${serverRss} | ${load} |`,
    );
  }
  return rows.join('\n');
}

async function main(): Promise<void> {
  const args = parseArguments(process.argv.slice(2));
  const buildDir = buildForBench();
  const server = forkGenerator(buildDir);
  const same = (a: MillionJob, b: MillionJob): boolean => a.pods === b.pods && a.mode === b.mode && a.list === b.list && a.variant === b.variant && a.rep === b.rep;
  let records = loadRecords(args.results);
  try {
    for (const pods of args.sizes) {
      for (const mode of args.modes) {
        for (const list of args.lists) {
          for (let rep = 0; rep < args.reps; rep++) {
            for (const variant of args.variants.filter((v) => runs(v, mode, list))) {
              const job: MillionJob = { pods, mode, list, variant, rep };
              const ready = await server.request({ type: 'setup', pods });
              if (ready.type !== 'ready') throw new Error(`generator server: ${ready.type === 'failed' ? ready.message : ready.type}`);
              const loadAverage = os.loadavg();
              process.stdout.write(`${describe(job)} (pods ~${ready.podJsonBytes} B, metadata ~${ready.metadataJsonBytes} B of JSON; load ${loadAverage[0]!.toFixed(1)})\n`);
              const started = Date.now();
              const outcome = await runJob(server, buildDir, ready.url, job, args);
              const wallMs = Date.now() - started;
              const memory = await server.request({ type: 'memory' });
              const serverMemory = memory.type === 'memory' ? { peakRssBytes: memory.peakRssBytes, heapUsedBytes: memory.heapUsedBytes } : { peakRssBytes: 0, heapUsedBytes: 0 };
              process.stdout.write(`  ${outcome.result === undefined ? `FAILED ${outcome.error}` : summarize(outcome.result)}; server peak rss ${(serverMemory.peakRssBytes / MiB).toFixed(0)} MiB (${(wallMs / 1000).toFixed(0)} s)\n`);
              const record: MillionRecord = { job, ...outcome, wallMs, server: serverMemory, loadAverage, at: new Date(started).toISOString() };
              records = [...records.filter((r) => !same(r.job, job)), record];
              fs.mkdirSync(path.dirname(args.results), { recursive: true });
              fs.writeFileSync(args.results, `${JSON.stringify({ machine: { cpus: os.cpus().length, totalMemoryBytes: os.totalmem(), node: process.version }, runs: records }, null, 1)}\n`);
            }
          }
        }
      }
    }
  } finally {
    await server.shutdown();
  }
  process.stdout.write(`\n${markdownTable(records)}\n`);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
