/**
 * The memory a stuck handler holds: a cache of `cached` pods, every one of them updated once
 * while one `handle()` subscription, past its initial list, is stuck on its first update (a
 * Promise that never settles).
 * One variant per process, each with a clean heap:
 *
 *   node --expose-gc -r ts-node/register/transpile-only bench/micro/laggingHandler.ts <none|stuck> [cached=100000] [maxPending=1000]
 *
 * `none` is the cache alone; `stuck` adds the stuck handler with the given `maxPending` (pass a
 * large one to see what an unbounded queue holds). Prints the heap in use after full GCs once the
 * cache has applied every update, and what the handler reported; the handler's share is the
 * difference between the two variants.
 */
import { Observable, of } from 'rxjs';
import { informerFrom } from '../../lib/informer/informer';
import type { Pod } from '../../lib/resources/builtins';
import type { ListerWatcher, ListPage, WatchEvent } from '../../lib/sources/listerWatcher';
import { makePod, seededRandom } from '../../apiserver/src/churn';

const [variant = 'stuck', cachedText = '100000', maxPendingText = '1000'] = process.argv.slice(2);
const cached = Number(cachedText);
const maxPending = Number(maxPendingText);
const collect = (globalThis as { gc?: () => void }).gc;
if (collect === undefined) throw new Error('run with --expose-gc');

const random = seededRandom(7);
const templates: string[][] = [];
const items: Pod[] = [];
for (let i = 0; i < cached; i++) {
  const made = makePod(random, `ns-${i % 10}`, `pod-${i}`);
  const pod: Pod = { ...made, metadata: { ...made.metadata, uid: `uid-${i}`, resourceVersion: String(i + 1), annotations: { seq: '0' } } };
  const text = JSON.stringify(pod);
  templates.push(text.split(/"resourceVersion":"\d+"|"seq":"0"/));
  items.push(JSON.parse(text) as Pod);
}
/** Handed to the informer once and then dropped, so that only the cache and the handler hold listed pods. */
let listPage: ListPage<Pod> | undefined = { items: items.splice(0), resourceVersion: String(cached), last: true, remainingItemCount: undefined };
/** The update of pod `i`: a new resourceVersion and sequence annotation, the rest as listed. */
const updated = (i: number): Pod => {
  const parts = templates[i]!;
  return JSON.parse(`${parts[0]}"resourceVersion":"${cached + i + 1}"${parts[1]}"seq":"${i + 1}"${parts[2]}`) as Pod;
};

function heapMiB(): number {
  for (let i = 0; i < 4; i++) collect!();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

async function main(): Promise<void> {
  let startWatch: (() => void) | undefined;
  const listerWatcher: ListerWatcher<Pod> = {
    list: () => {
      const page = listPage!;
      listPage = undefined;
      return of(page);
    },
    watch: () =>
      new Observable<WatchEvent<Pod>>((subscriber) => {
        startWatch = () => {
          let next = 0;
          const turn = (): void => {
            for (let n = 0; n < 64 && next < cached; n++) subscriber.next({ type: 'MODIFIED', object: updated(next++) });
            if (next < cached) setImmediate(turn);
          };
          turn();
        };
      }),
  };
  const informer = informerFrom(listerWatcher, {});
  let applied: () => void = () => undefined;
  const allApplied = new Promise<void>((resolve) => (applied = resolve));
  informer.informer$.subscribe((snapshot) => {
    for (const change of snapshot.changes) if (change.object.metadata.annotations?.['seq'] === String(cached)) applied();
  });
  const reported = new Map<string, number>();
  let updates = 0;
  if (variant === 'stuck') {
    informer
      .handle({ onUpdate: () => (++updates === 1 ? new Promise<never>(() => undefined) : undefined) }, { maxPending })
      .subscribe((event) => {
        const name = event.type === 'error' ? String((event.error as Error).name) : event.type;
        reported.set(name, (reported.get(name) ?? 0) + 1);
      });
  }
  await new Promise((resolve) => setImmediate(resolve));
  while (startWatch === undefined) await new Promise((resolve) => setImmediate(resolve));
  const before = heapMiB();
  startWatch();
  await allApplied;
  await new Promise((resolve) => setImmediate(resolve));
  const after = heapMiB();
  process.stdout.write(
    `${variant} cached=${cached} maxPending=${variant === 'stuck' ? maxPending : '-'}: heap ${before.toFixed(1)} MiB synced, ${after.toFixed(1)} MiB after ${cached} updates; update calls ${updates}, events ${JSON.stringify(Object.fromEntries(reported))}\n`,
  );
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${String(error)}\n`);
    process.exit(1);
  },
);
