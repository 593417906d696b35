/**
 * Micro-benchmark of the structural-sharing walk alone: `shareUnchanged` between the cached
 * version of an object and its next version just parsed, over a cache of N objects updated
 * round-robin (so the cached version is as cold in memory as in an informer):
 *
 *   node -r ts-node/register/transpile-only bench/micro/shareWalk.ts [cached=1000] [events=200000] [pod|application]
 *
 * Objects: `pod` (~4.6 KB with managedFields; add `-r ./bench/micro/smallPods.ts` after ts-node
 * for ~1.5 KB pods without them) or `application` (~21 KB, apiserver/src/applications.ts).
 * SHARE_WALK_MODULE=<path of another copy of shareUnchanged.ts> measures that copy too, in
 * blocks of events alternating with this one's (before/after figures from one run). FLOOR=1 adds
 * the floor of any walk that proves two versions equal: a bare recursive `for…in` deep-equal that
 * writes nothing and keeps each new version as parsed, in the same alternating blocks.
 *
 * Prints the walk's µs per new object (the initial list), then µs per event of JSON.parse and
 * of the walk, timed separately, and the walk's time as a fraction of the parse's.
 */
import { resolve } from 'node:path';
import { makeApplication } from '../../apiserver/src/applications';
import { makePod, seededRandom } from '../../apiserver/src/churn';
import * as shareModule from '../../lib/store/shareUnchanged';

const [cachedText = '1000', eventsText = '200000', kind = 'pod'] = process.argv.slice(2);
const cached = Number(cachedText);
const events = Number(eventsText);
const alternative = process.env['SHARE_WALK_MODULE'];
const make = kind === 'application' ? makeApplication : kind === 'pod' ? makePod : undefined;
if (make === undefined) throw new Error(`unknown kind ${kind}: pod or application`);

const random = seededRandom(7);
const templates: string[][] = [];
const texts: string[] = [];
for (let i = 0; i < cached; i++) {
  const object = make(random, `ns-${i % 10}`, `${kind}-${i}`);
  const text = JSON.stringify({ ...object, metadata: { ...object.metadata, resourceVersion: '1', annotations: { seq: '0' } } });
  templates.push(text.split(/"resourceVersion":"\d+"|"seq":"0"/));
  texts.push(text);
}
/** One copy of the walk under test, with its own cache of N objects and its timings. */
interface Variant {
  readonly name: string;
  readonly share: typeof shareModule.shareUnchanged;
  readonly cache: object[];
  internMs: number;
  parseMs: number;
  walkMs: number;
  events: number;
}
const variants: Variant[] = [{ name: 'lib', share: shareModule.shareUnchanged, cache: [], internMs: 0, parseMs: 0, walkMs: 0, events: 0 }];
// A module chosen at run time, hence require.
if (alternative !== undefined) variants.push({ name: alternative, share: (require(resolve(alternative)) as typeof shareModule).shareUnchanged, cache: [], internMs: 0, parseMs: 0, walkMs: 0, events: 0 });
if (process.env['FLOOR'] === '1') variants.push({ name: 'bare deep-equal (floor)', share: compareOnly, cache: [], internMs: 0, parseMs: 0, walkMs: 0, events: 0 });

/** The floor: compares the versions (the result is kept so the comparison cannot be dropped) and shares nothing. */
function compareOnly<T extends object>(previous: object | undefined, incoming: T): T {
  if (previous !== undefined && deepEqual(previous, incoming)) equalVersions++;
  return incoming;
}
let equalVersions = 0;

/**
 * Deep equality of JSON data, no more (no prototype, -0 or `__proto__` checks, no depth bound),
 * that visits every node even past a difference, as any walk must that finds every equal subtree.
 */
function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    let equal = true;
    for (let i = 0; i < a.length; i++) equal = deepEqual(a[i], b[i]) && equal;
    return equal;
  }
  const was = a as Readonly<Record<string, unknown>>;
  const now = b as Readonly<Record<string, unknown>>;
  let equal = true;
  let keys = 0;
  for (const key in now) {
    keys++;
    equal = deepEqual(was[key], now[key]) && equal;
  }
  for (const _key in was) keys--;
  return equal && keys === 0;
}

// The initial list: new objects, whose walk only swaps their `{}`s for the shared one.
for (const variant of variants) {
  for (const text of texts) {
    const parsed = JSON.parse(text) as object;
    const t0 = performance.now();
    variant.cache.push(variant.share(undefined, parsed));
    variant.internMs += performance.now() - t0;
  }
}
// Blocks of events alternate between the variants, so that both see the same load from the rest of the machine.
const BLOCK = 500;
for (let block = 0; block * BLOCK < events * variants.length; block++) {
  const variant = variants[block % variants.length]!;
  for (let i = 0; i < BLOCK && variant.events < events; i++) {
    const event = variant.events++;
    const slot = event % cached;
    const parts = templates[slot]!;
    const t0 = performance.now();
    const parsed = JSON.parse(`${parts[0]}"resourceVersion":"${event + 2}"${parts[1]}"seq":"${event + 1}"${parts[2]}`) as object;
    const t1 = performance.now();
    variant.cache[slot] = variant.share(variant.cache[slot], parsed);
    const t2 = performance.now();
    variant.parseMs += t1 - t0;
    variant.walkMs += t2 - t1;
  }
}
const bytes = templates[0]!.join('').length;
for (const { name, internMs, parseMs, walkMs } of variants) {
  process.stdout.write(
    `${name}: ${kind} (~${bytes} B) cached=${cached}: new objects ${((internMs * 1000) / cached).toFixed(2)} µs each; ` +
      `events=${events}: parse ${((parseMs * 1000) / events).toFixed(2)} µs/event, walk ${((walkMs * 1000) / events).toFixed(2)} µs/event (${(walkMs / parseMs).toFixed(2)}× parse)\n`,
  );
}
