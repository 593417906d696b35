import type { KubeObject } from '../lib/base/object';
import { objectKey } from '../lib/store/keys';
import { isConverged, type ViewDivergence } from './legality';

/**
 * Convergence and leak probes of the soak: how far a cache is from the server, how long it takes
 * to close the gap, and whether anything (socket, timer) outlives an unsubscription.
 */

/** Key → resourceVersion of a set of objects (a server listing, a snapshot, another client's cache). */
export function versionsOf(objects: Iterable<KubeObject>): Map<string, string> {
  const versions = new Map<string, string>();
  for (const object of objects) versions.set(objectKey(object), object.metadata.resourceVersion ?? '');
  return versions;
}

/** How far a cache (key → resourceVersion) is from the server. Counts, for reports. */
export interface DivergenceFigures {
  readonly missing: number;
  readonly extra: number;
  readonly stale: number;
}

/** The counts of a divergence. */
export function figuresOf(divergence: ViewDivergence): DivergenceFigures {
  return { missing: divergence.missing.length, extra: divergence.missedDeletes.length, stale: divergence.stale.length };
}

/**
 * Polls `probe` until it reports convergence or `timeoutMs` passes. Resolves with the time it
 * took (ms), or undefined on timeout together with the last divergence seen.
 *
 * Real time on purpose: this measures a real informer against a real server.
 */
export async function waitForConvergence(
  probe: () => ViewDivergence,
  options: { readonly timeoutMs: number; readonly intervalMs?: number },
): Promise<{ readonly tookMs: number | undefined; readonly last: ViewDivergence }> {
  const start = performance.now();
  const interval = options.intervalMs ?? 10;
  for (;;) {
    const last = probe();
    const elapsed = performance.now() - start;
    if (isConverged(last)) return { tookMs: elapsed, last };
    if (elapsed >= options.timeoutMs) return { tookMs: undefined, last };
    await delay(interval);
  }
}

/** Active libuv handles and requests by type (`TCPSocketWrap`, `Timeout` ...); unref'd timers are not listed. */
export function activeResources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const type of process.getActiveResourcesInfo()) counts.set(type, (counts.get(type) ?? 0) + 1);
  return counts;
}

/**
 * Peak memory, sampled on an unref'd timer, and the heap in use when sampling began: inside a
 * shared jest worker that baseline holds what earlier test files left behind, which is no part of
 * what the soak measures.
 */
export class MemorySampler {
  private peakRss = 0;
  private peakHeap = 0;
  private readonly baselineHeap: number;
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(intervalMs = 100) {
    (globalThis as { gc?: () => void }).gc?.();
    this.baselineHeap = process.memoryUsage().heapUsed;
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  sample(): void {
    const usage = process.memoryUsage();
    if (usage.rss > this.peakRss) this.peakRss = usage.rss;
    if (usage.heapUsed > this.peakHeap) this.peakHeap = usage.heapUsed;
  }

  stop(): { readonly peakRssBytes: number; readonly peakHeapBytes: number; readonly baselineHeapBytes: number } {
    clearInterval(this.timer);
    this.sample();
    return { peakRssBytes: this.peakRss, peakHeapBytes: this.peakHeap, baselineHeapBytes: this.baselineHeap };
  }
}

/** A real-time pause (the soak runs against a real server; unit logic uses virtual time). */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
