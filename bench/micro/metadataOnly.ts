/**
 * Heap per cached pod and sync time, metadata-only informers against whole-object ones, over HTTP
 * against the loopback API server (in this process) with N generated pods (`makePod`: labels,
 * ownerReferences, managedFields, ~4.4 KB of JSON each). Each run is a fresh client process, the
 * variants interleaved round by round so that the machine's load hits them alike:
 *
 *   node -r ts-node/register/transpile-only bench/micro/metadataOnly.ts [pods=100000] [rounds=3] [variants=full,full-lean,metadata,metadata-items]
 *
 * Variants:
 * - `full`: `informer(kc, pods)`, whole objects as served (managedFields included).
 * - `full-lean`: the same with `transform: dropManagedFields`, what client-go users do.
 * - `metadata`: `informer(kc, pods, { metadataOnly: true })`.
 * - `metadata-items`: the metadata-only lists alone, their items kept in one array: what the
 *   objects themselves cost, without the cache's trie, index and snapshot.
 *
 * A client forces two full GCs before it starts and after it has synced (it runs with
 * `--expose-gc`), and reports (heap used after − before) / N: what the cache retains per pod.
 * Round 0 warms the server (it serializes each pod once per form) and is not reported.
 */
import { fork } from 'node:child_process';
import { lastValueFrom, reduce } from 'rxjs';
import { informer, type Informer } from '../../lib/informer/informer';
import { metadataListerWatcher } from '../../lib/sources/metadataListerWatcher';
import { pods, type Pod } from '../../lib/resources/builtins';
import { dropManagedFields } from '../../lib/store/transforms';
import { makePod, seededRandom } from '../../apiserver/src/churn';
import { startApiServer } from '../../apiserver/src/server';
import { waitForSync } from '../../lib/informer/waitForSync';
import { loopbackKubeConfig } from '../clients/kubeConfig';

type Variant = 'full' | 'full-lean' | 'metadata' | 'metadata-items';

interface Report {
  readonly variant: Variant;
  readonly syncMs: number;
  readonly heapPerPod: number;
  readonly objects: number;
}

const gc = (): void => {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (collect === undefined) throw new Error('run the client with --expose-gc');
  collect();
  collect();
};

async function client(variant: Variant, url: string): Promise<void> {
  const kubeConfig = loopbackKubeConfig(url);
  gc();
  const before = process.memoryUsage().heapUsed;
  const started = performance.now();
  let keep: unknown;
  let objects: number;
  if (variant === 'metadata-items') {
    const items = await lastValueFrom(
      metadataListerWatcher(kubeConfig, pods)
        .list({ resourceVersion: '0', limit: 500 })
        .pipe(reduce((all: unknown[], page) => (all.push(...page.items), all), [])),
    );
    keep = items;
    objects = items.length;
  } else {
    const subject: Informer =
      variant === 'metadata'
        ? informer(kubeConfig, pods, { metadataOnly: true })
        : informer(kubeConfig, pods, variant === 'full-lean' ? { transform: dropManagedFields } : {});
    keep = subject.informer$.subscribe();
    const [snapshot] = await waitForSync([subject], { timeout: 600_000 });
    objects = snapshot.size;
  }
  const syncMs = performance.now() - started;
  gc();
  const heapPerPod = (process.memoryUsage().heapUsed - before) / objects;
  process.send!({ variant, syncMs, heapPerPod, objects } satisfies Report);
  if (keep === undefined) throw new Error('unreachable: keeps the cache alive until measured');
  process.exit(0);
}

function runClient(variant: Variant, url: string): Promise<Report> {
  const child = fork(__filename, ['--client', variant, url], { execArgv: ['--expose-gc', '-r', 'ts-node/register/transpile-only'] });
  return new Promise((resolve, reject) => {
    child.on('message', (report: Report) => resolve(report));
    child.on('exit', (code) => (code === 0 ? undefined : reject(new Error(`${variant} client exited with ${code}`))));
  });
}

function range(values: readonly number[], digits: number): string {
  const sorted = [...values].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  return `${median.toFixed(digits)} [${sorted[0]!.toFixed(digits)}–${sorted[sorted.length - 1]!.toFixed(digits)}]`;
}

async function main(): Promise<void> {
  const [countText = '100000', roundsText = '3', variantsText = 'full,full-lean,metadata,metadata-items'] = process.argv.slice(2);
  const count = Number(countText);
  const rounds = Number(roundsText);
  const variants = variantsText.split(',') as Variant[];
  const server = await startApiServer({ bookmarkIntervalMs: 0 });
  const random = seededRandom(11);
  for (let i = 0; i < count; i++) server.store.create<Pod>(pods, makePod(random, `ns-${i % 50}`, `pod-${i}`));
  console.log(`${count} pods of ~${Buffer.byteLength(JSON.stringify(server.store.get(pods, 'ns-0', 'pod-0')))} B JSON; ${rounds} rounds after a warm-up`);
  const results = new Map<Variant, Report[]>(variants.map((variant) => [variant, []]));
  for (let round = 0; round <= rounds; round++) {
    for (const variant of variants) {
      const report = await runClient(variant, server.url);
      if (report.objects !== count) throw new Error(`${variant} cached ${report.objects} of ${count}`);
      if (round > 0) results.get(variant)!.push(report);
      console.log(`round ${round}${round === 0 ? ' (warm-up)' : ''} ${variant}: sync ${report.syncMs.toFixed(0)} ms, ${report.heapPerPod.toFixed(0)} B heap per pod`);
    }
  }
  console.log('\nvariant          sync ms (median [min–max])   heap B per pod (median [min–max])');
  for (const [variant, reports] of results) {
    console.log(`${variant.padEnd(16)} ${range(reports.map((r) => r.syncMs), 0).padEnd(28)} ${range(reports.map((r) => r.heapPerPod), 0)}`);
  }
  await server.close();
}

if (process.argv[2] === '--client') void client(process.argv[3] as Variant, process.argv[4]!);
else void main();
