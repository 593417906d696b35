/**
 * Turns the runs into medians, ratios and target verdicts, writes them as JSON under
 * bench/results/, and regenerates the table section of docs/PERFORMANCE.md (between the
 * GENERATED markers; the hand-written text around it is kept).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { VariantName } from './protocol';
import { GC_LABEL, OBJECT_ORDER, VARIANTS, fmt, fmtRatio, gcSettingsOf, objectLabel, objectsOf, row, sizeLabel, type BenchRun, type GcSetting, type Job, type MetricName, type Row, type RunRecord } from './records';
import { ratio } from './stats';
import { verdicts, type Verdict } from './targets';

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

/**
 * Ratios with no meaning, shown as `–`: a1 keeps no objects, so its heap per object is the
 * harness's own drift around zero (−0.00 to 2.6 KiB), and b's ratio to it would read as −9,374×.
 */
const NO_RATIO: Partial<Record<MetricName, readonly VariantName[]>> = { heapKiB: ['a1'] };

function variantCells(values: Row, digits: number, metric: MetricName): string[] {
  const comparable = (v: VariantName): boolean => !(NO_RATIO[metric] ?? []).includes(v);
  return [...VARIANTS.map((v) => fmt(values[v], digits)), ...VARIANTS.filter((v) => v !== 'b').map((v) => fmtRatio(comparable(v) ? ratio(values.b, values[v]) : undefined))];
}

/** A table of one metric: a row per (size, GC), the variants, then b's ratios to the others. */
function metricTable(title: string, runs: readonly RunRecord[], sizes: readonly number[], gcs: readonly GcSetting[], where: (job: Job) => boolean, metric: MetricName, digits: number, firstColumn = 'N'): Table {
  const rows: string[][] = [];
  for (const pods of sizes) {
    for (const gc of gcs) {
      const values = row(runs, (job) => job.pods === pods && job.gc === gc && where(job), metric);
      if (Object.keys(values).length === 0) continue;
      rows.push([sizeLabel(pods), GC_LABEL[gc], ...variantCells(values, digits, metric)]);
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


/**
 * One table of the object-size dimension: a row per (kind of objects, cache size) at V8's default
 * GC when the run has it, the setting every kind is measured under (the pods' other settings are
 * in sections 1–3), every variant (`failed` where every run of a cell failed, e.g. a list longer
 * than V8's longest string), then b's ratios to the others.
 */
function objectSizeTable(title: string, bench: BenchRun, gcs: readonly GcSetting[], metric: MetricName, digits: number): Table {
  const { runs, profile } = bench;
  const rows: string[][] = [];
  for (const objects of OBJECT_ORDER) {
    for (const pods of profile.objectSizes.caches) {
      for (const gc of gcs.includes('default') ? (['default'] as const) : gcs) {
        const where = (job: Job): boolean => job.kind === 'main' && objectsOf(job) === objects && job.pods === pods && job.gc === gc;
        if (!runs.some((run) => where(run.job))) continue;
        const values = row(runs, where, metric);
        const cells = variantCells(values, digits, metric).map((cell, i) => (i < VARIANTS.length ? scenarioCell(runs, where, VARIANTS[i]!, values[VARIANTS[i]!], digits) : cell));
        rows.push([objectLabel(bench, objects), sizeLabel(pods), GC_LABEL[gc], ...cells]);
      }
    }
  }
  return { title, header: ['objects', 'cached', 'GC', ...VARIANT_HEADER], rows };
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
      fanoutRows.push([String(handlers), GC_LABEL[gc], ...variantCells(values, 0, 'eventsPerSecond')]);
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
    objectSizeTable(`8. Object sizes: watch throughput, ${profile.throughputEvents.toLocaleString('en-US')} MODIFIED events (a fifth of that for the custom resources; events/s)`, bench, gcs, 'eventsPerSecond', 0),
    objectSizeTable('8. Object sizes: CPU µs per event', bench, gcs, 'cpuMicrosPerEvent', 1),
    objectSizeTable(`8. Object sizes: latency server write → handler at ${profile.latencyRate.toLocaleString('en-US')} events/s, p99 (ms)`, bench, gcs, 'p99Ms', 2),
    objectSizeTable('8. Object sizes: initial sync, first list paged (ms)', bench, gcs, 'syncMs', 0),
    objectSizeTable('8. Object sizes: peak RSS during the sync (MiB)', bench, gcs, 'syncRssMiB', 0),
    objectSizeTable('8. Object sizes: heap per cached object (KiB)', bench, gcs, 'heapKiB', 2),
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

/**
 * How many runs each cell's median is of: the profile's repetitions, or a range when `--merge`
 * assembled the results from runs with different `--reps` (each run is in the JSON).
 */
function repetitionsPerCell(bench: BenchRun): string {
  const perCell = new Map<string, number>();
  for (const run of bench.runs) {
    const cell = JSON.stringify(run.job);
    perCell.set(cell, (perCell.get(cell) ?? 0) + 1);
  }
  const counts = [...perCell.values()];
  if (counts.length === 0) return `${bench.profile.reps} run(s) per cell`;
  const least = Math.min(...counts);
  const most = Math.max(...counts);
  return least === most ? `${most} run(s) per cell` : `${least}–${most} runs per cell (merged from several invocations; every run is in bench/results/${bench.profile.name}.json)`;
}

function markdown(bench: BenchRun, checks: readonly Verdict[]): string {
  const { machine, profile } = bench;
  const failures = bench.runs.filter((run) => run.error !== undefined);
  const lines = [
    BEGIN_MARKER,
    '',
    `Generated by \`npm run bench${profile.name === 'quick' ? ':quick' : ''}\` on ${bench.startedAt.slice(0, 16).replace('T', ' ')} UTC in ${Math.round(bench.durationMs / 1000)} s${bench.complete ? '' : ' (**incomplete: the run was still going or was interrupted**)'}.`,
    `Machine: ${machine.cpus} × ${machine.cpuModel}, ${(machine.totalMemoryBytes / 2 ** 30).toFixed(0)} GiB, ${machine.platform}; Node ${machine.node}. Load average (1 min) ${machine.loadAverageAtStart[0]?.toFixed(1)} at the start, ${machine.loadAverageAtEnd[0]?.toFixed(1)} at the end${(machine.loadAverageAtStart[0] ?? 0) > machine.cpus * BUSY_LOAD_PER_CORE ? ': **other work shared the cores; prefer the CPU-time ratios**' : ''}.`,
    `Pods of ~${(bench.podJsonBytes / 1024).toFixed(1)} KiB of JSON (managedFields included); medians of ${repetitionsPerCell(bench)}; variants interleaved, each in a fresh process.`,
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
    for (const run of failures) lines.push(`- ${run.job.kind} N=${run.job.pods}${objectsOf(run.job) === 'pod' ? '' : ` ${objectsOf(run.job)}`} ${run.job.variant} gc=${run.job.gc}: ${(run.error ?? '').split('\n')[0]}`);
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
