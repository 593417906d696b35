/**
 * Micro-benchmark of an initial sync without HTTP: list pages rendered in memory as JSON text
 * (500 pods a page), each JSON.parse'd in its own macrotask as a socket would deliver it, then
 * either kept in one Map (a2) or fed through rx-informer's reflector, indexer and one handle()
 * subscription (b; b-cache: the snapshots alone). One variant per process:
 *
 *   node -r ts-node/register/transpile-only bench/micro/sync.ts <a2|b|b-cache> 100000
 *
 * `... sync.ts b-relist 100000` times a relist instead (in memory): after the sync the watch fails
 * with 410 Expired and the same pages are listed again (objects unchanged, as after most 410s);
 * it reports the relist's time, longest stall and peak heap.
 *
 * With a kubeconfig as third argument the same runs over HTTP against that server (start one with
 * `bench/micro/serve.ts 100000 /tmp/kc.yaml`, which pages the first list, or with `… 1.33`, which
 * answers it whole as a real API server does; `rx-informer-apiserver` always does): a2 reads pages
 * as the floor client does, b uses `informer()` (with `pageSize` from PAGE_SIZE, default 500,
 * `listReadAhead: false` when READ_AHEAD=0, `shareUnchanged: false` when SHARE_UNCHANGED=0, and a streaming list, its default, unless
 * STREAMING_LIST=0). PAGE_SIZE=0 asks for the whole list in one response, as the API server's
 * watch cache answers the first list anyway; AFTER_CHARS and BATCH_CHARS set list$'s
 * incremental decoding (its threshold and batch size), COMPRESSION=0 turns gzip off.
 *
 * Prints the time to synced, CPU time, the longest event-loop stall (also in CPU time: the main
 * thread's CPU time between the two ticks around it, which other processes on the cores do not
 * inflate) and GC pauses. Add --cpu-prof or --trace-gc before -r to attribute them; SYNC_STALLS=1
 * prints every stall over 40 ms (wall or main-thread CPU) with its CPU time and the process and monotonic times at its end (the process time is --trace-gc's clock, give or take the isolate's start-up), to find its window in the CPU
 * profile.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { Observable } from 'rxjs';
import { informer as createInformer, informerFrom, type Informer } from '../../lib/informer/informer';
import { pods, type Pod } from '../../lib/resources/builtins';
import type { ListerWatcher, ListPage, WatchEvent } from '../../lib/sources/listerWatcher';
import { StatusError } from '../../lib/base/errors';
import { labelIndex, namespaceIndex, NAMESPACE_INDEX, type IndexFunc } from '../../lib/store/indexers';
import { makePod, seededRandom } from '../../apiserver/src/churn';
import { getText } from '../clients/floor';
import { observeGcPauses } from './gcPauses';

const [variant = 'b', cachedText = '100000', kubeconfigPath] = process.argv.slice(2);
const cached = Number(cachedText);
/** Items per in-memory page (PAGE_ITEMS=…): what a page costs the informer beyond its items. */
const PAGE = Number(process.env['PAGE_ITEMS'] ?? 500);
/** Over HTTP, the informer's `pageSize` (PAGE_SIZE=250 …): the page size decides the parse part of the longest stall. */
const HTTP_PAGE_SIZE = Number(process.env['PAGE_SIZE'] ?? 500);

const random = seededRandom(7);
const pages: string[] = [];
for (let start = 0; kubeconfigPath === undefined && start < cached; start += PAGE) {
  const items: Pod[] = [];
  for (let i = start; i < Math.min(cached, start + PAGE); i++) {
    const pod = makePod(random, `ns-${i % 10}`, `pod-${i}`);
    items.push({ ...pod, metadata: { ...pod.metadata, uid: `uid-${i}`, resourceVersion: String(i + 1) } });
  }
  pages.push(JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: String(cached) }, items }));
}

/** Parses one page per macrotask, as the list source does when a page's body has arrived. */
function feedPages(emit: (page: ListPage<Pod>) => void, done: () => void): () => void {
  let next = 0;
  let handle: NodeJS.Immediate | undefined;
  const turn = (): void => {
    const parsed = JSON.parse(pages[next]!) as { items: Pod[] };
    next++;
    emit({ items: parsed.items, resourceVersion: String(cached), last: next === pages.length, remainingItemCount: undefined, itemsSoFar: next * PAGE });
    if (next < pages.length) handle = setImmediate(turn);
    else done();
  };
  handle = setImmediate(turn);
  return () => clearImmediate(handle);
}

const gc = observeGcPauses();

let maxStall = 0;
let maxStallCpu = 0;
let lastTick = performance.now();
let lastCpu = process.threadCpuUsage();
const ticker = setInterval(() => {
  const now = performance.now();
  const stall = now - lastTick - 5;
  const cpuNow = process.threadCpuUsage();
  const stallCpu = (cpuNow.user + cpuNow.system - lastCpu.user - lastCpu.system) / 1000;
  maxStallCpu = Math.max(maxStallCpu, stallCpu);
  lastCpu = cpuNow;
  // The monotonic clock in µs is the one of --cpu-prof's timestamps: the stall is the profile's window [mono - stall, mono].
  if ((stall > 40 || stallCpu > 40) && process.env['SYNC_STALLS'] === '1') {
    process.stderr.write(`stall ${stall.toFixed(0)} ms (cpu ${stallCpu.toFixed(0)}) at ${(now - started).toFixed(0)} ms (process ${now.toFixed(0)} ms, monotonic ${process.hrtime.bigint() / 1000n} µs)\n`);
  }
  maxStall = Math.max(maxStall, stall);
  if (variant === 'b-relist') peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
  lastTick = now;
}, 5);

const started = performance.now();
const cpu = process.cpuUsage();

function report(): void {
  if (variant === 'b-relist') {
    clearInterval(ticker);
    process.stdout.write(`b relist of ${cached}: ${(performance.now() - relistStarted).toFixed(0)} ms, longest stall ${maxStall.toFixed(0)} ms, peak heap ${(peakHeap / 2 ** 20).toFixed(0)} MiB, rss ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB\n`);
    return;
  }
  const wall = performance.now() - started;
  const used = process.cpuUsage(cpu);
  clearInterval(ticker);
  process.stdout.write(
    `${variant} sync of ${cached}: ${wall.toFixed(0)} ms, cpu ${((used.user + used.system) / 1000).toFixed(0)} ms, longest stall ${maxStall.toFixed(0)} ms (cpu ${maxStallCpu.toFixed(0)}), ` +
      `gc ${gc.totalMs.toFixed(0)} ms in ${gc.count} pauses (longest ${gc.longestMs.toFixed(0)} ms), rss ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB\n`,
  );
}

/** The floor client's list: pages of 500 over HTTP, each parsed and kept in one Map. */
async function runMapOverHttp(kubeConfig: KubeConfig): Promise<void> {
  const server = kubeConfig.getCurrentCluster()!.server;
  const map = new Map<string, Pod>();
  let continueToken: string | undefined;
  do {
    const query = new URLSearchParams({ limit: String(PAGE), ...(continueToken === undefined ? { resourceVersion: '0' } : { continue: continueToken }) });
    const page = JSON.parse(await getText(`${server}/api/v1/pods?${query}`)) as { metadata: { continue?: string }; items: Pod[] };
    for (const pod of page.items) map.set(`${pod.metadata.namespace}/${pod.metadata.name}`, pod);
    continueToken = page.metadata.continue || undefined;
  } while (continueToken !== undefined);
  if (map.size !== cached) throw new Error(`listed ${map.size}, expected ${cached}`);
}

function runMap(): Promise<void> {
  const map = new Map<string, Pod>();
  return new Promise((resolve) =>
    feedPages(
      (page) => {
        for (const pod of page.items) map.set(`${pod.metadata.namespace}/${pod.metadata.name}`, pod);
      },
      resolve,
    ),
  );
}

let peakHeap = 0;
let relistStarted = 0;

/** Syncs, fails the watch with 410, and resolves when the relisted snapshot arrives. */
function runRelist(): Promise<void> {
  let watches = 0;
  const listerWatcher: ListerWatcher<Pod> = {
    list: () => new Observable<ListPage<Pod>>((subscriber) => feedPages((page) => subscriber.next(page), () => subscriber.complete())),
    watch: () =>
      new Observable<WatchEvent<Pod>>((subscriber) => {
        if (watches++ > 0) return;
        const timer = setTimeout(() => {
          maxStall = 0;
          peakHeap = 0;
          relistStarted = performance.now();
          subscriber.error(new StatusError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Expired', code: 410, message: 'too old resource version' }));
        }, 100);
        return () => clearTimeout(timer);
      }),
  };
  const informer = informerFrom(listerWatcher, { indexers: { [NAMESPACE_INDEX]: namespaceIndex, app: labelIndex('app') }, backoff: { initialMs: 1, maxMs: 1 } });
  return new Promise((resolve) => {
    let snapshots = 0;
    informer.informer$.subscribe((snapshot) => {
      if (snapshot.synced && ++snapshots === 2) resolve();
    });
  });
}

function runInformer(kubeConfig: KubeConfig | undefined): Promise<void> {
  const listerWatcher: ListerWatcher<Pod> = {
    list: () => new Observable<ListPage<Pod>>((subscriber) => feedPages((page) => subscriber.next(page), () => subscriber.complete())),
    watch: () => new Observable<WatchEvent<Pod>>(() => undefined),
  };
  const indexers = { [NAMESPACE_INDEX]: namespaceIndex, app: labelIndex('app') };
  const informer = kubeConfig === undefined ? informerFrom(listerWatcher, { indexers }) : httpInformer(kubeConfig, indexers);
  return new Promise((resolve) => {
    if (variant === 'b-cache') {
      informer.informer$.subscribe((snapshot) => snapshot.synced && resolve());
    } else {
      informer.handle({ onAdd: () => undefined }).subscribe((event) => event.type === 'synced' && resolve());
    }
  });
}

/** informer() over HTTP, with the client settings of the environment (PAGE_SIZE, READ_AHEAD, STREAMING_LIST, COMPRESSION, AFTER_CHARS, BATCH_CHARS). */
function httpInformer(kubeConfig: KubeConfig, indexers: Readonly<Record<string, IndexFunc<Pod>>>): Informer<Pod> {
  const afterChars = process.env['AFTER_CHARS'];
  const batchChars = process.env['BATCH_CHARS'];
  return createInformer(kubeConfig, pods, {
    indexers,
    pageSize: HTTP_PAGE_SIZE,
    shareUnchanged: process.env['SHARE_UNCHANGED'] !== '0',
    listReadAhead: process.env['READ_AHEAD'] !== '0',
    streamingList: process.env['STREAMING_LIST'] !== '0',
    compression: process.env['COMPRESSION'] !== '0',
    incrementalDecoding: { ...(afterChars === undefined ? {} : { afterChars: Number(afterChars) }), ...(batchChars === undefined ? {} : { batchChars: Number(batchChars) }) },
  });
}

function run(): Promise<void> {
  if (kubeconfigPath === undefined) return variant === 'a2' ? runMap() : variant === 'b-relist' ? runRelist() : runInformer(undefined);
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  return variant === 'a2' ? runMapOverHttp(kubeConfig) : runInformer(kubeConfig);
}

run().then(
  () => {
    report();
    process.exit(0);
  },
  (error: unknown) => {
    process.stderr.write(`${String(error)}\n`);
    process.exit(1);
  },
);
