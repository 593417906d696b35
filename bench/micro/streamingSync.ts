/**
 * Micro-benchmark of an initial sync by streaming list against one by paged list, without HTTP:
 * the same pods (as `sync.ts` makes them), rendered as JSON text, fed to `informerFrom()` the way
 * the sources deliver them: watch lines parsed 15 to a macrotask (a 64 KiB socket chunk holds
 * about 15 pods of 4.4 KB), then the initial-events-end bookmark; or list pages of 500 parsed one
 * to a macrotask. One variant per process:
 *
 *   node -r ts-node/register/transpile-only bench/micro/streamingSync.ts <stream|paged> 100000
 *
 * Prints the time to the first synced snapshot, the main thread's CPU time in the longest
 * macrotask that fed the informer (the work a chunk or page triggers, which blocks the event loop;
 * CPU time, so it does not count the time a busy machine keeps the process off a core) and its
 * wall time, the longest event-loop stall as seen by a 5 ms ticker (wall clock), and the peak RSS.
 */
import { Observable } from 'rxjs';
import { informerFrom } from '../../lib/informer/informer';
import type { Pod } from '../../lib/resources/builtins';
import type { ListerWatcher, ListPage, WatchEvent } from '../../lib/sources/listerWatcher';
import { labelIndex, namespaceIndex, NAMESPACE_INDEX } from '../../lib/store/indexers';
import { makePod, seededRandom } from '../../apiserver/src/churn';

const [variant = 'stream', countText = '100000'] = process.argv.slice(2);
const count = Number(countText);
const PAGE = 500;
const EVENTS_PER_CHUNK = 15;

const random = seededRandom(7);
const objects: string[] = [];
for (let i = 0; i < count; i++) {
  const pod = makePod(random, `ns-${i % 10}`, `pod-${i}`);
  objects.push(JSON.stringify({ ...pod, metadata: { ...pod.metadata, uid: `uid-${i}`, resourceVersion: String(i + 1) } }));
}
const listVersion = String(count);
const lines = objects.map((object) => `{"type":"ADDED","object":${object}}`);
lines.push(JSON.stringify({ type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: listVersion, annotations: { 'k8s.io/initial-events-end': 'true' } } } }));
const pages: string[] = [];
for (let start = 0; start < count; start += PAGE) {
  pages.push(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"${listVersion}"},"items":[${objects.slice(start, start + PAGE).join(',')}]}`);
}
objects.length = 0;

/** The main thread's CPU time (Node 22.19+), else the process's (which counts GC helper threads too). */
const cpuUsage = (previous?: NodeJS.CpuUsage): NodeJS.CpuUsage => (process.threadCpuUsage === undefined ? process.cpuUsage(previous) : process.threadCpuUsage(previous));

let longestTurnCpuMs = 0;
let longestTurnWallMs = 0;
/** Runs `work` as one macrotask and records its CPU and wall time. */
function turn(work: () => void): void {
  const before = cpuUsage();
  const wallBefore = performance.now();
  work();
  const used = cpuUsage(before);
  longestTurnCpuMs = Math.max(longestTurnCpuMs, (used.user + used.system) / 1000);
  longestTurnWallMs = Math.max(longestTurnWallMs, performance.now() - wallBefore);
}

/** Emits `total` units, `perTurn` to a macrotask, then completes (or not, for a watch). */
function feed<T>(total: number, perTurn: number, unit: (index: number) => T, emit: (value: T) => void, done?: () => void): () => void {
  let next = 0;
  let handle: NodeJS.Immediate | undefined;
  const step = (): void => {
    turn(() => {
      for (let end = Math.min(total, next + perTurn); next < end; next++) emit(unit(next));
    });
    if (next < total) handle = setImmediate(step);
    else done?.();
  };
  handle = setImmediate(step);
  return () => clearImmediate(handle);
}

const listerWatcher: ListerWatcher<Pod> = {
  supportsStreamingList: true,
  list: () =>
    new Observable<ListPage<Pod>>((subscriber) =>
      feed(
        pages.length,
        1,
        (index) => ({ items: (JSON.parse(pages[index]!) as { items: Pod[] }).items, resourceVersion: listVersion, last: index === pages.length - 1, remainingItemCount: undefined }),
        (page) => subscriber.next(page),
        () => subscriber.complete(),
      ),
    ),
  watch: (options) =>
    new Observable<WatchEvent<Pod>>((subscriber) =>
      options.sendInitialEvents === true ? feed(lines.length, EVENTS_PER_CHUNK, (index) => JSON.parse(lines[index]!) as WatchEvent<Pod>, (event) => subscriber.next(event)) : undefined,
    ),
};

let maxStall = 0;
let lastTick = performance.now();
const ticker = setInterval(() => {
  const now = performance.now();
  maxStall = Math.max(maxStall, now - lastTick - 5);
  lastTick = now;
}, 5);

const started = performance.now();
const indexers = { [NAMESPACE_INDEX]: namespaceIndex, app: labelIndex('app') };
const informer = informerFrom(listerWatcher, { indexers, streamingList: variant === 'stream' });
let synced = false;
const subscription = informer.informer$.subscribe((snapshot) => {
  if (!snapshot.synced || synced) return;
  synced = true;
  const wall = performance.now() - started;
  if (snapshot.size !== count) throw new Error(`synced ${snapshot.size}, expected ${count}`);
  // Reported from the next macrotask, once the turn that synced has been measured.
  setImmediate(() => {
    clearInterval(ticker);
    process.stdout.write(
      `${variant} sync of ${count}: ${wall.toFixed(0)} ms, longest turn ${longestTurnCpuMs.toFixed(0)} ms main-thread cpu (${longestTurnWallMs.toFixed(0)} ms wall), ` +
        `longest stall ${maxStall.toFixed(0)} ms wall, rss ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB\n`,
    );
    subscription.unsubscribe();
    process.exit(0);
  });
});
