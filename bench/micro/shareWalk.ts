/**
 * Micro-benchmark of the structural-sharing walk alone: `shareUnchanged` between the cached
 * version of a pod and its next version just parsed, over a cache of N pods updated
 * round-robin (so the cached version is as cold in memory as in an informer):
 *
 *   node -r ts-node/register/transpile-only bench/micro/shareWalk.ts [cached=1000] [events=200000]
 *
 * Prints the walk's µs per new object (the initial list), then µs per event of JSON.parse and
 * of the walk, timed separately.
 */
import { makePod, seededRandom } from '../../lib/testing/churn';
import { shareUnchanged } from '../../lib/store/shareUnchanged';

const [cachedText = '1000', eventsText = '200000'] = process.argv.slice(2);
const cached = Number(cachedText);
const events = Number(eventsText);
const random = seededRandom(7);
const templates: string[][] = [];
const texts: string[] = [];
for (let i = 0; i < cached; i++) {
  const pod = makePod(random, `ns-${i % 10}`, `pod-${i}`);
  const text = JSON.stringify({ ...pod, metadata: { ...pod.metadata, resourceVersion: '1', annotations: { seq: '0' } } });
  templates.push(text.split(/"resourceVersion":"\d+"|"seq":"0"/));
  texts.push(text);
}
// The initial list: new objects, whose walk only swaps their `{}`s for the shared one.
const cache: object[] = [];
let internMs = 0;
for (const text of texts.splice(0)) {
  const parsed = JSON.parse(text) as object;
  const t0 = performance.now();
  cache.push(shareUnchanged(undefined, parsed));
  internMs += performance.now() - t0;
}
let parseMs = 0;
let walkMs = 0;
for (let event = 0; event < events; event++) {
  const slot = event % cached;
  const parts = templates[slot]!;
  const t0 = performance.now();
  const parsed = JSON.parse(`${parts[0]}"resourceVersion":"${event + 2}"${parts[1]}"seq":"${event + 1}"${parts[2]}`) as object;
  const t1 = performance.now();
  cache[slot] = shareUnchanged(cache[slot], parsed);
  const t2 = performance.now();
  parseMs += t1 - t0;
  walkMs += t2 - t1;
}
process.stdout.write(`cached=${cached}: new objects ${((internMs * 1000) / cached).toFixed(2)} µs each; events=${events}: parse ${((parseMs * 1000) / events).toFixed(2)} µs/event, walk ${((walkMs * 1000) / events).toFixed(2)} µs/event\n`);
