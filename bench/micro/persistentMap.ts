/**
 * Micro-benchmark of the persistent map under every snapshot: ours (`lib/store/hamt`) against
 * immutable.js's `Map`, the maintained library a reader would pick first. One variant per process,
 * so each gets a clean heap; run them in turn with `interleave.ts` (see docs/performance-notes.md, "Micro-benchmarks"):
 *
 *   node -r ts-node/register/transpile-only bench/micro/persistentMap.ts <ours|immutable|adapter> 100000
 *
 * (adapter: immutable's Map behind our API, as `useImmutableMap.ts` runs the informer on it.)
 * Keys are `ns-<i % 10>/pod-<i>`, as the informer's; values are one shared object, so the heap
 * row counts the map's own structure. Rows, each the best of 5 rounds after a warm-up:
 *
 * - `get`, `update` (set a present key to a new value), `add` (set an absent key) and `delete`
 *   (a present key) at size n, each on the same n-entry map (the result is dropped), in random key
 *   order: CPU ns per operation; for writes also the bytes allocated per write, counted in a window
 *   with no garbage collection (the process re-runs itself with a young generation large enough);
 * - `build`: n sets into an empty transient (`asTransient`/`asMutable`), sealed: CPU ms per build;
 * - `heap`: bytes per entry the built map holds, after a full GC;
 * - `forEach` and `entries` (a `for...of` over [key, value] pairs): ns per entry visited.
 */
import { Map as ImmutableMap } from 'immutable';
import { HamtMap } from '../../lib/store/hamt';
import { seededRandom } from '../../apiserver/src/churn';
import * as Adapter from './immutableHamt';
import { bytesPerCall, ensureAllocationWindow } from './allocation';

const [variant = 'ours', sizeText = '100000'] = process.argv.slice(2);
const size = Number(sizeText);
ensureAllocationWindow();

type Value = { readonly value: number };

/** The operations measured, over one map type; each variant is one implementation of it. */
interface Subject<M> {
  build(keys: readonly string[], value: Value): M;
  set(map: M, key: string, value: Value): M;
  delete(map: M, key: string): M;
  get(map: M, key: string): Value | undefined;
  size(map: M): number;
  forEach(map: M, visit: (value: Value, key: string) => void): void;
  entries(map: M): Iterable<[string, Value]>;
}

/** A map with our API (`lib/store/hamt`): ours, or immutable's Map behind it (`immutableHamt.ts`). */
interface OurApi<M> extends Iterable<[string, Value]> {
  readonly size: number;
  set(key: string, value: Value): M;
  delete(key: string): M;
  get(key: string): Value | undefined;
  forEach(visit: (value: Value, key: string) => void): void;
  asTransient(): { set(key: string, value: Value): unknown; persistent(): M };
}

function onOurApi<M extends OurApi<M>>(empty: M): Subject<M> {
  return {
    build: (keys, value) => {
      const transient = empty.asTransient();
      for (const key of keys) transient.set(key, value);
      return transient.persistent();
    },
    set: (map, key, value) => map.set(key, value),
    delete: (map, key) => map.delete(key),
    get: (map, key) => map.get(key),
    size: (map) => map.size,
    forEach: (map, visit) => map.forEach(visit),
    entries: (map) => map,
  };
}

const ours = onOurApi(HamtMap.empty<Value>());
const adapter = onOurApi(Adapter.HamtMap.empty<Value>());

const immutable: Subject<ImmutableMap<string, Value>> = {
  build: (keys, value) => {
    const mutable = ImmutableMap<string, Value>().asMutable();
    for (const key of keys) mutable.set(key, value);
    return mutable.asImmutable();
  },
  set: (map, key, value) => map.set(key, value),
  delete: (map, key) => map.delete(key),
  get: (map, key) => map.get(key),
  size: (map) => map.size,
  // Returns nothing, so immutable's early stop (a callback returning false) never triggers.
  forEach: (map, visit) => void map.forEach(visit),
  entries: (map) => map,
};

const ROUNDS = 5;
const random = seededRandom(11);
const keys = Array.from({ length: size }, (_, i) => `ns-${i % 10}/pod-${i}`);
const absentKeys = Array.from({ length: size }, (_, i) => `ns-${i % 10}/pod-${size + i}`);
const stored: Value = { value: 1 };
const replacement: Value = { value: 2 };
/** The key order of every operation row: random, the same for every variant. */
const order = Int32Array.from({ length: 1 << 18 }, () => Math.floor(random() * size));
/** Keeps results observable so no loop is optimized away. */
let sink = 0;
/** The last map a write returned: stored here, each new map escapes, as it does in the snapshot, so no allocation is optimized away. */
let latest: unknown;

/**
 * Runs `round` (which returns how many items it did) ROUNDS times after a warm-up; the least CPU
 * ns per item of the rounds (all threads; on a shared machine time spent waiting for a core is not
 * counted, and the least disturbed round is the best estimate of the cost itself).
 */
function nsPerItem(round: () => number): number {
  round();
  const samples: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const started = process.cpuUsage();
    const items = round();
    const used = process.cpuUsage(started);
    samples.push(((used.user + used.system) * 1000) / items);
  }
  return Math.min(...samples);
}

function heapPerEntry<M>(subject: Subject<M>): number {
  global.gc!();
  const before = process.memoryUsage().heapUsed;
  const map = subject.build(keys, stored);
  global.gc!();
  const used = process.memoryUsage().heapUsed - before;
  sink += subject.size(map);
  return used / size;
}

function run<M>(subject: Subject<M>): void {
  const base = subject.build(keys, stored);
  if (subject.size(base) !== size) throw new Error(`built ${subject.size(base)} entries, expected ${size}`);
  const reads = order.length;
  const writes = 1 << 16;
  const window = 4096;
  const rows: string[] = [];
  const print = (row: string): void => void rows.push(row);

  print(
    `get: ${nsPerItem(() => {
      for (let i = 0; i < reads; i++) if (subject.get(base, keys[order[i]!]!) === stored) sink++;
      return reads;
    }).toFixed(0)} ns/op`,
  );
  const writeRow = (name: string, write: (i: number) => M): void => {
    const ns = nsPerItem(() => {
      for (let i = 0; i < writes; i++) latest = write(i);
      return writes;
    });
    const bytes = bytesPerCall((i) => void (latest = write(i)), window);
    print(`${name}: ${ns.toFixed(0)} ns/op, ${bytes.toFixed(0)} B/op`);
  };
  writeRow('update', (i) => subject.set(base, keys[order[i]!]!, replacement));
  writeRow('add', (i) => subject.set(base, absentKeys[order[i]!]!, stored));
  writeRow('delete', (i) => subject.delete(base, keys[order[i]!]!));

  // Small maps are built, and walked, several times a round, so that a round lasts long enough to time.
  const passes = Math.ceil(reads / size);
  const build = nsPerItem(() => {
    for (let p = 0; p < passes; p++) sink += subject.size(subject.build(keys, stored));
    return passes;
  });
  print(`build: ${(build / 1e6).toFixed(2)} ms`);
  print(`heap: ${heapPerEntry(subject).toFixed(1)} B/entry`);
  print(
    `forEach: ${nsPerItem(() => {
      for (let p = 0; p < passes; p++) subject.forEach(base, (value) => (sink += value.value));
      return passes * size;
    }).toFixed(1)} ns/entry`,
  );
  print(
    `entries: ${nsPerItem(() => {
      for (let p = 0; p < passes; p++) for (const [, value] of subject.entries(base)) sink += value.value;
      return passes * size;
    }).toFixed(1)} ns/entry`,
  );
  if (sink === 0 || latest === undefined) throw new Error('nothing was measured');
  process.stdout.write(`${variant} with n=${size}\n${rows.join('\n')}\n`);
}

if (variant === 'ours') run(ours);
else if (variant === 'immutable') run(immutable);
else if (variant === 'adapter') run(adapter);
else throw new Error(`unknown variant ${variant}: ours, immutable or adapter`);
