/**
 * What a crowd of informers asks of an API server that answers every request with 500, per retry
 * policy, side by side:
 * - rx-informer now: each wait drawn from [d, 2d), d = 800 ms doubling to a 30 s cap, reset after
 *   2 min without a failure (`jitter: 'add'`, the default);
 * - rx-informer before: each wait drawn from [0, d) (`jitter: 'full'`);
 * - client-go's reflector, as a model written from apimachinery's `wait.Backoff` (`delay()`:
 *   Duration 800 ms, Factor 2, Jitter 1.0, Steps 38, Cap 30 s, the cap on the base before the
 *   jitter) and `DelayWithReset(clock, 2 min)` (`backoffManager.Step`: the sequence restarts once
 *   2 min have passed since it last restarted, failures or not).
 *
 *   node -r ts-node/register/transpile-only bench/backoffRate.ts            simulation, virtual time
 *   node -r ts-node/register/transpile-only bench/backoffRate.ts real [s]   loopback server answering 500 for s seconds (default 60)
 *
 * The simulation runs `reflect()` itself on a VirtualTimeScheduler, 100 informers per policy over
 * 30 minutes, against a lister-watcher that fails every list at once (paged lists: one request
 * per attempt; a streaming list that fails lists at once, so informers that stream send two). The
 * real run starts 100 `informer()`s per policy against two loopback servers at the same time.
 */
import { Subscription, throwError, VirtualAction, VirtualTimeScheduler } from 'rxjs';
import { informer } from '../lib/informer/informer';
import type { BackoffConfig } from '../lib/reflector/backoff';
import { reflect } from '../lib/reflector/reflect';
import { pods } from '../lib/resources/builtins';
import { StatusError } from '../lib/base/errors';
import type { ListerWatcher } from '../lib/sources/listerWatcher';
import { seededRandom } from '../apiserver/src/churn';
import { startApiServer } from '../apiserver/src';

const INFORMERS = 100;
const MINUTE = 60_000;
const SIMULATED_MS = 30 * MINUTE;

type Policy = { readonly name: string } & ({ readonly kind: 'reflect'; readonly jitter: NonNullable<BackoffConfig['jitter']> } | { readonly kind: 'client-go model' });

const policies: readonly Policy[] = [
  { name: 'rx-informer, [d, 2d) (now)', kind: 'reflect', jitter: 'add' },
  { name: 'rx-informer, [0, d) (before)', kind: 'reflect', jitter: 'full' },
  { name: 'client-go reflector (model)', kind: 'client-go model' },
];

const internalError = (): StatusError => new StatusError({ kind: 'Status', apiVersion: 'v1', code: 500, reason: 'InternalError', message: 'boom' });

/** Request times (ms) of `INFORMERS` reflectors against a server failing every request, in virtual time. */
function reflectorRequests(jitter: NonNullable<BackoffConfig['jitter']>, seed: number): number[][] {
  const scheduler = new VirtualTimeScheduler(VirtualAction, SIMULATED_MS);
  const subscriptions = new Subscription();
  const times: number[][] = [];
  for (let i = 0; i < INFORMERS; i++) {
    const mine: number[] = [];
    times.push(mine);
    const failing: ListerWatcher = {
      list: () => (mine.push(scheduler.now()), throwError(internalError)),
      watch: () => (mine.push(scheduler.now()), throwError(internalError)),
    };
    subscriptions.add(reflect(failing, { scheduler, random: seededRandom(seed * 10_000 + i), backoff: { jitter } }).subscribe());
  }
  scheduler.flush();
  subscriptions.unsubscribe();
  return times;
}

/** The same in a model of client-go's reflector: apimachinery's delay() and backoffManager.Step(). */
function clientGoRequests(seed: number): number[][] {
  const initial = { duration: 800, steps: Math.ceil(30_000 / 800) };
  const cap = 30_000;
  const resetInterval = 2 * MINUTE;
  const times: number[][] = [];
  for (let i = 0; i < INFORMERS; i++) {
    const random = seededRandom(seed * 10_000 + i);
    const mine: number[] = [];
    times.push(mine);
    let backoff = { ...initial };
    let lastStart = 0;
    for (let now = 0; now < SIMULATED_MS; ) {
      mine.push(now); // ListAndWatch: the list fails at once
      if (now - lastStart > resetInterval) {
        backoff = { ...initial };
        lastStart = now;
      }
      const base = backoff.duration;
      if (backoff.steps >= 1) {
        let next = base * 2;
        let steps = backoff.steps - 1;
        if (next > cap) {
          next = cap;
          steps = 0;
        }
        backoff = { duration: next, steps };
      }
      now += base + random() * base; // wait.Jitter(d, 1.0)
    }
  }
  return times;
}

interface Figures {
  readonly first10s: number;
  readonly firstMinute: number;
  readonly first10min: number;
  /** Requests per second, all informers together, from minute 10 to minute 30. */
  readonly steadyPerSecond: number;
  readonly shortestFirstRetryMs: number;
  /** Share of first retries within 100 ms of the first failure. */
  readonly firstRetriesWithin100ms: number;
}

function figures(times: readonly number[][]): Figures {
  const all = times.flat();
  const count = (from: number, to: number): number => all.filter((t) => t >= from && t < to).length;
  const firstRetries = times.map((mine) => (mine[1] ?? Infinity) - (mine[0] ?? 0));
  return {
    first10s: count(0, 10_000),
    firstMinute: count(0, MINUTE),
    first10min: count(0, 10 * MINUTE),
    steadyPerSecond: count(10 * MINUTE, 30 * MINUTE) / (20 * 60),
    shortestFirstRetryMs: Math.min(...firstRetries),
    firstRetriesWithin100ms: firstRetries.filter((gap) => gap < 100).length / firstRetries.length,
  };
}

function simulate(): void {
  const seed = Number(process.env['SEED'] ?? 1);
  const rows = policies.map((policy) => ({
    policy,
    figures: figures(policy.kind === 'reflect' ? reflectorRequests(policy.jitter, seed) : clientGoRequests(seed)),
  }));
  const model = rows.find((row) => row.policy.kind === 'client-go model')!.figures;
  const ratio = (value: number, of: number): string => (of === 0 ? '' : ` (${(value / of).toFixed(2)}×)`);
  process.stdout.write(`${INFORMERS} informers, every request answered 500, ${SIMULATED_MS / MINUTE} min of virtual time (seed ${seed}); ratios to the client-go model\n\n`);
  process.stdout.write('| policy | requests in 10 s | in 1 min | in 10 min | requests/s, min 10-30 | shortest first retry | first retries < 100 ms |\n|---|---|---|---|---|---|---|\n');
  for (const { policy, figures: f } of rows) {
    process.stdout.write(
      `| ${policy.name} | ${f.first10s}${ratio(f.first10s, model.first10s)} | ${f.firstMinute}${ratio(f.firstMinute, model.firstMinute)} | ` +
        `${f.first10min}${ratio(f.first10min, model.first10min)} | ${f.steadyPerSecond.toFixed(2)}${ratio(f.steadyPerSecond, model.steadyPerSecond)} | ` +
        `${f.shortestFirstRetryMs.toFixed(0)} ms | ${(100 * f.firstRetriesWithin100ms).toFixed(0)} % |\n`,
    );
  }
}

/** 100 informers per policy against loopback servers that answer every request 500, at the same time. */
async function real(seconds: number): Promise<void> {
  const jitters = policies.flatMap((policy) => (policy.kind === 'reflect' ? [policy] : []));
  const servers = await Promise.all(jitters.map(() => startApiServer()));
  for (const server of servers) server.faults.inject({ kind: 'status', code: 500, message: 'boom' }, { times: 1e9 });
  const subscriptions = new Subscription();
  jitters.forEach((policy, i) => {
    for (let n = 0; n < INFORMERS; n++) {
      subscriptions.add(informer(servers[i]!.kubeConfig, pods, { name: `pods-${n}`, backoff: { jitter: policy.jitter } }).informer$.subscribe({ error: () => undefined }));
    }
  });
  // Counted from each server's first request: starting 200 informers takes the event loop a while.
  await new Promise((resolve) => setTimeout(resolve, (seconds + 5) * 1000));
  subscriptions.unsubscribe();
  process.stdout.write(`${INFORMERS} informer() per policy (streaming lists on: two requests per attempt), loopback servers answering 500, ${seconds} s from the first request\n\n`);
  process.stdout.write('| policy | requests | in the first 10 s | attempts per informer |\n|---|---|---|---|\n');
  jitters.forEach((policy, i) => {
    const all = servers[i]!.requests.entries.filter((entry) => entry.resource === 'pods');
    const first = Math.min(...all.map((entry) => entry.time));
    const entries = all.filter((entry) => entry.time - first < seconds * 1000);
    const first10s = entries.filter((entry) => entry.time - first < 10_000).length;
    process.stdout.write(`| ${policy.name} | ${entries.length} | ${first10s} | ${(entries.length / INFORMERS / 2).toFixed(1)} |\n`);
  });
  await Promise.all(servers.map((server) => server.close()));
}

const [mode, secondsText] = process.argv.slice(2);
if (mode === 'real') void real(Number(secondsText ?? 60));
else simulate();
