import type { SoakConfig } from './engine';

/**
 * The two soak sizes. Both keep watches at 1 s so that faults armed for "the next watch" land
 * quickly, and the server sends bookmarks every 200 ms so a quiet 1 s watch still counts as healthy.
 */

/** The seeded run inside `npm test`: one fault of each kind, small cluster, well under 20 s. */
export function shortSoak(seed: number, log?: (line: string) => void): SoakConfig {
  return {
    seed,
    plan: { steps: 11, stormMs: { min: 100, max: 200 }, maxStallMs: 600, maxSlowWriteMs: 6, maxBurst: 1 },
    pods: 60,
    namespaces: 4,
    mutationsPerSecond: 100,
    managedFields: false,
    watchTimeoutSeconds: 1,
    bookmarkIntervalMs: 200,
    backoff: { initialMs: 20, maxMs: 200, resetAfterMs: 1000 },
    pageSize: 10,
    maxFireWaitMs: 2500,
    convergenceTimeoutMs: 5000,
    syncTimeoutMs: 5000,
    maxHeapBytes: 400 * 1024 * 1024,
    ...(log === undefined ? {} : { log }),
  };
}

/**
 * `npm run soak`: a few minutes, every kind four times, realistic ~4.4 KB pods, a larger cluster.
 * Backoff starts at the library's 800 ms but is capped at 5 s (reset after 10 s healthy): with the
 * default 30 s cap and 2 min reset, faults a few seconds apart stack the backoff up to the cap and
 * each convergence time would mostly measure the cap. docs/reliability.md states the defaults' bound.
 */
export function longSoak(seed: number, steps: number, log?: (line: string) => void): SoakConfig {
  return {
    seed,
    plan: { steps, stormMs: { min: 1000, max: 3000 }, maxStallMs: 3000, maxSlowWriteMs: 3, maxBurst: 4 },
    pods: 2000,
    namespaces: 20,
    mutationsPerSecond: 200,
    managedFields: true,
    watchTimeoutSeconds: 2,
    bookmarkIntervalMs: 500,
    backoff: { initialMs: 800, maxMs: 5000, resetAfterMs: 10_000 },
    pageSize: 500,
    maxFireWaitMs: 15_000,
    convergenceTimeoutMs: 60_000,
    syncTimeoutMs: 30_000,
    maxHeapBytes: 1024 * 1024 * 1024,
    ...(log === undefined ? {} : { log }),
  };
}
