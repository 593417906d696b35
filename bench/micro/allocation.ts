/**
 * Bytes allocated per call, counted as the growth of the heap in a window with no garbage
 * collection: the process runs with a young generation large enough that a window never fills it.
 */
import { spawnSync } from 'node:child_process';

/** Young generation for the window, MiB. */
const SEMI_SPACE_MIB = 128;
const FLAGS = ['--expose-gc', `--max-semi-space-size=${SEMI_SPACE_MIB}`, `--min-semi-space-size=${SEMI_SPACE_MIB}`];

/**
 * Re-runs this process with the flags the window needs when any is missing, and exits with the
 * child's status; returns when they are all there. Call it first thing.
 */
export function ensureAllocationWindow(): void {
  if (FLAGS.every((flag) => process.execArgv.includes(flag))) return;
  const child = spawnSync(process.execPath, [...FLAGS, ...process.execArgv, process.argv[1]!, ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(child.status ?? 1);
}

/** The median over `rounds` windows of the bytes allocated per `call(i)`, for i from 0 to `calls` - 1. */
export function bytesPerCall(call: (i: number) => void, calls: number, rounds = 5): number {
  const samples: number[] = [];
  for (let r = 0; r < rounds; r++) {
    global.gc!();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < calls; i++) call(i);
    const allocated = process.memoryUsage().heapUsed - before;
    // A scavenge inside the window would show as a smaller, even negative, figure: say so rather than report it.
    if (allocated <= 0) throw new Error('a garbage collection ran inside the allocation window; make the window shorter');
    samples.push(allocated / calls);
  }
  return samples.sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;
}
