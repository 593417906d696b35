/**
 * What the structural-sharing walk costs an informer with `transform: dropManagedFields`, in the
 * order the store runs them (share, then transform: the walk visits managedFields, which the
 * transform then drops) and in the other (transform, then share), on new objects and on updates
 * (each pod parsed again and walked against its transformed cached version). Alternating rounds
 * in one process:
 *
 *   node -r ts-node/register/transpile-only bench/micro/transformOrder.ts [pods=10000] [rounds=6]
 */
import { makePod, seededRandom } from '../../apiserver/src/churn';
import type { Pod } from '../../lib/resources/builtins';
import { shareUnchanged } from '../../lib/store/shareUnchanged';
import { dropManagedFields } from '../../lib/store/transforms';

const pods = Number(process.argv[2] ?? 10_000);
const rounds = Number(process.argv[3] ?? 6);
const random = seededRandom(7);
const texts = Array.from({ length: pods }, (_, i) => JSON.stringify(makePod(random, `ns-${i % 10}`, `pod-${i}`)));
const cached = texts.map((text) => dropManagedFields(shareUnchanged(undefined, JSON.parse(text) as Pod)));

type Order = 'share-then-transform' | 'transform-then-share';
const store = (order: Order, previous: Pod | undefined, incoming: Pod): Pod =>
  order === 'share-then-transform' ? dropManagedFields(shareUnchanged(previous, incoming)) : shareUnchanged(previous, dropManagedFields(incoming));

function time(order: Order, updates: boolean): number {
  const parsed = texts.map((text) => JSON.parse(text) as Pod);
  const started = performance.now();
  for (let i = 0; i < pods; i++) store(order, updates ? cached[i] : undefined, parsed[i]!);
  return ((performance.now() - started) * 1000) / pods;
}

const results: Record<string, number[]> = {};
for (let round = 0; round < rounds; round++) {
  for (const order of ['share-then-transform', 'transform-then-share'] as const) {
    for (const updates of [false, true]) (results[`${order} ${updates ? 'update' : 'new'}`] ??= []).push(time(order, updates));
  }
}
for (const [name, micros] of Object.entries(results)) {
  const sorted = micros.slice(1).sort((a, b) => a - b);
  process.stdout.write(`${name.padEnd(34)} µs per pod, rounds 2–${rounds}: ${sorted.map((m) => m.toFixed(2)).join(' ')}\n`);
}
