import { PerformanceObserver } from 'node:perf_hooks';

/** GC pauses observed since the last reset: their total and longest duration (ms) and count. */
export interface GcPauses {
  readonly totalMs: number;
  readonly count: number;
  readonly longestMs: number;
  reset(): void;
}

/** Starts counting this process's GC pauses, for the micro-benchmarks' reports. */
export function observeGcPauses(): GcPauses {
  const pauses = {
    totalMs: 0,
    count: 0,
    longestMs: 0,
    reset(): void {
      pauses.totalMs = 0;
      pauses.count = 0;
      pauses.longestMs = 0;
    },
  };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      pauses.totalMs += entry.duration;
      pauses.count++;
      pauses.longestMs = Math.max(pauses.longestMs, entry.duration);
    }
  }).observe({ entryTypes: ['gc'] });
  return pauses;
}
