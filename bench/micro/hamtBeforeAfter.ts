/**
 * `lib/store/hamt` against another version of the same file (a checkout of an older commit), both
 * loaded in one process and run in alternating rounds, so that other work on the machine slows
 * both alike; each round pair gives a ratio. For changes to the trie, where the difference sought
 * is smaller than the noise between processes:
 *
 *   node -r ts-node/register/transpile-only bench/micro/hamtBeforeAfter.ts <path of the other hamt.ts> 100000
 *
 * Rows: `update` (set a present key to a new value), `add` (an absent key), `delete` (a present
 * key), each from the same n-entry map in random key order: CPU ns per write of each version, and
 * the median [range] of this version's time over the other's, round by round.
 */
import * as path from 'node:path';
import * as Current from '../../lib/store/hamt';
import { seededRandom } from '../../apiserver/src/churn';

const [otherPath, sizeText = '100000'] = process.argv.slice(2);
if (otherPath === undefined) throw new Error('usage: hamtBeforeAfter.ts <path of the other hamt.ts> [entries]');
const Other = require(path.resolve(otherPath)) as typeof Current;
const size = Number(sizeText);
const ROUNDS = 15;

/** What both versions offer, as the benchmark uses it. */
interface WritableMap {
  readonly size: number;
  set(key: string, value: object): WritableMap;
  delete(key: string): WritableMap;
}
interface Version {
  readonly name: string;
  readonly base: WritableMap;
}

const random = seededRandom(13);
const keys = Array.from({ length: size }, (_, i) => `ns-${i % 10}/pod-${i}`);
const absentKeys = keys.map((key) => `${key}-new`);
const order = Int32Array.from({ length: 1 << 17 }, () => Math.floor(random() * size));
const stored = { value: 1 };
const replacement = { value: 2 };
let latest: WritableMap | undefined;

function build(module: typeof Current): WritableMap {
  const transient = module.HamtMap.empty<object>().asTransient();
  for (const key of keys) transient.set(key, stored);
  return transient.persistent();
}

const versions: Version[] = [
  { name: 'other', base: build(Other) },
  { name: 'current', base: build(Current) },
];
const writes: Record<string, (map: WritableMap, i: number) => WritableMap> = {
  update: (map, i) => map.set(keys[order[i]!]!, replacement),
  add: (map, i) => map.set(absentKeys[order[i]!]!, stored),
  delete: (map, i) => map.delete(keys[order[i]!]!),
};

function nsPerWrite(version: Version, write: (map: WritableMap, i: number) => WritableMap): number {
  const started = process.cpuUsage();
  for (let i = 0; i < order.length; i++) latest = write(version.base, i);
  const used = process.cpuUsage(started);
  return ((used.user + used.system) * 1000) / order.length;
}

/** Median [min–max]. */
function describe(values: readonly number[], digits: number): string {
  const sorted = [...values].sort((a, b) => a - b);
  return `${sorted[sorted.length >> 1]!.toFixed(digits)} [${sorted[0]!.toFixed(digits)}–${sorted[sorted.length - 1]!.toFixed(digits)}]`;
}

const rows = [`hamt with ${size} entries, ${ROUNDS} alternating rounds after 2 of warm-up: median [range]`];
for (const [name, write] of Object.entries(writes)) {
  const times = versions.map((): number[] => []);
  for (let round = 0; round < ROUNDS + 2; round++) {
    const measured = versions.map((version) => nsPerWrite(version, write));
    if (round >= 2) measured.forEach((ns, v) => times[v]!.push(ns));
  }
  const ratios = times[1]!.map((ns, i) => ns / times[0]![i]!);
  rows.push(`${name}: other ${describe(times[0]!, 0)} ns, current ${describe(times[1]!, 0)} ns, current / other ${describe(ratios, 2)}`);
}
if (latest === undefined) throw new Error('nothing was measured');
process.stdout.write(`${rows.join('\n')}\n`);
