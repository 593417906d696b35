/**
 * Micro-benchmark of editing a cached object (rx-informer/writes `edit`): immer's draft and
 * patches, turned into the JSON Patch and merge patch of the write, against a hand-written copy of
 * the changed paths with its JSON Patch written by hand, on the benchmark's pods as the cache
 * holds them (after `shareUnchanged`, deep-frozen). One variant per process; run them in turn with
 * `interleave.ts` (see docs/PERFORMANCE.md, "Edits: immer against a hand-written copy"):
 *
 *   node -r ts-node/register/transpile-only bench/micro/edit.ts <edit|produce|spread|structuredClone> 10000
 *
 * Variants:
 * - `edit`: `edit(pod, recipe)`: immer's `produceWithPatches`, then the JSON Patch and the merge
 *   patch of the write (what the library does);
 * - `produce`: immer's `produceWithPatches` alone, its patches left as immer gives them;
 * - `spread`: the same change by object spread along the changed path, and its JSON Patch built by
 *   hand (the floor: what a careful hand writes for one known change);
 * - `structuredClone`: a deep copy, changed in place, no patch (what a careless hand writes).
 *
 * Recipes, CPU ns per pod, the best of 5 rounds after a warm-up:
 * - `label`: add a label (`metadata.labels.checked`);
 * - `condition`: flip the pod's Ready condition to False with a new lastTransitionTime;
 * - `parse`: `JSON.parse` of the pod, for scale.
 */
import { produceWithPatches, enablePatches, setAutoFreeze } from 'immer';
import { edit } from '../../lib/writes/edit';
import { deepFreeze } from '../../lib/store/deepFreeze';
import { shareUnchanged } from '../../lib/store/shareUnchanged';
import type { Pod } from '../../lib/resources/builtins';
import { makePod } from '../../apiserver/src/pods';
import { seededRandom } from '../../apiserver/src/random';

const [variant = 'edit', countText = '10000'] = process.argv.slice(2);
const count = Number(countText);
const ROUNDS = 5;
const AT = '2026-02-01T00:00:00Z';

type PodCondition = { readonly type: string; readonly status: string; readonly lastTransitionTime?: string };
type Edited = { readonly object: Pod; readonly patch: unknown };
type Recipe = (pod: Pod) => Edited;

const conditionsOf = (pod: { status?: { conditions?: readonly PodCondition[] } }): readonly PodCondition[] => pod.status?.conditions ?? [];

/** The two changes, by each variant. */
function recipes(name: string): { readonly label: Recipe; readonly condition: Recipe } {
  switch (name) {
    case 'edit':
      return {
        label: (pod) => {
          const change = edit(pod, (draft) => {
            draft.metadata.labels!['checked'] = 'true';
          });
          return { object: change.object, patch: change.writes };
        },
        condition: (pod) => {
          const change = edit(pod, (draft) => {
            const ready = (draft.status!.conditions as { type: string; status: string; lastTransitionTime?: string }[]).find((c) => c.type === 'Ready')!;
            ready.status = 'False';
            ready.lastTransitionTime = AT;
          });
          return { object: change.object, patch: change.writes };
        },
      };
    case 'produce':
      setAutoFreeze(false);
      enablePatches();
      return {
        label: (pod) => {
          const [object, patch] = produceWithPatches(pod, (draft) => {
            draft.metadata.labels!['checked'] = 'true';
          });
          return { object, patch };
        },
        condition: (pod) => {
          const [object, patch] = produceWithPatches(pod, (draft) => {
            const ready = (draft.status!.conditions as { type: string; status: string; lastTransitionTime?: string }[]).find((c) => c.type === 'Ready')!;
            ready.status = 'False';
            ready.lastTransitionTime = AT;
          });
          return { object, patch };
        },
      };
    case 'spread':
      return {
        label: (pod) => ({
          object: { ...pod, metadata: { ...pod.metadata, labels: { ...pod.metadata.labels, checked: 'true' } } },
          patch: [
            { op: 'test', path: '/metadata/resourceVersion', value: pod.metadata.resourceVersion },
            { op: 'add', path: '/metadata/labels/checked', value: 'true' },
          ],
        }),
        condition: (pod) => {
          const conditions = conditionsOf(pod);
          const index = conditions.findIndex((c) => c.type === 'Ready');
          const next = conditions.slice();
          next[index] = { ...conditions[index]!, status: 'False', lastTransitionTime: AT };
          return {
            object: { ...pod, status: { ...pod.status, conditions: next } } as Pod,
            patch: [
              { op: 'test', path: '/metadata/resourceVersion', value: pod.metadata.resourceVersion },
              { op: 'replace', path: `/status/conditions/${index}/status`, value: 'False' },
              { op: 'replace', path: `/status/conditions/${index}/lastTransitionTime`, value: AT },
            ],
          };
        },
      };
    case 'structuredClone':
      return {
        label: (pod) => {
          const object = structuredClone(pod) as { metadata: { labels: Record<string, string> } };
          object.metadata.labels['checked'] = 'true';
          return { object: object as unknown as Pod, patch: undefined };
        },
        condition: (pod) => {
          const object = structuredClone(pod) as { status: { conditions: { type: string; status: string; lastTransitionTime?: string }[] } };
          const ready = object.status.conditions.find((c) => c.type === 'Ready')!;
          ready.status = 'False';
          ready.lastTransitionTime = AT;
          return { object: object as unknown as Pod, patch: undefined };
        },
      };
    default:
      throw new Error(`unknown variant ${name}: edit, produce, spread or structuredClone`);
  }
}

const random = seededRandom(5);
const texts = Array.from({ length: count }, (_, i) => {
  const pod = makePod(random, `ns-${i % 10}`, `pod-${i}`);
  return JSON.stringify({ ...pod, metadata: { ...pod.metadata, resourceVersion: String(i + 1) } });
});
// As the cache holds them: structurally shared (all `{}` one object), frozen.
const cached = texts.map((text) => deepFreeze(shareUnchanged(undefined, JSON.parse(text) as Pod)));
const { label, condition } = recipes(variant);

/** The least CPU ns per pod over the rounds. */
function bestNsPerPod(timed: () => void): number {
  let best = Infinity;
  for (let round = 0; round <= ROUNDS; round++) {
    const started = process.cpuUsage();
    timed();
    const used = process.cpuUsage(started);
    if (round > 0) best = Math.min(best, ((used.user + used.system) * 1000) / count);
  }
  return best;
}

// Each result is dropped at once, as a reconcile drops its edit once written: what is measured is
// the edit, not the cost of keeping 10k of them alive.
let last: Edited | undefined;
const timeRecipe = (recipe: Recipe): number =>
  bestNsPerPod(() => {
    for (let i = 0; i < count; i++) last = recipe(cached[i]!);
  });
const labelNs = timeRecipe(label);
if ((last?.object.metadata.labels as Record<string, string> | undefined)?.['checked'] !== 'true') throw new Error(`${variant}: the label was not set`);
const conditionNs = timeRecipe(condition);
if (conditionsOf(last!.object as { status?: { conditions?: readonly PodCondition[] } }).find((c) => c.type === 'Ready')?.status !== 'False') throw new Error(`${variant}: the condition was not set`);
if (cached.some((pod) => (pod.metadata.labels as Record<string, string>)['checked'] !== undefined)) throw new Error(`${variant}: a cached pod changed`);
const parseNs = bestNsPerPod(() => {
  for (let i = 0; i < count; i++) last = { object: JSON.parse(texts[i]!) as Pod, patch: undefined };
});
process.stdout.write(`${variant}, ${count} pods of ${Math.round(texts[0]!.length / 100) / 10} KB\nlabel: ${labelNs.toFixed(0)} ns/op\ncondition: ${conditionNs.toFixed(0)} ns/op\nparse: ${parseNs.toFixed(0)} ns/op\n`);
