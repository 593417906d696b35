/** What changed between two versions of a map (`HamtMap`), found by walking both tries at once. */
import { BITS, Branch, Collision, entryHash, entryKey, entryValue, MASK, popcount, type Node } from './hamtNodes';
import { leaves } from './hamtWalk';

/** A key whose value differs between two maps, with its value in each (undefined where absent). */
export type HamtDifference<V> = readonly [key: string, before: V | undefined, after: V | undefined];

/**
 * The keys whose values differ between the tries `older` and `newer` (compared by identity), lazily, in
 * the trie's order. Subtrees the two maps share are skipped without a look inside, so two versions
 * of one map that differ in k keys cost O(k log32 n) however large they are (unrelated maps cost
 * O(n)); the walk holds one frame per trie level, never a list of the differences.
 */
export function* diffTries<V>(older: Node<V> | undefined, newer: Node<V> | undefined): Generator<HamtDifference<V>, void, undefined> {
  yield* diffNodes(older, newer, 0);
}

function* diffNodes<V>(a: Node<V> | undefined, b: Node<V> | undefined, shift: number): Generator<HamtDifference<V>, void, undefined> {
  if (a === b) return;
  if (a === undefined) {
    for (const leaf of leaves(b)) yield [entryKey(leaf), undefined, entryValue(leaf)];
    return;
  }
  if (b === undefined) {
    for (const leaf of leaves(a)) yield [entryKey(leaf), entryValue(leaf), undefined];
    return;
  }
  if (a instanceof Branch || b instanceof Branch) {
    // A leaf or collision facing a branch is compared with the branch's child in its own slot:
    // both are placed by their hash alone, whatever their depth.
    const slotsA = slotsOf(a, shift);
    const slotsB = slotsOf(b, shift);
    for (let slots = slotsA | slotsB; slots !== 0; slots &= slots - 1) {
      const bit = slots & -slots;
      yield* diffNodes(childIn(a, bit, slotsA), childIn(b, bit, slotsB), shift + BITS);
    }
    return;
  }
  // Leaves and collisions hold a few entries at most: compare them key by key.
  const before = a instanceof Collision ? a.leaves : [a];
  const after = b instanceof Collision ? b.leaves : [b];
  for (const old of before) {
    const key = entryKey(old);
    const now = after.find((leaf) => entryKey(leaf) === key);
    if (now === undefined) yield [key, entryValue(old), undefined];
    else if (entryValue(now) !== entryValue(old)) yield [key, entryValue(old), entryValue(now)];
  }
  for (const now of after) if (!before.some((leaf) => entryKey(leaf) === entryKey(now))) yield [entryKey(now), undefined, entryValue(now)];
}

/** The slots a node occupies at depth `shift`: a branch's bitmap, or the one slot of a leaf or collision. */
function slotsOf<V>(node: Node<V>, shift: number): number {
  if (node instanceof Branch) return node.bitmap;
  return 1 << (((node instanceof Collision ? node.hash : entryHash(node)) >>> shift) & MASK);
}

function childIn<V>(node: Node<V>, bit: number, slots: number): Node<V> | undefined {
  if ((slots & bit) === 0) return undefined;
  return node instanceof Branch ? node.children[popcount(node.bitmap & (bit - 1))] : node;
}
