/**
 * The targets the benchmark prints (never test assertions): each a ratio or a figure of b, judged
 * on the medians of one run, beside what the floors reach on the same measure.
 */
import { GC_LABEL, OBJECT_ORDER, gcSettingsOf, objectLabel, objectsOf, row, sizeLabel, type BenchRun, type GcSetting, type Job, type Row } from './records';
import type { ObjectKind, VariantName } from './protocol';
import { ratio } from './stats';

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

/** The faster of the two TypeScript peers (c, d) on a higher-is-better measure; undefined when neither has a value. */
function fasterPeer(values: Row): number | undefined {
  const peers = [values.c, values.d].filter((value): value is number => value !== undefined);
  return peers.length === 0 ? undefined : Math.max(...peers);
}

/**
 * The targets of issue 19, judged on the medians of this run: throughput against the faster of
 * the TypeScript peers at every object size and cache size and against a2 at the largest cache,
 * latency, the paged sync's longest stall, and the targets already held (sync time, peak RSS,
 * heap per object, relist time).
 */
export function verdicts(bench: BenchRun): Verdict[] {
  const { runs, profile } = bench;
  const out: Verdict[] = [];
  const main = (pods: number, gc: GcSetting, objects: ObjectKind = 'pod') => (job: Job) => job.kind === 'main' && objectsOf(job) === objects && job.pods === pods && job.gc === gc;
  const biggestSync = Math.max(...profile.syncSizes);
  const throughputCells: { readonly objects: ObjectKind; readonly pods: number }[] = OBJECT_ORDER.flatMap((objects) =>
    (objects === 'pod' ? profile.throughputCaches : profile.objectSizes.kinds.includes(objects) ? profile.objectSizes.caches : []).map((pods) => ({ objects, pods })),
  );
  for (const gc of gcSettingsOf(bench)) {
    const setting = GC_LABEL[gc];
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
    for (const { objects, pods } of throughputCells) {
      const where = main(pods, gc, objects);
      if (!runs.some((run) => where(run.job))) continue;
      const eps = row(runs, where, 'eventsPerSecond');
      const cpu = row(runs, where, 'cpuEventsPerSecond');
      const cell = `${objectLabel(bench, objects)}, ${sizeLabel(pods)} cached`;
      const peersFailed = (['c', 'd'] as const).every((peer) => eps[peer] === undefined && runs.some((run) => run.error !== undefined && run.job.variant === peer && where(run.job)));
      if (peersFailed && eps.b !== undefined) {
        // Neither peer synced (a list past V8's longest string): b streaming at all is the result.
        out.push({ target: `watch events/s ≥ 1.0× the faster of client-node and fluent-client (both failed to sync), ${cell}`, setting, value: undefined, cpuValue: undefined, threshold: '≥ 1.0', held: true, floors: {} });
      } else {
        check(`watch events/s ≥ 1.0× the faster of client-node and fluent-client, ${cell}`, (v) => ratio(eps[v], fasterPeer(eps)), '≥ 1.0', (v) => v >= 1.0, ratio(cpu.b, fasterPeer(cpu)));
      }
      if (pods === Math.max(...profile.throughputCaches)) {
        check(`watch events/s ≥ 1.0× a2, ${cell}`, (v) => ratio(eps[v], eps.a2), '≥ 1.0', (v) => v >= 1.0, ratio(cpu.b, cpu.a2), false);
      }
    }
    for (const pods of profile.throughputCaches) {
      const p99 = row(runs, main(pods, gc), 'p99Ms');
      check(`p99 latency server write → handler at ${profile.latencyRate.toLocaleString('en-US')} events/s ≤ 5 ms, ${sizeLabel(pods)} cached (ms)`, (v) => p99[v], '≤ 5 ms', (v) => v <= 5);
    }
    const stall = row(runs, main(biggestSync, gc), 'syncStallMs');
    const stallCpu = row(runs, main(biggestSync, gc), 'syncStallCpuMs');
    check(`longest event-loop stall during a paged sync of ${sizeLabel(biggestSync)} ≤ 1.5× a2's`, (v) => ratio(stall[v], stall.a2), '≤ 1.5', (v) => v <= 1.5, ratio(stallCpu.b, stallCpu.a2), false);
    check(`… and ≤ 100 ms (ms)`, (v) => stall[v], '≤ 100 ms', (v) => v <= 100, stallCpu.b);
    for (const pods of profile.syncSizes) {
      const sync = row(runs, main(pods, gc), 'syncMs');
      const cpu = row(runs, main(pods, gc), 'syncCpuMs');
      check(`initial sync time (first list paged) ≤ 0.8× client-node at ${sizeLabel(pods)}`, (v) => ratio(sync[v], sync.c), '≤ 0.8', (v) => v <= 0.8, ratio(cpu.b, cpu.c));
    }
    const rss = row(runs, main(biggestSync, gc), 'syncRssMiB');
    check(`peak RSS during a paged sync of ${sizeLabel(biggestSync)} ≤ 0.6× client-node`, (v) => ratio(rss[v], rss.c), '≤ 0.6', (v) => v <= 0.6);
    const heap = row(runs, main(profile.transformSize, gc), 'heapKiB');
    check(`heap per cached object ≤ the parsed object's (a2), ${sizeLabel(profile.transformSize)}`, (v) => ratio(heap[v], heap.a2), '≤ 1.0', (v) => v <= 1.0, undefined, false);
    const heapT = row(runs, (job) => job.kind === 'transform' && job.gc === gc, 'heapKiB');
    check('… with the managedFields transform (vs a2 with the same transform)', (v) => ratio(heapT[v], heapT.a2), '≤ 1.0', (v) => v <= 1.0, undefined, false);
    const relist = row(runs, main(profile.relistSize, gc), 'relistMs');
    check(`relist after a 410 of ${sizeLabel(profile.relistSize)} ≤ 0.6× client-node's time`, (v) => ratio(relist[v], relist.c), '≤ 0.6', (v) => v <= 0.6);
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
