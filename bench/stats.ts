/**
 * Small statistics helpers for the benchmark: medians over repetitions, percentiles over latency
 * samples. Kept dependency-free so the numbers are easy to audit.
 */

/** The median of the finite values, or undefined when there are none. */
export function median(values: readonly (number | undefined)[]): number | undefined {
  const finite = values.filter((v): v is number => v !== undefined && Number.isFinite(v)).sort((a, b) => a - b);
  if (finite.length === 0) return undefined;
  const middle = finite.length >> 1;
  return finite.length % 2 === 1 ? finite[middle] : ((finite[middle - 1] as number) + (finite[middle] as number)) / 2;
}

/** The p-th percentile (0..100) by nearest rank of an already sorted array. */
export function percentileOfSorted(sorted: ArrayLike<number>, p: number): number | undefined {
  if (sorted.length === 0) return undefined;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

/** Latency samples kept in a preallocated typed array, so recording one costs no allocation. */
export class LatencyRecorder {
  private readonly samples: Float64Array;
  private count = 0;

  constructor(capacity: number) {
    this.samples = new Float64Array(Math.max(1, capacity));
  }

  record(ms: number): void {
    if (this.count < this.samples.length) this.samples[this.count++] = ms;
  }

  get size(): number {
    return this.count;
  }

  summary(): { p50: number | undefined; p99: number | undefined; max: number | undefined } {
    const sorted = this.samples.slice(0, this.count).sort();
    return { p50: percentileOfSorted(sorted, 50), p99: percentileOfSorted(sorted, 99), max: percentileOfSorted(sorted, 100) };
  }
}

/** A ratio a/b, or undefined when either side is missing. */
export function ratio(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined || b === undefined || b === 0) return undefined;
  return a / b;
}
