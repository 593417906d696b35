/**
 * The snapshot (`lib/store/indexedSnapshot`) on our trie and on immutable.js's `Map`: both copies
 * are loaded in one process and run in alternating rounds, so that other work on the machine
 * slows both alike, and each round pair gives a ratio. This is the store's part of what the
 * informer does, without the parse and the sharing walk that dominate (and blur) a whole event:
 *
 *   node -r ts-node/register/transpile-only bench/micro/snapshotMap.ts 100000
 *
 * With n of the benchmark's pods cached under the namespace and `app` indexes, as `pipeline.ts`
 * and `sync.ts` configure the informer:
 * - `relist`: a builder filled with the n pods and sealed (the store's part of a sync or relist);
 * - `update`: a new version of a cached pod, index values unchanged, through an edit sealed into a
 *   snapshot (the store's part of a watch event that arrives alone in its turn, a batch of one),
 *   chained as the indexer chains them; CPU ns and bytes allocated per update;
 * - `batched`: the same updates, 64 to an edit (a turn that decoded 64 events); CPU ns per update;
 * - `heap`: bytes per pod the snapshot itself holds (objects map and both indexes; the pods are
 *   not counted), after a full GC.
 */
import { makePod, seededRandom } from '../../apiserver/src/churn';
import { labelIndex, namespaceIndex, NAMESPACE_INDEX } from '../../lib/store/indexers';
import * as Ours from '../../lib/store/indexedSnapshot';
import type { Pod } from '../../lib/resources/builtins';
import { bytesPerCall, ensureAllocationWindow } from './allocation';
import { requireOnImmutableMap } from './immutableHamtModule';

ensureAllocationWindow();

type Snapshot = Ours.IndexedSnapshot<Pod>;
const variants: { readonly name: string; readonly module: typeof Ours }[] = [
  { name: 'ours', module: Ours },
  { name: 'immutable', module: requireOnImmutableMap<typeof Ours>('../../lib/store/indexedSnapshot') },
];

const size = Number(process.argv[2] ?? '100000');
const ROUNDS = 7;
const UPDATES = 1 << 16;
const random = seededRandom(3);
const pods = Array.from({ length: size }, (_, i) => makePod(random, `ns-${i % 10}`, `pod-${i}`));
const keys = pods.map((pod) => `${pod.metadata.namespace}/${pod.metadata.name}`);
/** The updates, in random key order: each a new version of the pod (same labels, so the indexes stay). */
const updateOrder = Int32Array.from({ length: UPDATES }, () => Math.floor(random() * size));
const updates = Array.from(updateOrder, (i, n) => ({ ...pods[i]!, metadata: { ...pods[i]!.metadata, resourceVersion: String(size + n + 1) } }));
const indexers = { [NAMESPACE_INDEX]: namespaceIndex, app: labelIndex('app') };
let latest: Snapshot | undefined;

function build(module: typeof Ours): Snapshot {
  const builder = module.IndexedSnapshot.empty<Pod>(indexers).builder();
  for (let i = 0; i < size; i++) builder.put(keys[i]!, pods[i]!);
  return builder.finish(String(size), []);
}

/** `snapshot` with updates `from` up to `to` applied in one edit, as the indexer applies one batch of watch events. */
function applyBatch(snapshot: Snapshot, from: number, to: number): Snapshot {
  const edit = snapshot.edit();
  for (let n = from; n < to; n++) {
    const key = keys[updateOrder[n]!]!;
    edit.put(key, edit.get(key), updates[n]!);
  }
  return edit.finish(updates[to - 1]!.metadata.resourceVersion!, []);
}

/** `base` with the first `count` updates applied in batches of `batch`. */
function applyUpdates(base: Snapshot, count: number, batch: number): Snapshot {
  let snapshot = base;
  for (let n = 0; n < count; n += batch) snapshot = applyBatch(snapshot, n, Math.min(count, n + batch));
  return snapshot;
}

function cpuMs(run: () => void): number {
  const started = process.cpuUsage();
  run();
  const used = process.cpuUsage(started);
  return (used.user + used.system) / 1000;
}

function heapPerPod(module: typeof Ours): number {
  global.gc!();
  const before = process.memoryUsage().heapUsed;
  const snapshot = build(module);
  global.gc!();
  const used = process.memoryUsage().heapUsed - before;
  if (snapshot.size !== size) throw new Error('lost pods');
  return used / size;
}

const bases = variants.map((variant) => build(variant.module));
const samples = { relist: variants.map((): number[] => []), update: variants.map((): number[] => []), batched: variants.map((): number[] => []) };
for (let round = 0; round <= ROUNDS; round++) {
  variants.forEach((variant, v) => {
    const relist = cpuMs(() => void (latest = build(variant.module)));
    const update = cpuMs(() => void (latest = applyUpdates(bases[v]!, UPDATES, 1)));
    const batched = cpuMs(() => void (latest = applyUpdates(bases[v]!, UPDATES, 64)));
    if (round === 0) return; // warm-up
    samples.relist[v]!.push(relist);
    samples.update[v]!.push((update * 1e6) / UPDATES);
    samples.batched[v]!.push((batched * 1e6) / UPDATES);
  });
}
if (latest === undefined || bases.some((base) => base.size !== size)) throw new Error('nothing was measured');

/** Median [min–max]. */
function describe(values: readonly number[], digits = 0): string {
  const sorted = [...values].sort((a, b) => a - b);
  return `${sorted[sorted.length >> 1]!.toFixed(digits)} [${sorted[0]!.toFixed(digits)}–${sorted[sorted.length - 1]!.toFixed(digits)}]`;
}
/** immutable's figure over ours, round by round. */
const ratios = ([ours, immutable]: number[][]): string => describe(immutable!.map((value, i) => value / ours![i]!), 2);

const rows = [
  `snapshot of ${size} pods, ${ROUNDS} alternating rounds: median [range]; immutable / ours per round`,
  `relist (CPU ms): ours ${describe(samples.relist[0]!)}, immutable ${describe(samples.relist[1]!)}, ratio ${ratios(samples.relist)}`,
  `update (CPU ns): ours ${describe(samples.update[0]!)}, immutable ${describe(samples.update[1]!)}, ratio ${ratios(samples.update)}`,
  `batched, 64 per edit (CPU ns per update): ours ${describe(samples.batched[0]!)}, immutable ${describe(samples.batched[1]!)}, ratio ${ratios(samples.batched)}`,
  `update (B allocated): ${variants.map((variant, v) => `${variant.name} ${bytesPerCall((n) => void (latest = applyBatch(bases[v]!, n, n + 1)), 4096).toFixed(0)}`).join(', ')}`,
  `heap (B per pod): ${variants.map((variant) => `${variant.name} ${heapPerPod(variant.module).toFixed(0)}`).join(', ')}`,
];
process.stdout.write(`${rows.join('\n')}\n`);
