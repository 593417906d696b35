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

/**
 * One measure of a table that shows several: its label (first column), its metric and its digits,
 * and, where they differ from the table's, its own sizes and runs.
 */
interface Measure {
  readonly label: string;
  readonly metric: MetricName;
  readonly digits: number;
  readonly sizes?: readonly number[];
  readonly where?: (job: Job) => boolean;
}

/**
 * The cells of each GC setting side by side in one cell (`default / semi 64 MB`), so that a run
 * under both settings takes one row per size, not two; a single setting's cells as they are, and
 * `–` where no setting has a value.
 */
function bySetting(cellsPerSetting: readonly (readonly string[])[]): string[] {
  return (cellsPerSetting[0] ?? []).map((_, i) => {
    const cells = cellsPerSetting.map((setting) => setting[i] ?? '–');
    return cells.every((cell) => cell === '–') ? '–' : cells.join(' / ');
  });
}

/** What a cell holds when the run has more than one GC setting, for a table's title. */
function settingsNote(gcs: readonly GcSetting[]): string {
  return gcs.length > 1 ? ` (each cell: ${gcs.map((gc) => (gc === 'default' ? 'default GC' : GC_LABEL[gc])).join(' / ')})` : '';
}

/**
 * A table of measures that share their axes (a sync's time, CPU time, peak RSS and stall, say):
 * a row per (measure, size), the variants, then b's ratios to the others, the GC settings side by
 * side in each cell. One table for the lot instead of one per measure and setting keeps the
 * section short without losing a cell.
 */
function measuresTable(title: string, runs: readonly RunRecord[], sizes: readonly number[], gcs: readonly GcSetting[], where: (job: Job) => boolean, measures: readonly Measure[], firstColumn = 'N'): Table {
  const rows: string[][] = [];
  for (const { label, metric, digits, ...own } of measures) {
    for (const pods of own.sizes ?? sizes) {
      const perSetting = gcs.map((gc) => row(runs, (job) => job.pods === pods && job.gc === gc && (own.where ?? where)(job), metric));
      if (perSetting.every((values) => Object.keys(values).length === 0)) continue;
      rows.push([label, sizeLabel(pods), ...bySetting(perSetting.map((values) => variantCells(values, digits, metric)))]);
    }
  }
  return { title: `${title}${settingsNote(gcs)}`, header: ['measure', firstColumn, ...VARIANT_HEADER], rows };
}

/** A cell of a scenario table: the median, or `failed` when every run of it failed. */
function scenarioCell(runs: readonly RunRecord[], where: (job: Job) => boolean, variant: VariantName, value: number | undefined, digits = 0): string {
  if (value !== undefined) return fmt(value, digits);
  return runs.some((run) => run.error !== undefined && run.job.variant === variant && where(run.job)) ? 'failed' : '–';
}

/** The first list of each scenario, as the scenario table's first column names it. */
const FIRST_LIST: Readonly<Record<'unpaged' | 'streaming', string>> = { unpaged: 'whole (1.33)', streaming: 'streaming (1.36)' };

/** The unpaged and streaming scenarios in one table: b and c side by side on sync time, CPU time, longest stall and peak RSS. */
function scenarioTable(title: string, runs: readonly RunRecord[], scenarios: readonly { readonly kind: 'unpaged' | 'streaming'; readonly sizes: readonly number[] }[], gcs: readonly GcSetting[]): Table {
  const rows: string[][] = [];
  for (const { kind, sizes } of scenarios) {
    for (const pods of sizes) {
      for (const gc of gcs) {
        const where = (job: Job): boolean => job.kind === kind && job.pods === pods && job.gc === gc;
        if (!runs.some((run) => where(run.job))) continue;
        const [sync, cpu, stall, stallCpu, rss] = (['syncMs', 'syncCpuMs', 'syncStallMs', 'syncStallCpuMs', 'syncRssMiB'] as const).map((metric) => row(runs, where, metric));
        const pair = (values: Row): string[] => [scenarioCell(runs, where, 'b', values.b), scenarioCell(runs, where, 'c', values.c)];
        const stalls = (['b', 'c'] as const).map((v) => `${scenarioCell(runs, where, v, stall![v])}${stallCpu![v] === undefined ? '' : ` (${fmt(stallCpu![v])})`}`);
        rows.push([FIRST_LIST[kind], sizeLabel(pods), GC_LABEL[gc], ...pair(sync!), fmtRatio(ratio(sync!.b, sync!.c)), ...pair(cpu!), ...stalls, ...pair(rss!), fmtRatio(ratio(rss!.b, rss!.c))]);
      }
    }
  }
  const header = ['first list', 'N', 'GC', 'sync b (ms)', 'sync c (ms)', 'b÷c', 'CPU b (ms)', 'CPU c (ms)', 'longest stall b (ms; CPU)', 'longest stall c (ms; CPU)', 'peak RSS b (MiB)', 'peak RSS c (MiB)', 'b÷c'];
  return { title, header, rows };
}

/**
 * The object-size dimension in one table: a row per (measure, kind of objects, cache size) under
 * one GC setting, V8's default when the run has it, the setting every kind is measured under (the
 * pods' other settings are in sections 1–3), every variant (`failed` where every run of a cell failed, e.g. a
 * list longer than V8's longest string), then b's ratios to the others.
 */
function objectSizeTable(title: string, detail: string, bench: BenchRun, gcs: readonly GcSetting[], measures: readonly Measure[]): Table {
  const { runs, profile } = bench;
  const gc: GcSetting = gcs.includes('default') ? 'default' : (gcs[0] ?? 'default');
  const rows: string[][] = [];
  for (const { label, metric, digits } of measures) {
    for (const objects of OBJECT_ORDER) {
      for (const pods of profile.objectSizes.caches) {
        const where = (job: Job): boolean => job.kind === 'main' && objectsOf(job) === objects && job.pods === pods && job.gc === gc;
        if (!runs.some((run) => where(run.job))) continue;
        const values = row(runs, where, metric);
        const cells = variantCells(values, digits, metric).map((cell, i) => (i < VARIANTS.length ? scenarioCell(runs, where, VARIANTS[i]!, values[VARIANTS[i]!], digits) : cell));
        rows.push([label, objectLabel(bench, objects), sizeLabel(pods), ...cells]);
      }
    }
  }
  return { title: `${title}, ${gc === 'default' ? "V8's default GC" : GC_LABEL[gc]}: ${detail}`, header: ['measure', 'objects', 'cached', ...VARIANT_HEADER], rows };
}

function tables(bench: BenchRun): Table[] {
  const { runs, profile } = bench;
  const gcs = gcSettingsOf(bench);
  const isMain = (job: Job): boolean => job.kind === 'main' && objectsOf(job) === 'pod';
  const events = profile.throughputEvents.toLocaleString('en-US');
  const rate = profile.latencyRate.toLocaleString('en-US');
  const out: Table[] = [
    measuresTable('1. Initial sync, first list paged: time and CPU time to synced, peak RSS, longest event-loop stall', runs, profile.syncSizes, gcs, isMain, [
      { label: 'sync (ms)', metric: 'syncMs', digits: 0 },
      { label: 'CPU, all threads (ms)', metric: 'syncCpuMs', digits: 0 },
      { label: 'peak RSS (MiB)', metric: 'syncRssMiB', digits: 0 },
      { label: 'longest stall (ms)', metric: 'syncStallMs', digits: 0 },
    ]),
    measuresTable(
      `2. Watch events: throughput of ${events} MODIFIED events (CPU time of all threads, GC included), latency server write → handler at ${rate} events/s, and the server's capacity (events per second of its process CPU time; it must stay above every client's rate)`,
      runs,
      profile.throughputCaches,
      gcs,
      isMain,
      [
        { label: 'events/s', metric: 'eventsPerSecond', digits: 0 },
        { label: 'CPU µs/event', metric: 'cpuMicrosPerEvent', digits: 1 },
        { label: 'latency p50 (ms)', metric: 'p50Ms', digits: 2 },
        { label: 'latency p99 (ms)', metric: 'p99Ms', digits: 2 },
        { label: 'server capacity (events/s)', metric: 'serverEventsPerSecond', digits: 0 },
      ],
      'cached',
    ),
    measuresTable('3. Heap per cached object (KiB), managedFields kept, and dropped by the transform', runs, profile.syncSizes, gcs, isMain, [
      { label: 'managedFields kept', metric: 'heapKiB', digits: 2 },
      { label: 'managedFields dropped', metric: 'heapKiB', digits: 2, sizes: [profile.transformSize], where: (job) => job.kind === 'transform' },
    ]),
  ];
  const fanoutRows: string[][] = [];
  for (const handlers of [1, ...profile.fanout.handlers]) {
    const where = (gc: GcSetting) => (job: Job): boolean => job.pods === profile.fanout.cache && job.gc === gc && (handlers === 1 ? isMain(job) : job.kind === 'fanout' && job.handlers === handlers);
    const perSetting = gcs.map((gc) => row(runs, where(gc), 'eventsPerSecond'));
    if (perSetting.every((values) => Object.keys(values).length === 0)) continue;
    fanoutRows.push([String(handlers), ...bySetting(perSetting.map((values) => variantCells(values, 0, 'eventsPerSecond')))]);
  }
  out.push({ title: `4. Fan-out: events/s with k handler subscriptions, ${sizeLabel(profile.fanout.cache)} cached${settingsNote(gcs)}`, header: ['k', ...VARIANT_HEADER], rows: fanoutRows });
  out.push(
    measuresTable('5. Relist after a 410: time from trigger to relisted, and the peaks during the relist', runs, [profile.relistSize], gcs, isMain, [
      { label: 'relist (ms)', metric: 'relistMs', digits: 0 },
      { label: 'peak RSS (MiB)', metric: 'relistRssMiB', digits: 0 },
      { label: 'peak heap used (MiB)', metric: 'relistHeapMiB', digits: 0 },
      { label: 'longest stall (ms)', metric: 'relistStallMs', digits: 0 },
    ]),
    scenarioTable(
      '6. Initial sync, first list answered whole (a 1.33 server, as every API server at resourceVersion "0") or streamed (a 1.36 server; c lists as always): b and c',
      runs,
      [
        { kind: 'unpaged', sizes: [...profile.unpagedSizes, ...(profile.beyondStringLimit === undefined ? [] : [profile.beyondStringLimit])] },
        { kind: 'streaming', sizes: profile.streamingSizes },
      ],
      gcs,
    ),
    objectSizeTable('7. Object sizes', `throughput over ${events} MODIFIED events (a fifth of that for the custom resources), p99 latency at ${rate} events/s, sync with the first list paged`, bench, gcs, [
      { label: 'events/s', metric: 'eventsPerSecond', digits: 0 },
      { label: 'CPU µs/event', metric: 'cpuMicrosPerEvent', digits: 1 },
      { label: 'latency p99 (ms)', metric: 'p99Ms', digits: 2 },
      { label: 'sync (ms)', metric: 'syncMs', digits: 0 },
      { label: 'sync peak RSS (MiB)', metric: 'syncRssMiB', digits: 0 },
      { label: 'heap per object (KiB)', metric: 'heapKiB', digits: 2 },
    ]),
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
    'Sections 1–5 and 7 run against the loopback server\'s default profile, which pages the first list (`limit=500&resourceVersion=0`) as no real API server does; section 6 against a 1.33 profile, which answers it whole, as every API server\'s watch cache does, and a 1.36 profile, with b listing by a streaming list. The server compresses responses over 128 KB for clients that ask (b and c do; a1 and a2 do not).',
    '',
    '#### Targets',
    '',
    ...targetsTable(checks),
    '',
    '"by CPU" is the same ratio from CPU time, to read when other work shared the cores; "floors" is what a1 and a2 reach on the same measure in the same run. A target that a1 (parse and drop) misses cannot be met by any client that parses what it receives; one that a2 (the cheapest cache that keeps every object) misses asks for more than a plain cache reaches on this machine.',
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

/**
 * The targets, a row per target and a group of columns per GC setting (value, verdict, the ratio
 * by CPU time, the floors): each target is judged under every setting, so the settings side by
 * side halve the rows. A setting that did not measure a target shows `–`.
 */
function targetsTable(checks: readonly Verdict[]): string[] {
  const settings = [...new Set(checks.map((c) => c.setting))];
  const rows = new Map<string, Map<string, Verdict>>();
  const seen = new Map<string, number>();
  for (const check of checks) {
    // A target named twice under one setting keeps both rows (the n-th of each setting side by side).
    const nth = seen.get(`${check.setting}\0${check.target}`) ?? 0;
    seen.set(`${check.setting}\0${check.target}`, nth + 1);
    const key = `${check.target}\0${nth}`;
    if (!rows.has(key)) rows.set(key, new Map());
    rows.get(key)!.set(check.setting, check);
  }
  const cells = (c: Verdict | undefined): string[] =>
    c === undefined ? ['–', '', '', ''] : [c.value === undefined ? '–' : c.value.toFixed(2), c.held === undefined ? 'n/a' : c.held ? 'yes' : '**no**', c.cpuValue === undefined ? '' : c.cpuValue.toFixed(2), floorCell(c)];
  const header = ['target', 'wanted', ...settings.flatMap((setting) => [`b, ${setting === GC_LABEL.default ? 'default GC' : setting}`, 'held', 'by CPU', 'floors'])];
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...[...rows.values()].map((bySetting) => {
      const first = [...bySetting.values()][0]!;
      return `| ${[first.target, first.threshold, ...settings.flatMap((setting) => cells(bySetting.get(setting)))].join(' | ')} |`;
    }),
  ];
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
