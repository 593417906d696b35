/**
 * Where the heap of a cache goes, object by object: N pods (~4.4 KB, managedFields included)
 * parsed from JSON and kept either in one Map (a2, keyed `namespace/name` as the floor client
 * keys them) or in rx-informer (b: `informerFrom` with the benchmark's namespace and `app` label
 * indexes and one `handle()` subscription, synced from one in-memory page). One variant per
 * process; each measures its heap growth after two full GCs, then writes a heap snapshot and
 * sums its self sizes by kind and constructor:
 *
 *   node --expose-gc -r ts-node/register/transpile-only bench/micro/heapBreakdown.ts <a2|b> <out.json> [pods=10000] [transform]
 *   node -r ts-node/register/transpile-only bench/micro/heapBreakdown.ts compare <a2.json> <b.json>
 *
 * `transform` drops managedFields on the way in (`dropManagedFields` for b, the same rest-spread
 * for a2), the benchmark's "with the managedFields transform" row. `compare` prints the bytes per
 * pod that differ, largest first: which structures make up the difference the benchmark measures.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getHeapStatistics, writeHeapSnapshot } from 'node:v8';
import { NEVER, of } from 'rxjs';
import { informerFrom } from '../../lib/informer/informer';
import type { Pod } from '../../lib/resources/builtins';
import type { ListerWatcher, ListPage } from '../../lib/sources/listerWatcher';
import { labelIndex, namespaceIndex, NAMESPACE_INDEX } from '../../lib/store/indexers';
import { dropManagedFields } from '../../lib/store/transforms';
import { makePod, seededRandom } from '../../apiserver/src/churn';

/** Bytes and count of one kind of heap object (`type name`, as the snapshot names them). */
type Breakdown = Record<string, { bytes: number; count: number }>;

interface Measured {
  readonly variant: string;
  readonly pods: number;
  readonly bytesPerPod: number;
  readonly breakdown: Breakdown;
}

/** Sums a heap snapshot's self sizes by node type and name (strings by type alone). */
function breakdownOf(snapshotPath: string): Breakdown {
  interface Snapshot {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  }
  const snapshot = JSON.parse(readFileSync(snapshotPath, 'utf8')) as Snapshot;
  const fields = snapshot.snapshot.meta.node_fields;
  const types = snapshot.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const totals: Breakdown = {};
  for (let i = 0; i < snapshot.nodes.length; i += width) {
    const type = types[snapshot.nodes[i + typeAt]!]!;
    // A string's name is its text: group strings by kind only. Code names are long and varied.
    const name = type.includes('string') ? '' : snapshot.strings[snapshot.nodes[i + nameAt]!]!.slice(0, type === 'code' ? 24 : 48);
    const key = `${type} ${name}`.trim();
    const entry = (totals[key] ??= { bytes: 0, count: 0 });
    entry.bytes += snapshot.nodes[i + sizeAt]!;
    entry.count++;
  }
  return totals;
}

async function measure(variant: string, out: string, pods: number, transform: boolean): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with --expose-gc');
  const random = seededRandom(7);
  const texts: string[] = [];
  for (let i = 0; i < pods; i++) texts.push(JSON.stringify(makePod(random, `ns-${i % 10}`, `pod-${i}`)));
  const kept: unknown[] = [];
  gc();
  gc();
  const before = getHeapStatistics().used_heap_size;
  if (variant === 'a2') {
    const map = new Map<string, Pod>();
    const cacheable = (pod: Pod): Pod => {
      const { managedFields: _dropped, ...metadata } = pod.metadata;
      return { ...pod, metadata };
    };
    for (const text of texts) {
      const pod = JSON.parse(text) as Pod;
      map.set(`${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`, transform ? cacheable(pod) : pod);
    }
    kept.push(map);
  } else if (variant === 'b') {
    const items = texts.map((text) => JSON.parse(text) as Pod);
    const page: ListPage<Pod> = { items, resourceVersion: '1', last: true, remainingItemCount: undefined };
    const listerWatcher: ListerWatcher<Pod> = { list: () => of(page), watch: () => NEVER };
    const podInformer = informerFrom(listerWatcher, { indexers: { [NAMESPACE_INDEX]: namespaceIndex, app: labelIndex('app') }, ...(transform ? { transform: dropManagedFields } : {}) });
    await new Promise<void>((resolve) => kept.push(podInformer.handle({ onUpdate: () => undefined }).subscribe((event) => event.type === 'synced' && resolve())));
    // The page is the lister-watcher's; an informer does not keep it.
    items.length = 0;
  } else {
    throw new Error(`unknown variant ${variant}: a2 or b`);
  }
  gc();
  gc();
  const bytesPerPod = (getHeapStatistics().used_heap_size - before) / pods;
  const snapshotPath = join(tmpdir(), `heapBreakdown-${process.pid}.heapsnapshot`);
  writeHeapSnapshot(snapshotPath);
  const measured: Measured = { variant, pods, bytesPerPod, breakdown: breakdownOf(snapshotPath) };
  rmSync(snapshotPath);
  writeFileSync(out, JSON.stringify(measured));
  process.stdout.write(`${variant}${transform ? ' (transform)' : ''}: ${bytesPerPod.toFixed(0)} B of heap per pod, ${pods} pods; breakdown in ${out}\n`);
  // The texts stay alive until here, so that the growth measured is the cache's alone.
  if (texts.length !== pods || kept.length === 0) throw new Error('unreachable');
  process.exit(0);
}

function compare(firstPath: string, secondPath: string): void {
  const first = JSON.parse(readFileSync(firstPath, 'utf8')) as Measured;
  const second = JSON.parse(readFileSync(secondPath, 'utf8')) as Measured;
  const kinds = new Set([...Object.keys(first.breakdown), ...Object.keys(second.breakdown)]);
  const rows = [...kinds].map((kind) => {
    const a = first.breakdown[kind] ?? { bytes: 0, count: 0 };
    const b = second.breakdown[kind] ?? { bytes: 0, count: 0 };
    return { kind, bytes: (b.bytes - a.bytes) / second.pods, count: b.count - a.count };
  });
  rows.sort((x, y) => Math.abs(y.bytes) - Math.abs(x.bytes));
  const total = rows.reduce((sum, row) => sum + row.bytes, 0);
  process.stdout.write(`${second.variant} − ${first.variant}: ${(second.bytesPerPod - first.bytesPerPod).toFixed(0)} B per pod measured, ${total.toFixed(0)} in the snapshots\n`);
  for (const row of rows.slice(0, 20)) process.stdout.write(`${row.bytes.toFixed(1).padStart(8)} B/pod ${String(row.count).padStart(8)} objects  ${row.kind}\n`);
}

const [command = '', ...rest] = process.argv.slice(2);
if (command === 'compare') compare(rest[0] ?? '', rest[1] ?? '');
else void measure(command, rest[0] ?? '', Number(rest[1] ?? '10000'), rest[2] === 'transform');
