/**
 * Micro-benchmark of deep-freezing what the indexer stores (`freeze: true`): immer's
 * `freeze(object, true)` against `lib/store/deepFreeze`. One variant per process; run them in turn
 * with `interleave.ts` (see docs/performance-notes.md, "Micro-benchmarks"):
 *
 *   node -r ts-node/register/transpile-only bench/micro/freeze.ts <immer|plain> 10000
 *
 * On n of the benchmark's pods (~4.4 KB of JSON each), as the indexer prepares them, CPU ns per
 * pod, the best of 5 rounds after a warm-up:
 * - `parse`: `JSON.parse` alone, for scale;
 * - `new`: freezing a pod just parsed, after `shareUnchanged` (whose shared `{}` is frozen already);
 * - `update`: freezing an update (new resourceVersion and annotation) after `shareUnchanged` with
 *   its frozen cached version, so only the changed paths are new.
 */
import { freeze } from 'immer';
import { deepFreeze } from '../../lib/store/deepFreeze';
import type { Pod } from '../../lib/resources/builtins';
import { shareUnchanged } from '../../lib/store/shareUnchanged';
import { makePod, seededRandom } from '../../apiserver/src/churn';

const [variant = 'plain', countText = '10000'] = process.argv.slice(2);
const count = Number(countText);
const ROUNDS = 5;
const freezeDeep: (pod: Pod) => Pod = variant === 'immer' ? (pod) => freeze(pod, true) : variant === 'plain' ? deepFreeze : unknownVariant();

function unknownVariant(): never {
  throw new Error(`unknown variant ${variant}: immer or plain`);
}

const random = seededRandom(5);
const texts = Array.from({ length: count }, (_, i) => JSON.stringify(makePod(random, `ns-${i % 10}`, `pod-${i}`)));
const updateTexts = texts.map((text, i) => text.replace(/"resourceVersion":"[^"]*"/, `"resourceVersion":"${count + i + 1}"`).replace('"metadata":{', `"metadata":{"annotations":{"seq":"${i}"},`));

/** The least CPU ns per pod over the rounds; `prepare` runs untimed before each round. */
function bestNsPerPod<S>(prepare: () => S, timed: (state: S) => void): number {
  let best = Infinity;
  for (let round = 0; round <= ROUNDS; round++) {
    const state = prepare();
    const started = process.cpuUsage();
    timed(state);
    const used = process.cpuUsage(started);
    if (round > 0) best = Math.min(best, ((used.user + used.system) * 1000) / count);
  }
  return best;
}

const parse = bestNsPerPod(
  () => [] as Pod[],
  (out) => {
    for (const text of texts) out.push(JSON.parse(text) as Pod);
  },
);
const fresh = bestNsPerPod(
  () => texts.map((text) => shareUnchanged(undefined, JSON.parse(text) as Pod)),
  (pods) => {
    for (const pod of pods) freezeDeep(pod);
  },
);
const cached = texts.map((text) => freezeDeep(shareUnchanged(undefined, JSON.parse(text) as Pod)));
const update = bestNsPerPod(
  () => updateTexts.map((text, i) => shareUnchanged(cached[i], JSON.parse(text) as Pod)),
  (pods) => {
    for (const pod of pods) freezeDeep(pod);
  },
);
const probe = cached[0]!;
if (!Object.isFrozen(probe.metadata) || !Object.isFrozen(probe.spec?.containers?.[0])) throw new Error('not frozen');
process.stdout.write(`${variant}, ${count} pods of ${Math.round(texts[0]!.length / 100) / 10} KB\nparse: ${parse.toFixed(0)} ns/op\nnew: ${fresh.toFixed(0)} ns/op\nupdate: ${update.toFixed(0)} ns/op\n`);
