/**
 * Turns the runs into medians, ratios and target verdicts, writes them as JSON under
 * bench/results/, and regenerates the table section of docs/PERFORMANCE.md (between the
 * GENERATED markers; the hand-written text around it is kept).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ClientPlan, ClientResult, ObjectKind, VariantName } from './protocol';
import { median, ratio } from './stats';

export type GcSetting = 'default' | 'semi64';

export interface Profile {
  readonly name: 'full' | 'quick';
  readonly reps: number;
  readonly gcSettings: readonly GcSetting[];
  /** GC settings of the transform and fan-out measurements (the quick run keeps only the default). */
  readonly secondaryGcSettings: readonly GcSetting[];
  readonly syncSizes: readonly number[];
  readonly throughputCaches: readonly number[];
  readonly throughputEvents: number;
  readonly latencyEvents: number;
  readonly latencyRate: number;
  readonly relistSize: number;
  readonly transformSize: number;
  readonly fanout: { readonly cache: number; readonly events: number; readonly handlers: readonly number[] };
  /** Populations synced from a first list answered whole (a 1.33 server). */
  readonly unpagedSizes: readonly number[];
  /** Populations synced with a streaming list (a 1.36 server). */
  readonly streamingSizes: readonly number[];
  /** One more unpaged population whose list is longer than V8's longest string; none in the quick run. */
  readonly beyondStringLimit: number | undefined;
  /** The object-size dimension: these other kinds of objects, at these cache sizes (sync, heap, throughput, latency). */
  readonly objectSizes: { readonly kinds: readonly ObjectKind[]; readonly caches: readonly number[] };
  readonly jobTimeoutMs: number;
}

export interface Job {
  /** `main`, `transform`, `fanout`: the paged scenario; `unpaged`, `streaming`: syncs in those scenarios. */
  readonly kind: 'main' | 'transform' | 'fanout' | 'unpaged' | 'streaming';
  readonly pods: number;
  /** The kind of objects the server held; absent in older results: pods. */
  readonly objects?: ObjectKind;
  readonly variant: VariantName;
  readonly gc: GcSetting;
  readonly handlers: number;
  readonly dropManagedFields: boolean;
  readonly plan: ClientPlan;
}

export interface RunRecord {
  readonly job: Job;
  readonly rep: number;
  readonly wallMs: number;
  readonly result?: ClientResult;
  readonly error?: string;
}

export interface Machine {
  readonly cpus: number;
  readonly cpuModel: string;
  readonly totalMemoryBytes: number;
  readonly platform: string;
  readonly node: string;
  /** os.loadavg() (1, 5, 15 min) when the run started and ended: other work on the machine skews wall-clock figures. */
  readonly loadAverageAtStart: readonly number[];
  readonly loadAverageAtEnd: readonly number[];
}

export interface BenchRun {
  readonly profile: Profile;
  readonly runs: readonly RunRecord[];
  readonly machine: Machine;
  readonly podJsonBytes: number;
  /** The mean JSON size of each kind of object measured; absent in older results. */
  readonly objectJsonBytes?: Partial<Record<ObjectKind, number>>;
  readonly startedAt: string;
  readonly durationMs: number;
  /** False while the run is still going (results are written after every job). */
  readonly complete: boolean;
}

const VARIANTS: readonly VariantName[] = ['a1', 'a2', 'b', 'c', 'd'];

/** The kind of objects of a job (older results have none: pods). */
export function objectsOf(job: Job): ObjectKind {
  return job.objects ?? 'pod';
}
const GC_LABEL: Readonly<Record<GcSetting, string>> = { default: 'default', semi64: 'semi 64 MB' };
const MiB = 2 ** 20;

type Metric = (result: ClientResult) => number | undefined;

const metrics = {
  syncMs: (r) => r.sync.syncMs,
  syncCpuMs: (r) => r.sync.cpuMs,
  syncRssMiB: (r) => r.sync.peakRssBytes / MiB,
  syncStallMs: (r) => r.sync.maxStallMs,
  syncStallCpuMs: (r) => r.sync.maxStallCpuMs,
  heapKiB: (r) => (r.heapBytesPerObject === undefined ? undefined : r.heapBytesPerObject / 1024),
  eventsPerSecond: (r) => r.throughput?.eventsPerSecond,
  cpuMicrosPerEvent: (r) => r.throughput?.cpuMicrosPerEvent,
  cpuEventsPerSecond: (r) => (r.throughput === undefined ? undefined : 1e6 / r.throughput.cpuMicrosPerEvent),
  serverEventsPerSecond: (r) => r.throughput?.serverEventsPerSecond,
  p50Ms: (r) => r.latency?.p50Ms,
  p99Ms: (r) => r.latency?.p99Ms,
  relistMs: (r) => (r.relist !== undefined && r.relist.listRequests > 0 ? r.relist.relistMs : undefined),
  relistRssMiB: (r) => (r.relist === undefined ? undefined : r.relist.peakRssBytes / MiB),
  relistHeapMiB: (r) => (r.relist === undefined ? undefined : r.relist.peakHeapBytes / MiB),
  relistStallMs: (r) => r.relist?.maxStallMs,
} satisfies Record<string, Metric>;
type MetricName = keyof typeof metrics;

/** Medians per variant of one metric over the runs selected. */
type Row = Partial<Record<VariantName, number>>;

function select(runs: readonly RunRecord[], where: (job: Job) => boolean): RunRecord[] {
  return runs.filter((run) => run.result !== undefined && where(run.job));
}

function row(runs: readonly RunRecord[], where: (job: Job) => boolean, metric: MetricName): Row {
  const out: Row = {};
  for (const variant of VARIANTS) {
    const values = select(runs, (job) => job.variant === variant && where(job)).map((run) => metrics[metric](run.result!));
    const value = median(values);
    if (value !== undefined) out[variant] = value;
  }
  return out;
}

function fmt(value: number | undefined, digits = 0): string {
  if (value === undefined) return '–';
  return value >= 10_000 ? Math.round(value).toLocaleString('en-US') : value.toFixed(digits);
}

function fmtRatio(value: number | undefined): string {
  return value === undefined ? '–' : `${value.toFixed(2)}×`;
}

function sizeLabel(n: number): string {
  return n >= 1000 ? `${n / 1000}k` : String(n);
}

export interface Verdict {
  readonly target: string;
  readonly setting: string;
  readonly value: number | undefined;
  /** The same ratio from CPU time instead of wall time (where it applies): robust under contention. */
  readonly cpuValue: number | undefined;
  readonly threshold: string;
  readonly held: boolean | undefined;
  /**
   * The same measure for the floors (undefined where a floor is the reference itself): a1 only
   * parses, a2 is the cheapest cache that keeps every object. A target a1 misses cannot be met by
   * any client that parses what it receives; one a2 misses asks for more than a plain cache.
   */
  readonly floors: Readonly<Partial<Record<'a1' | 'a2', { readonly value: number; readonly held: boolean }>>>;
}

interface Table {
  readonly title: string;
  readonly header: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

function markdownTable(table: Table): string {
  const lines = [`#### ${table.title}`, '', `| ${table.header.join(' | ')} |`, `|${table.header.map(() => '---').join('|')}|`];
  for (const cells of table.rows) lines.push(`| ${cells.join(' | ')} |`);
  return lines.join('\n');
}

/** The columns after the row labels: each variant, then b's ratio to each of the others. */
const VARIANT_HEADER: readonly string[] = [...VARIANTS, ...VARIANTS.filter((v) => v !== 'b').map((v) => `b÷${v}`)];

function variantCells(values: Row, digits: number): string[] {
  return [...VARIANTS.map((v) => fmt(values[v], digits)), ...VARIANTS.filter((v) => v !== 'b').map((v) => fmtRatio(ratio(values.b, values[v])))];
}

/** A table of one metric: a row per (size, GC), the variants, then b's ratios to the others. */
function metricTable(title: string, runs: readonly RunRecord[], sizes: readonly number[], gcs: readonly GcSetting[], where: (job: Job) => boolean, metric: MetricName, digits: number, firstColumn = 'N'): Table {
  const rows: string[][] = [];
  for (const pods of sizes) {
    for (const gc of gcs) {
      const values = row(runs, (job) => job.pods === pods && job.gc === gc && where(job), metric);
      if (Object.keys(values).length === 0) continue;
      rows.push([sizeLabel(pods), GC_LABEL[gc], ...variantCells(values, digits)]);
    }
  }
  return { title, header: [firstColumn, 'GC', ...VARIANT_HEADER], rows };
}

/** A cell of a scenario table: the median, or `failed` when every run of it failed. */
function scenarioCell(runs: readonly RunRecord[], where: (job: Job) => boolean, variant: VariantName, value: number | undefined, digits = 0): string {
  if (value !== undefined) return fmt(value, digits);
  return runs.some((run) => run.error !== undefined && run.job.variant === variant && where(run.job)) ? 'failed' : '–';
}

/** One table per scenario: b and c side by side on sync time, CPU time, longest stall and peak RSS. */
function scenarioTable(title: string, runs: readonly RunRecord[], kind: 'unpaged' | 'streaming', sizes: readonly number[], gcs: readonly GcSetting[]): Table {
  const rows: string[][] = [];
  for (const pods of sizes) {
    for (const gc of gcs) {
      const where = (job: Job): boolean => job.kind === kind && job.pods === pods && job.gc === gc;
      if (!runs.some((run) => where(run.job))) continue;
      const [sync, cpu, stall, stallCpu, rss] = (['syncMs', 'syncCpuMs', 'syncStallMs', 'syncStallCpuMs', 'syncRssMiB'] as const).map((metric) => row(runs, where, metric));
      const pair = (values: Row): string[] => [scenarioCell(runs, where, 'b', values.b), scenarioCell(runs, where, 'c', values.c)];
      const stalls = (['b', 'c'] as const).map((v) => `${scenarioCell(runs, where, v, stall![v])}${stallCpu![v] === undefined ? '' : ` (${fmt(stallCpu![v])})`}`);
      rows.push([sizeLabel(pods), GC_LABEL[gc], ...pair(sync!), fmtRatio(ratio(sync!.b, sync!.c)), ...pair(cpu!), ...stalls, ...pair(rss!), fmtRatio(ratio(rss!.b, rss!.c))]);
    }
  }
  const header = ['N', 'GC', 'sync b (ms)', 'sync c (ms)', 'b÷c', 'CPU b (ms)', 'CPU c (ms)', 'longest stall b (ms; CPU)', 'longest stall c (ms; CPU)', 'peak RSS b (MiB)', 'peak RSS c (MiB)', 'b÷c'];
  return { title, header, rows };
}

/** The GC settings that have runs (a merged file may hold more than the last run asked for). */
function gcSettingsOf(bench: BenchRun): GcSetting[] {
  return (['default', 'semi64'] as const).filter((gc) => bench.runs.some((run) => run.job.gc === gc));
}

function verdicts(bench: BenchRun): Verdict[] {
  const { runs, profile } = bench;
  const out: Verdict[] = [];
  const main = (pods: number, gc: GcSetting) => (job: Job) => job.kind === 'main' && objectsOf(job) === 'pod' && job.pods === pods && job.gc === gc;
  const big = Math.max(...profile.throughputCaches);
  const small = Math.min(...profile.throughputCaches);
  const biggestSync = Math.max(...profile.syncSizes);
  for (const gc of gcSettingsOf(bench)) {
    const setting = GC_LABEL[gc];
    const bigEps = row(runs, main(big, gc), 'eventsPerSecond');
    const smallEps = row(runs, main(small, gc), 'eventsPerSecond');
    /** `measure(variant)` gives the value for any variant, so that the floors are judged by the same rule. */
    const check = (target: string, measure: (variant: VariantName) => number | undefined, threshold: string, held: (v: number) => boolean, cpuValue?: number, floorsApply = true): void => {
      const value = measure('b');
      const floors: Partial<Record<'a1' | 'a2', { value: number; held: boolean }>> = {};
      for (const floor of floorsApply ? (['a1', 'a2'] as const) : []) {
        const floorValue = measure(floor);
        if (floorValue !== undefined) floors[floor] = { value: floorValue, held: held(floorValue) };
      }
      out.push({ target, setting, value, cpuValue, threshold, held: value === undefined ? undefined : held(value), floors });
    };
    const bigCpu = row(runs, main(big, gc), 'cpuEventsPerSecond');
    const smallCpu = row(runs, main(small, gc), 'cpuEventsPerSecond');
    check(`watch throughput ≥ 0.85× a2 at ${sizeLabel(big)} cached`, (v) => ratio(bigEps[v], bigEps.a2), '≥ 0.85', (v) => v >= 0.85, ratio(bigCpu.b, bigCpu.a2), false);
    for (const pods of profile.throughputCaches) {
      const eps = row(runs, main(pods, gc), 'eventsPerSecond');
      const cpu = row(runs, main(pods, gc), 'cpuEventsPerSecond');
      check(`watch throughput ≥ 1.5× client-node at ${sizeLabel(pods)} cached`, (v) => ratio(eps[v], eps.c), '≥ 1.5', (v) => v >= 1.5, ratio(cpu.b, cpu.c));
    }
    check(`events/s at ${sizeLabel(big)} cached ≥ 0.8× at ${sizeLabel(small)}`, (v) => ratio(bigEps[v], smallEps[v]), '≥ 0.8', (v) => v >= 0.8, ratio(bigCpu.b, smallCpu.b));
    for (const pods of profile.syncSizes) {
      const sync = row(runs, main(pods, gc), 'syncMs');
      const cpu = row(runs, main(pods, gc), 'syncCpuMs');
      check(`initial sync time (first list paged) ≤ 0.8× client-node at ${sizeLabel(pods)}`, (v) => ratio(sync[v], sync.c), '≤ 0.8', (v) => v <= 0.8, ratio(cpu.b, cpu.c));
    }
    const stall = row(runs, main(biggestSync, gc), 'syncStallMs');
    check(`longest event-loop stall during a paged sync of ${sizeLabel(biggestSync)} ≤ 50 ms`, (v) => stall[v], '≤ 50 ms', (v) => v <= 50);
    const rss = row(runs, main(biggestSync, gc), 'syncRssMiB');
    check(`peak RSS during a paged sync of ${sizeLabel(biggestSync)} ≤ 0.6× client-node`, (v) => ratio(rss[v], rss.c), '≤ 0.6', (v) => v <= 0.6);
    const heap = row(runs, main(profile.transformSize, gc), 'heapKiB');
    check(`heap per cached object ≤ 1.2× the parsed object (a2), ${sizeLabel(profile.transformSize)}`, (v) => ratio(heap[v], heap.a2), '≤ 1.2', (v) => v <= 1.2, undefined, false);
    const heapT = row(runs, (job) => job.kind === 'transform' && job.gc === gc, 'heapKiB');
    check('… with the managedFields transform (vs a2 with the same transform)', (v) => ratio(heapT[v], heapT.a2), '≤ 1.2', (v) => v <= 1.2, undefined, false);
    const unpaged = (pods: number) => (job: Job) => job.kind === 'unpaged' && job.pods === pods && job.gc === gc;
    if (profile.unpagedSizes.length > 0) {
      const biggest = Math.max(...profile.unpagedSizes);
      const stallU = row(runs, unpaged(biggest), 'syncStallMs');
      const stallCpuU = row(runs, unpaged(biggest), 'syncStallCpuMs');
      check(`longest event-loop stall during an unpaged sync of ${sizeLabel(biggest)} ≤ 100 ms`, (v) => stallU[v], '≤ 100 ms', (v) => v <= 100, stallCpuU.b, false);
      const rssU = row(runs, unpaged(biggest), 'syncRssMiB');
      check(`peak RSS during an unpaged sync of ${sizeLabel(biggest)} ≤ 0.6× client-node`, (v) => ratio(rssU[v], rssU.c), '≤ 0.6', (v) => v <= 0.6, undefined, false);
    }
    const beyond = profile.beyondStringLimit;
    if (beyond !== undefined && runs.some((run) => run.job.variant === 'b' && unpaged(beyond)(run.job))) {
      // Held when b synced at all: a body past V8's longest string cannot be parsed whole.
      const syncSeconds = row(runs, unpaged(beyond), 'syncMs').b;
      out.push({ target: `an unpaged sync of ${sizeLabel(beyond)} (one response beyond V8's longest string) completes, in s`, setting, value: syncSeconds === undefined ? undefined : syncSeconds / 1000, cpuValue: undefined, threshold: 'completes', held: syncSeconds !== undefined, floors: {} });
    }
  }
  return out;
}

function tables(bench: BenchRun): Table[] {
  const { runs, profile } = bench;
  const gcs = gcSettingsOf(bench);
  const isMain = (job: Job): boolean => job.kind === 'main' && objectsOf(job) === 'pod';
  const out: Table[] = [
    metricTable('1. Initial sync, first list paged: time to synced (ms, lower is better)', runs, profile.syncSizes, gcs, isMain, 'syncMs', 0),
    metricTable('1. Initial sync, first list paged: CPU time to synced (ms, all threads)', runs, profile.syncSizes, gcs, isMain, 'syncCpuMs', 0),
    metricTable('1. Initial sync, first list paged: peak RSS (MiB)', runs, profile.syncSizes, gcs, isMain, 'syncRssMiB', 0),
    metricTable('1. Initial sync, first list paged: longest event-loop stall (ms)', runs, profile.syncSizes, gcs, isMain, 'syncStallMs', 0),
    metricTable(`2. Watch throughput: ${profile.throughputEvents.toLocaleString('en-US')} MODIFIED events (events/s, higher is better)`, runs, profile.throughputCaches, gcs, isMain, 'eventsPerSecond', 0, 'cached'),
    metricTable('2. Watch throughput: CPU µs per event (all threads, GC included; lower is better)', runs, profile.throughputCaches, gcs, isMain, 'cpuMicrosPerEvent', 1, 'cached'),
    metricTable(`2. Latency server write → handler at ${profile.latencyRate.toLocaleString('en-US')} events/s: p50 (ms)`, runs, profile.throughputCaches, gcs, isMain, 'p50Ms', 2, 'cached'),
    metricTable(`2. Latency server write → handler: p99 (ms)`, runs, profile.throughputCaches, gcs, isMain, 'p99Ms', 2, 'cached'),
    metricTable('3. Heap per cached object (KiB), managedFields kept', runs, profile.syncSizes, gcs, isMain, 'heapKiB', 2),
    metricTable('3. Heap per cached object (KiB), managedFields dropped by the transform', runs, [profile.transformSize], gcs, (job) => job.kind === 'transform', 'heapKiB', 2),
  ];
  const fanoutRows: string[][] = [];
  for (const handlers of [1, ...profile.fanout.handlers]) {
    for (const gc of gcs) {
      const where = (job: Job): boolean => job.pods === profile.fanout.cache && job.gc === gc && (handlers === 1 ? isMain(job) : job.kind === 'fanout' && job.handlers === handlers);
      const values = row(runs, where, 'eventsPerSecond');
      if (Object.keys(values).length === 0) continue;
      fanoutRows.push([String(handlers), GC_LABEL[gc], ...variantCells(values, 0)]);
    }
  }
  out.push({ title: `4. Fan-out: events/s with k handler subscriptions, ${sizeLabel(profile.fanout.cache)} cached`, header: ['k', 'GC', ...VARIANT_HEADER], rows: fanoutRows });
  const relist = [profile.relistSize];
  out.push(
    metricTable('5. Relist after a 410: time from trigger to relisted (ms)', runs, relist, gcs, isMain, 'relistMs', 0),
    metricTable('5. Relist: peak RSS during the relist (MiB)', runs, relist, gcs, isMain, 'relistRssMiB', 0),
    metricTable('5. Relist: peak heap used during the relist (MiB)', runs, relist, gcs, isMain, 'relistHeapMiB', 0),
    metricTable('5. Relist: longest event-loop stall (ms)', runs, relist, gcs, isMain, 'relistStallMs', 0),
    metricTable('Server capacity while producing (events per second of its process CPU time; must stay above every client)', runs, profile.throughputCaches, gcs, isMain, 'serverEventsPerSecond', 0, 'cached'),
    scenarioTable(
      '6. Initial sync, first list answered whole (a 1.33 server, as every API server at resourceVersion "0"): b and c',
      runs,
      'unpaged',
      [...profile.unpagedSizes, ...(profile.beyondStringLimit === undefined ? [] : [profile.beyondStringLimit])],
      gcs,
    ),
    scenarioTable('7. Initial sync, b with a streaming list (a 1.36 server; c lists as always): b and c', runs, 'streaming', profile.streamingSizes, gcs),
  );
  return out;
}

/**
 * A one-minute load average above this many runnable tasks per core at the start means other
 * work was sharing the cores (the benchmark itself adds about one per core once it runs).
 */
export const BUSY_LOAD_PER_CORE = 0.5;

export const BEGIN_MARKER = '<!-- BEGIN GENERATED: npm run bench -->';
export const END_MARKER = '<!-- END GENERATED -->';

function markdown(bench: BenchRun, checks: readonly Verdict[]): string {
  const { machine, profile } = bench;
  const failures = bench.runs.filter((run) => run.error !== undefined);
  const lines = [
    BEGIN_MARKER,
    '',
    `Generated by \`npm run bench${profile.name === 'quick' ? ':quick' : ''}\` on ${bench.startedAt.slice(0, 16).replace('T', ' ')} UTC in ${Math.round(bench.durationMs / 1000)} s${bench.complete ? '' : ' (**incomplete: the run was still going or was interrupted**)'}.`,
    `Machine: ${machine.cpus} × ${machine.cpuModel}, ${(machine.totalMemoryBytes / 2 ** 30).toFixed(0)} GiB, ${machine.platform}; Node ${machine.node}. Load average (1 min) ${machine.loadAverageAtStart[0]?.toFixed(1)} at the start, ${machine.loadAverageAtEnd[0]?.toFixed(1)} at the end${(machine.loadAverageAtStart[0] ?? 0) > machine.cpus * BUSY_LOAD_PER_CORE ? ': **other work shared the cores; prefer the CPU-time ratios**' : ''}.`,
    `Pods of ~${(bench.podJsonBytes / 1024).toFixed(1)} KiB of JSON (managedFields included); medians of ${profile.reps} run(s) per cell; variants interleaved, each in a fresh process.`,
    '',
    'a1 = read + split + JSON.parse, drop; a2 = … + keep in one mutable Map; b = rx-informer (namespace + label index, one `handle()`); c = @kubernetes/client-node 2.0.1 `makeInformer`; d = kubernetes-fluent-client 3.11.11 `Watch` feeding a Map by namespace/name (as a Pepr controller keeps one).',
    '',
    'Sections 1–5 run against the loopback server\'s default profile, which pages the first list (`limit=500&resourceVersion=0`) as no real API server does; section 6 against a 1.33 profile, which answers it whole, as every API server\'s watch cache does; section 7 against a 1.36 profile, with b listing by a streaming list. The server compresses responses over 128 KB for clients that ask (b and c do; a1 and a2 do not).',
    '',
    '#### Targets',
    '',
    '| target | GC | value | wanted | held | same ratio by CPU time | floors on the same measure |',
    '|---|---|---|---|---|---|---|',
    ...checks.map((c) => `| ${c.target} | ${c.setting} | ${c.value === undefined ? '–' : c.value.toFixed(2)} | ${c.threshold} | ${c.held === undefined ? 'n/a' : c.held ? 'yes' : '**no**'} | ${c.cpuValue === undefined ? '' : c.cpuValue.toFixed(2)} | ${floorCell(c)} |`),
    '',
    'The last column is what the floors reach on the same measure in the same run. A target that a1 (parse and drop) misses cannot be met by any client that parses what it receives; one that a2 (the cheapest cache that keeps every object) misses asks for more than a plain cache reaches on this machine.',
    '',
    ...tables(bench).flatMap((table) => [markdownTable(table), '']),
  ];
  if (failures.length > 0) {
    lines.push('#### Runs that failed', '');
    for (const run of failures) lines.push(`- ${run.job.kind} N=${run.job.pods} ${run.job.variant} gc=${run.job.gc}: ${(run.error ?? '').split('\n')[0]}`);
    lines.push('');
  }
  lines.push(END_MARKER);
  return lines.join('\n');
}

function floorCell(verdict: Verdict): string {
  return Object.entries(verdict.floors)
    .map(([floor, { value, held }]) => `${floor} ${value.toFixed(2)}${held ? '' : ' (misses)'}`)
    .join(', ');
}

/** Writes the JSON results (always) and the docs table (when asked); returns a console summary. */
export function writeReport(bench: BenchRun, options: { readonly writeDocs: boolean; readonly fileName?: string }): { summary: string; files: string[] } {
  const root = path.resolve(__dirname, '..');
  const checks = verdicts(bench);
  const resultsDir = path.join(root, 'bench', 'results');
  fs.mkdirSync(resultsDir, { recursive: true });
  const baseName = options.fileName ?? bench.profile.name;
  const jsonFile = path.join(resultsDir, `${baseName}.json`);
  const medians = Object.fromEntries(tables(bench).map((table) => [table.title, { header: table.header, rows: table.rows }]));
  fs.writeFileSync(jsonFile, `${JSON.stringify({ ...bench, targets: checks, medians }, null, 2)}\n`);
  const files = [path.relative(root, jsonFile)];
  const section = markdown(bench, checks);
  if (options.writeDocs) {
    const docsFile = path.join(root, 'docs', 'PERFORMANCE.md');
    const existing = fs.existsSync(docsFile) ? fs.readFileSync(docsFile, 'utf8') : `# Performance\n\n${BEGIN_MARKER}\n${END_MARKER}\n`;
    const begin = existing.indexOf(BEGIN_MARKER);
    const end = existing.indexOf(END_MARKER);
    const next = begin === -1 || end === -1 ? `${existing.trimEnd()}\n\n${section}\n` : `${existing.slice(0, begin)}${section}${existing.slice(end + END_MARKER.length)}`;
    fs.writeFileSync(docsFile, next);
    files.push(path.relative(root, docsFile));
  } else {
    const mdFile = path.join(resultsDir, `${baseName}.md`);
    fs.writeFileSync(mdFile, `${section}\n`);
    files.push(path.relative(root, mdFile));
  }
  const summary = checks.map((c) => `${c.held === undefined ? 'n/a ' : c.held ? 'HELD' : 'MISS'}  ${c.target} [${c.setting}]: ${c.value === undefined ? '–' : c.value.toFixed(2)} (${c.threshold})${c.cpuValue === undefined ? '' : `; by CPU time ${c.cpuValue.toFixed(2)}`}${Object.keys(c.floors).length === 0 ? '' : `; floors: ${floorCell(c)}`}`).join('\n');
  return { summary, files };
}
