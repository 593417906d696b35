/**
 * How long a turn scheduled "now" waits before it runs, per scheduler: what `handle()` pays per
 * delivery turn (it schedules each turn on its scheduler, `asyncScheduler` by default).
 *
 *   node -r ts-node/register/transpile-only bench/micro/schedulerDelay.ts
 */
import { asapScheduler, asyncScheduler, type SchedulerLike } from 'rxjs';
import { percentileOfSorted } from '../stats';

const ROUNDS = 2_000;

async function measure(name: string, schedule: (run: () => void) => void): Promise<void> {
  const delays: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    await new Promise<void>((resolve) => {
      const queued = performance.now();
      schedule(() => {
        delays.push(performance.now() - queued);
        resolve();
      });
    });
  }
  delays.sort((a, b) => a - b);
  process.stdout.write(`${name.padEnd(28)} p50 ${percentileOfSorted(delays, 50)!.toFixed(3)} ms  p99 ${percentileOfSorted(delays, 99)!.toFixed(3)} ms\n`);
}

const viaScheduler = (scheduler: SchedulerLike) => (run: () => void) => void scheduler.schedule(run);

async function main(): Promise<void> {
  await measure('asyncScheduler.schedule()', viaScheduler(asyncScheduler));
  await measure('asapScheduler.schedule()', viaScheduler(asapScheduler));
  await measure('setImmediate', (run) => setImmediate(run));
}

void main();
