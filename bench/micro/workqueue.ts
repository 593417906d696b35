/**
 * Micro-benchmark of reconcile()'s queue against the plain RxJS peer it replaces,
 * `mergeMap(fn, concurrency)` (no dedup, no one-worker-per-key, no retries), in one process,
 * variants interleaved round by round:
 *
 *   node -r ts-node/register/transpile-only bench/micro/workqueue.ts [keys=100000] [rounds=5]
 *
 * Scenarios, each with 4 workers:
 * - `distinct`: `keys` different keys, a reconcile that returns at once: the queue's own cost
 *   per key (bookkeeping, events), where dedup cannot help.
 * - `hot`: `keys` arrivals over 1 000 keys, a reconcile that resolves a Promise: what dedup saves
 *   when changes come faster than reconciles.
 *
 * Prints µs per arriving key for each variant and round, then the ranges and the ratio.
 */
import { from, lastValueFrom, mergeMap, of, type Observable } from 'rxjs';
import { reconcile } from '../../lib/workqueue/reconcile';

const [keysText = '100000', roundsText = '5'] = process.argv.slice(2);
const keyCount = Number(keysText);
const rounds = Number(roundsText);
const CONCURRENCY = 4;

type Variant = 'reconcile' | 'mergeMap';
type Scenario = 'distinct' | 'hot';

function keysOf(scenario: Scenario): string[] {
  return Array.from({ length: keyCount }, (_, i) => (scenario === 'distinct' ? `ns/pod-${i}` : `ns/pod-${i % 1000}`));
}

/** Runs one variant over the keys; resolves with µs per key and the number of reconciles made. */
async function run(variant: Variant, scenario: Scenario): Promise<{ readonly usPerKey: number; readonly calls: number }> {
  const keys = keysOf(scenario);
  let calls = 0;
  const work = scenario === 'distinct' ? () => (calls++, undefined) : () => (calls++, Promise.resolve(undefined));
  const source = from(keys);
  const t0 = performance.now();
  if (variant === 'reconcile') {
    await lastValueFrom(source.pipe(reconcile(work, { concurrency: CONCURRENCY })), { defaultValue: undefined });
  } else {
    const each = (): Observable<undefined> => {
      const output = work();
      return output === undefined ? of(undefined) : from(output);
    };
    await lastValueFrom(source.pipe(mergeMap(each, CONCURRENCY)), { defaultValue: undefined });
  }
  const elapsed = performance.now() - t0;
  return { usPerKey: (elapsed * 1000) / keyCount, calls };
}

async function main(): Promise<void> {
  const results = new Map<string, number[]>();
  const calls = new Map<string, number>();
  // One warm-up round, not reported.
  for (const scenario of ['distinct', 'hot'] as const) for (const variant of ['reconcile', 'mergeMap'] as const) await run(variant, scenario);
  for (let round = 0; round < rounds; round++) {
    for (const scenario of ['distinct', 'hot'] as const) {
      for (const variant of ['reconcile', 'mergeMap'] as const) {
        const result = await run(variant, scenario);
        const name = `${scenario} ${variant}`;
        results.set(name, [...(results.get(name) ?? []), result.usPerKey]);
        calls.set(name, result.calls);
        console.log(`round ${round + 1} ${name}: ${result.usPerKey.toFixed(3)} µs/key, ${result.calls} reconciles`);
      }
    }
  }
  const range = (values: readonly number[]): string => `${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)}`;
  const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  for (const scenario of ['distinct', 'hot'] as const) {
    const ours = results.get(`${scenario} reconcile`)!;
    const peer = results.get(`${scenario} mergeMap`)!;
    console.log(
      `${scenario}: reconcile ${range(ours)} µs/key (${calls.get(`${scenario} reconcile`)} reconciles), mergeMap ${range(peer)} µs/key (${calls.get(`${scenario} mergeMap`)}); median ratio ${(median(ours) / median(peer)).toPrecision(2)}`,
    );
  }
}

void main();
