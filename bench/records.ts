/**
 * The records of a benchmark run (what ran, on which machine, with what result) and the medians
 * drawn from them, shared by the report (tables) and the targets (verdicts).
 */
import type { ClientPlan, ClientResult, ObjectKind, VariantName } from './protocol';
import { median } from './stats';

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

export const VARIANTS: readonly VariantName[] = ['a1', 'a2', 'b', 'c', 'd'];

/** The kind of objects of a job (older results have none: pods). */
export function objectsOf(job: Job): ObjectKind {
  return job.objects ?? 'pod';
}
export const GC_LABEL: Readonly<Record<GcSetting, string>> = { default: 'default', semi64: 'semi 64 MB' };
export const MiB = 2 ** 20;

export type Metric = (result: ClientResult) => number | undefined;

export const metrics = {
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
export type MetricName = keyof typeof metrics;

/** Medians per variant of one metric over the runs selected. */
export type Row = Partial<Record<VariantName, number>>;

export function select(runs: readonly RunRecord[], where: (job: Job) => boolean): RunRecord[] {
  return runs.filter((run) => run.result !== undefined && where(run.job));
}

export function row(runs: readonly RunRecord[], where: (job: Job) => boolean, metric: MetricName): Row {
  const out: Row = {};
  for (const variant of VARIANTS) {
    const values = select(runs, (job) => job.variant === variant && where(job)).map((run) => metrics[metric](run.result!));
    const value = median(values);
    if (value !== undefined) out[variant] = value;
  }
  return out;
}

export function fmt(value: number | undefined, digits = 0): string {
  if (value === undefined) return '–';
  return value >= 10_000 ? Math.round(value).toLocaleString('en-US') : value.toFixed(digits);
}

export function fmtRatio(value: number | undefined): string {
  return value === undefined ? '–' : `${value.toFixed(2)}×`;
}

export function sizeLabel(n: number): string {
  return n >= 1000 ? `${n / 1000}k` : String(n);
}

/** The kinds of objects, smallest first. */
export const OBJECT_ORDER: readonly ObjectKind[] = ['lean-pod', 'pod', 'application'];
export function objectLabel(bench: BenchRun, objects: ObjectKind): string {
  const bytes = bench.objectJsonBytes?.[objects] ?? (objects === 'pod' ? bench.podJsonBytes : undefined);
  const name = objects === 'application' ? 'custom resources' : objects === 'lean-pod' ? 'pods, no managedFields' : 'pods';
  return bytes === undefined ? name : `${name}, ${(bytes / 1024).toFixed(1)} KiB`;
}

/** The GC settings that have runs (a merged file may hold more than the last run asked for). */
export function gcSettingsOf(bench: BenchRun): GcSetting[] {
  return (['default', 'semi64'] as const).filter((gc) => bench.runs.some((run) => run.job.gc === gc));
}
