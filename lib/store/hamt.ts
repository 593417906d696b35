/**
 * A persistent hash array mapped trie (HAMT) from string keys to values: the structure under every
 * snapshot. `set` and `delete` return a new map sharing all but one root-to-leaf path with the old
 * one, so a change costs O(log32 n) time and allocation (about four small arrays at 100k keys),
 * and every older version stays valid and unchanged.
 *
 * A transient ({@link HamtMap.asTransient}) edits nodes it created itself in place, so building
 * a 100k-entry map from a relist copies no paths; `persistent()` seals it.
 */

const BITS = 5;
const MASK = (1 << BITS) - 1;

/** Marks the nodes one transient created, so only that transient edits them in place. */
type Owner = object;

class Leaf<V> {
  constructor(readonly hash: number, readonly key: string, readonly value: V) {}
}

/** Children are packed: slot i of the 32 is present when bit i is set, at index popcount(below i). */
class Branch<V> {
  constructor(public owner: Owner | null, public bitmap: number, public children: Node<V>[]) {}
}

/** Leaves whose full 32-bit hashes are equal. */
class Collision<V> {
  constructor(public owner: Owner | null, readonly hash: number, public leaves: Leaf<V>[]) {}
}

type Node<V> = Leaf<V> | Branch<V> | Collision<V>;

/** FNV-1a with a murmur3 finalizer: cheap, and spreads `namespace/name-123` keys across all bits. */
export function hashString(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

function lookup<V>(root: Node<V> | undefined, hash: number, key: string): Leaf<V> | undefined {
  let node = root;
  let shift = 0;
  while (node !== undefined) {
    if (node instanceof Branch) {
      const bit = 1 << ((hash >>> shift) & MASK);
      if ((node.bitmap & bit) === 0) return undefined;
      node = node.children[popcount(node.bitmap & (bit - 1))];
      shift += BITS;
    } else if (node instanceof Leaf) {
      return node.key === key ? node : undefined;
    } else {
      if (node.hash !== hash) return undefined;
      for (const leaf of node.leaves) if (leaf.key === key) return leaf;
      return undefined;
    }
  }
  return undefined;
}

/** Set by `insert`/`remove` so callers learn whether the size changed without a result object. */
let sizeDelta = 0;

function arrayReplace<T>(array: readonly T[], index: number, item: T): T[] {
  const copy = array.slice();
  copy[index] = item;
  return copy;
}

function arrayInsert<T>(array: readonly T[], index: number, item: T): T[] {
  const copy = new Array<T>(array.length + 1);
  for (let i = 0; i < index; i++) copy[i] = array[i]!;
  copy[index] = item;
  for (let i = index; i < array.length; i++) copy[i + 1] = array[i]!;
  return copy;
}

function arrayRemove<T>(array: readonly T[], index: number): T[] {
  const copy = new Array<T>(array.length - 1);
  for (let i = 0; i < index; i++) copy[i] = array[i]!;
  for (let i = index + 1; i < array.length; i++) copy[i - 1] = array[i]!;
  return copy;
}

/** A node holding two leaves with different keys, at depth `shift`. */
function pair<V>(owner: Owner | null, shift: number, a: Leaf<V>, b: Leaf<V>): Node<V> {
  if (a.hash === b.hash) return new Collision(owner, a.hash, [a, b]);
  const fragmentA = (a.hash >>> shift) & MASK;
  const fragmentB = (b.hash >>> shift) & MASK;
  if (fragmentA === fragmentB) return new Branch(owner, 1 << fragmentA, [pair(owner, shift + BITS, a, b)]);
  return new Branch(owner, (1 << fragmentA) | (1 << fragmentB), fragmentA < fragmentB ? [a, b] : [b, a]);
}

function insert<V>(node: Node<V> | undefined, owner: Owner | null, shift: number, leaf: Leaf<V>): Node<V> {
  if (node === undefined) {
    sizeDelta = 1;
    return leaf;
  }
  if (node instanceof Branch) {
    const bit = 1 << ((leaf.hash >>> shift) & MASK);
    const index = popcount(node.bitmap & (bit - 1));
    const editable = owner !== null && node.owner === owner;
    if ((node.bitmap & bit) === 0) {
      sizeDelta = 1;
      if (editable) {
        node.children.splice(index, 0, leaf);
        node.bitmap |= bit;
        return node;
      }
      return new Branch(owner, node.bitmap | bit, arrayInsert(node.children, index, leaf));
    }
    const child = node.children[index]!;
    const updated = insert(child, owner, shift + BITS, leaf);
    if (updated === child) return node;
    if (editable) {
      node.children[index] = updated;
      return node;
    }
    return new Branch(owner, node.bitmap, arrayReplace(node.children, index, updated));
  }
  if (node instanceof Leaf) {
    if (node.key === leaf.key) {
      sizeDelta = 0;
      return node.value === leaf.value ? node : leaf;
    }
    sizeDelta = 1;
    return pair(owner, shift, node, leaf);
  }
  if (node.hash !== leaf.hash) {
    sizeDelta = 1;
    // A collision is position-independent; push it down beside the new leaf.
    const fragmentA = (node.hash >>> shift) & MASK;
    const fragmentB = (leaf.hash >>> shift) & MASK;
    if (fragmentA === fragmentB) return new Branch(owner, 1 << fragmentA, [insert(node, owner, shift + BITS, leaf)]);
    return new Branch(owner, (1 << fragmentA) | (1 << fragmentB), fragmentA < fragmentB ? [node, leaf] : [leaf, node]);
  }
  const at = node.leaves.findIndex((l) => l.key === leaf.key);
  if (at >= 0 && node.leaves[at]!.value === leaf.value) {
    sizeDelta = 0;
    return node;
  }
  sizeDelta = at >= 0 ? 0 : 1;
  const leaves = at >= 0 ? arrayReplace(node.leaves, at, leaf) : [...node.leaves, leaf];
  return new Collision(owner, node.hash, leaves);
}

/** Returns the node without `key` (undefined when empty); sets `sizeDelta` to -1 when removed. */
function remove<V>(node: Node<V> | undefined, owner: Owner | null, shift: number, hash: number, key: string): Node<V> | undefined {
  if (node === undefined) return undefined;
  if (node instanceof Leaf) {
    if (node.key !== key) return node;
    sizeDelta = -1;
    return undefined;
  }
  if (node instanceof Collision) {
    const at = node.hash === hash ? node.leaves.findIndex((l) => l.key === key) : -1;
    if (at < 0) return node;
    sizeDelta = -1;
    if (node.leaves.length === 2) return node.leaves[1 - at];
    return new Collision(owner, node.hash, arrayRemove(node.leaves, at));
  }
  const bit = 1 << ((hash >>> shift) & MASK);
  if ((node.bitmap & bit) === 0) return node;
  const index = popcount(node.bitmap & (bit - 1));
  const child = node.children[index]!;
  const updated = remove(child, owner, shift + BITS, hash, key);
  if (updated === child) return node;
  if (updated === undefined) {
    if (node.children.length === 1) return undefined;
    // Keep the trie canonical: a branch left with one leaf or collision collapses into it.
    if (node.children.length === 2) {
      const other = node.children[1 - index]!;
      if (!(other instanceof Branch)) return other;
    }
    if (owner !== null && node.owner === owner) {
      node.children.splice(index, 1);
      node.bitmap &= ~bit;
      return node;
    }
    return new Branch(owner, node.bitmap & ~bit, arrayRemove(node.children, index));
  }
  if (node.children.length === 1 && !(updated instanceof Branch)) return updated;
  if (owner !== null && node.owner === owner) {
    node.children[index] = updated;
    return node;
  }
  return new Branch(owner, node.bitmap, arrayReplace(node.children, index, updated));
}

function forEachLeaf<V>(node: Node<V> | undefined, visit: (value: V, key: string) => void): void {
  if (node === undefined) return;
  if (node instanceof Leaf) visit(node.value, node.key);
  else if (node instanceof Branch) for (const child of node.children) forEachLeaf(child, visit);
  else for (const leaf of node.leaves) visit(leaf.value, leaf.key);
}

function* leaves<V>(node: Node<V> | undefined): Generator<Leaf<V>, void, undefined> {
  if (node === undefined) return;
  if (node instanceof Leaf) yield node;
  else if (node instanceof Branch) for (const child of node.children) yield* leaves(child);
  else yield* node.leaves;
}

/** Builds a map from a root; assigned inside HamtMap so its constructor stays private. */
let createMap: <V>(root: Node<V> | undefined, size: number) => HamtMap<V>;
/** Reads a map's root; assigned inside HamtMap for the same reason. */
let rootOf: <V>(map: HamtMap<V>) => Node<V> | undefined;

/** An immutable map from strings to values; every write returns a new map. */
export class HamtMap<V> implements Iterable<[string, V]> {
  private static readonly EMPTY = new HamtMap<never>(undefined, 0);

  private constructor(
    private readonly root: Node<V> | undefined,
    /** The number of entries, O(1). */
    readonly size: number,
  ) {}

  /** The empty map (one shared instance). */
  static empty<V>(): HamtMap<V> {
    return HamtMap.EMPTY as HamtMap<V>;
  }

  static {
    createMap = <V>(root: Node<V> | undefined, size: number): HamtMap<V> => (size === 0 ? HamtMap.empty() : new HamtMap(root, size));
    rootOf = <V>(map: HamtMap<V>): Node<V> | undefined => map.root;
  }

  /** The value under `key`, O(log32 n). */
  get(key: string): V | undefined {
    return lookup(this.root, hashString(key), key)?.value;
  }

  /** Whether `key` is present (even with an undefined value). */
  has(key: string): boolean {
    return lookup(this.root, hashString(key), key) !== undefined;
  }

  /** A map with `key` set; this map itself when the key already holds this very value. */
  set(key: string, value: V): HamtMap<V> {
    const root = insert(this.root, null, 0, new Leaf(hashString(key), key, value));
    return root === this.root ? this : new HamtMap(root, this.size + sizeDelta);
  }

  /** A map without `key`; this map itself when the key is absent. */
  delete(key: string): HamtMap<V> {
    sizeDelta = 0;
    const root = remove(this.root, null, 0, hashString(key), key);
    return root === this.root ? this : createMap(root, this.size + sizeDelta);
  }

  /** Visits every entry, in hash order; faster than the iterators. */
  forEach(visit: (value: V, key: string) => void): void {
    forEachLeaf(this.root, visit);
  }

  /** Keys in hash order (stable for a given set of keys, unrelated to insertion order). */
  *keys(): IterableIterator<string> {
    for (const leaf of leaves(this.root)) yield leaf.key;
  }

  *values(): IterableIterator<V> {
    for (const leaf of leaves(this.root)) yield leaf.value;
  }

  *entries(): IterableIterator<[string, V]> {
    for (const leaf of leaves(this.root)) yield [leaf.key, leaf.value];
  }

  [Symbol.iterator](): IterableIterator<[string, V]> {
    return this.entries();
  }

  /**
   * A mutable batch starting from this map. Its writes edit only nodes it created, so this map
   * stays unchanged, and a run of writes costs one path copy per touched node, not per write.
   */
  asTransient(): TransientHamtMap<V> {
    return new TransientHamtMap(this);
  }
}

/** A map being built in place; call `persistent()` once to seal it into a {@link HamtMap}. */
export class TransientHamtMap<V> {
  private owner: Owner | null = {};
  private root: Node<V> | undefined;
  private count: number;

  /** Starts a batch from `source` (same as `source.asTransient()`); `source` is never changed. */
  constructor(source: HamtMap<V>) {
    this.root = rootOf(source);
    this.count = source.size;
  }

  /** The number of entries so far. */
  get size(): number {
    return this.count;
  }

  /** The value under `key` in the batch as it stands. */
  get(key: string): V | undefined {
    return lookup(this.root, hashString(key), key)?.value;
  }

  /** Whether `key` is present in the batch as it stands. */
  has(key: string): boolean {
    return lookup(this.root, hashString(key), key) !== undefined;
  }

  /** Sets `key` in place. */
  set(key: string, value: V): this {
    this.root = insert(this.root, this.editor(), 0, new Leaf(hashString(key), key, value));
    this.count += sizeDelta;
    return this;
  }

  /** Removes `key`; true when it was present. */
  delete(key: string): boolean {
    sizeDelta = 0;
    this.root = remove(this.root, this.editor(), 0, hashString(key), key);
    this.count += sizeDelta;
    return sizeDelta !== 0;
  }

  /** Seals the batch. The transient refuses writes afterwards, so the result stays immutable. */
  persistent(): HamtMap<V> {
    this.editor();
    this.owner = null;
    return createMap(this.root, this.count);
  }

  private editor(): Owner {
    if (this.owner === null) throw new Error('TransientHamtMap used after persistent()');
    return this.owner;
  }
}

/** A key whose value differs between two maps, with its value in each (undefined where absent). */
export type HamtDifference<V> = readonly [key: string, before: V | undefined, after: V | undefined];

/**
 * The keys whose values differ between `older` and `newer` (compared by identity), lazily, in
 * the trie's order. Subtrees the two maps share are skipped without a look inside, so two versions
 * of one map that differ in k keys cost O(k log32 n) however large they are (unrelated maps cost
 * O(n)); the walk holds one frame per trie level, never a list of the differences.
 */
export function* diffHamt<V>(older: HamtMap<V>, newer: HamtMap<V>): Generator<HamtDifference<V>, void, undefined> {
  yield* diffNodes(rootOf(older), rootOf(newer), 0);
}

function* diffNodes<V>(a: Node<V> | undefined, b: Node<V> | undefined, shift: number): Generator<HamtDifference<V>, void, undefined> {
  if (a === b) return;
  if (a === undefined) {
    for (const leaf of leaves(b)) yield [leaf.key, undefined, leaf.value];
    return;
  }
  if (b === undefined) {
    for (const leaf of leaves(a)) yield [leaf.key, leaf.value, undefined];
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
  const before = a instanceof Leaf ? [a] : a.leaves;
  const after = b instanceof Leaf ? [b] : b.leaves;
  for (const old of before) {
    const now = after.find((leaf) => leaf.key === old.key);
    if (now === undefined) yield [old.key, old.value, undefined];
    else if (now.value !== old.value) yield [old.key, old.value, now.value];
  }
  for (const now of after) if (!before.some((leaf) => leaf.key === now.key)) yield [now.key, undefined, now.value];
}

/** The slots a node occupies at depth `shift`: a branch's bitmap, or the one slot of a leaf or collision. */
function slotsOf<V>(node: Node<V>, shift: number): number {
  return node instanceof Branch ? node.bitmap : 1 << ((node.hash >>> shift) & MASK);
}

function childIn<V>(node: Node<V>, bit: number, slots: number): Node<V> | undefined {
  if ((slots & bit) === 0) return undefined;
  return node instanceof Branch ? node.children[popcount(node.bitmap & (bit - 1))] : node;
}
