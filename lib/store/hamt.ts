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

/**
 * Where a write counts a key it adds: the map a persistent `set` builds (before anyone else sees
 * it), or a transient's batch, which counts removals too. So the size travels with the map being
 * built, never through state that every map in the process shares, and a write allocates nothing
 * for it. (A persistent `delete` needs no count: its root changes exactly when the key was there.)
 */
interface SizeCount {
  size: number;
}

/**
 * One transient's batch of writes: its identity marks the nodes the batch created, which only it
 * edits in place, and it counts the batch's entries. Persistent writes have none (null).
 */
class Batch implements SizeCount {
  constructor(public size: number) {}
}

/** Which batch may edit a node in place; null for nodes of persistent writes. */
type Owner = Batch;

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

/**
 * FNV-1a with a murmur3 finalizer: cheap, and spreads `namespace/name-123` keys across all bits.
 * The result is a signed 32-bit integer, which V8 keeps inline in each leaf as a small integer;
 * an unsigned one above 2^31 would be boxed in a 16-byte heap number, for half of all leaves.
 */
export function hashString(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
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

/** For a transient's own nodes. Unlike `splice`, allocates no array of removed items: a 100k build took 0.6x the time. */
function insertInPlace<T>(array: T[], index: number, item: T): void {
  for (let i = array.length; i > index; i--) array[i] = array[i - 1]!;
  array[index] = item;
}

function removeInPlace<T>(array: T[], index: number): void {
  for (let i = index + 1; i < array.length; i++) array[i - 1] = array[i]!;
  array.length--;
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

/** Returns the node with `leaf` in it; counts a new key in `count`. */
function insert<V>(node: Node<V> | undefined, owner: Owner | null, shift: number, leaf: Leaf<V>, count: SizeCount): Node<V> {
  if (node === undefined) {
    count.size++;
    return leaf;
  }
  if (node instanceof Branch) {
    const bit = 1 << ((leaf.hash >>> shift) & MASK);
    const index = popcount(node.bitmap & (bit - 1));
    const editable = owner !== null && node.owner === owner;
    if ((node.bitmap & bit) === 0) {
      count.size++;
      if (editable) {
        insertInPlace(node.children, index, leaf);
        node.bitmap |= bit;
        return node;
      }
      return new Branch(owner, node.bitmap | bit, arrayInsert(node.children, index, leaf));
    }
    const child = node.children[index]!;
    const updated = insert(child, owner, shift + BITS, leaf, count);
    if (updated === child) return node;
    if (editable) {
      node.children[index] = updated;
      return node;
    }
    return new Branch(owner, node.bitmap, arrayReplace(node.children, index, updated));
  }
  if (node instanceof Leaf) {
    if (node.key === leaf.key) return node.value === leaf.value ? node : leaf;
    count.size++;
    return pair(owner, shift, node, leaf);
  }
  if (node.hash !== leaf.hash) {
    // A collision is position-independent; push it down beside the new leaf.
    const fragmentA = (node.hash >>> shift) & MASK;
    const fragmentB = (leaf.hash >>> shift) & MASK;
    if (fragmentA === fragmentB) return new Branch(owner, 1 << fragmentA, [insert(node, owner, shift + BITS, leaf, count)]);
    count.size++;
    return new Branch(owner, (1 << fragmentA) | (1 << fragmentB), fragmentA < fragmentB ? [node, leaf] : [leaf, node]);
  }
  const at = node.leaves.findIndex((l) => l.key === leaf.key);
  if (at >= 0 && node.leaves[at]!.value === leaf.value) return node;
  if (at < 0) count.size++;
  const leaves = at >= 0 ? arrayReplace(node.leaves, at, leaf) : [...node.leaves, leaf];
  return new Collision(owner, node.hash, leaves);
}

/**
 * Returns the node without `key` (undefined when empty); a batch (`owner`) counts the removal.
 * Without a batch, the result is a new node exactly when `key` was present.
 */
function remove<V>(node: Node<V> | undefined, owner: Owner | null, shift: number, hash: number, key: string): Node<V> | undefined {
  if (node === undefined) return undefined;
  if (node instanceof Leaf) {
    if (node.key !== key) return node;
    if (owner !== null) owner.size--;
    return undefined;
  }
  if (node instanceof Collision) {
    const at = node.hash === hash ? node.leaves.findIndex((l) => l.key === key) : -1;
    if (at < 0) return node;
    if (owner !== null) owner.size--;
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
      removeInPlace(node.children, index);
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

/**
 * Walks the leaves depth-first with an explicit stack (the trie is at most 7 levels deep), one
 * projected item per `next()`: a generator with `yield*` per level cost several times more per
 * item (`bench/micro/persistentMap.ts`, the `entries` row).
 */
class LeafIterator<V, T> implements IterableIterator<T> {
  private readonly path: (Branch<V> | Collision<V>)[] = [];
  /** Per level of `path`, the index of the next child to visit. */
  private readonly positions: number[] = [];
  private rootLeaf: Leaf<V> | undefined;

  constructor(
    root: Node<V> | undefined,
    private readonly project: (leaf: Leaf<V>) => T,
  ) {
    if (root instanceof Leaf) this.rootLeaf = root;
    else if (root !== undefined) {
      this.path.push(root);
      this.positions.push(0);
    }
  }

  next(): IteratorResult<T, undefined> {
    const leaf = this.rootLeaf;
    if (leaf !== undefined) {
      this.rootLeaf = undefined;
      return { value: this.project(leaf), done: false };
    }
    for (let top = this.path.length - 1; top >= 0; top = this.path.length - 1) {
      const node = this.path[top]!;
      const items: readonly Node<V>[] = node instanceof Branch ? node.children : node.leaves;
      const at = this.positions[top]!;
      if (at === items.length) {
        this.path.pop();
        this.positions.pop();
        continue;
      }
      this.positions[top] = at + 1;
      const child = items[at]!;
      if (child instanceof Leaf) return { value: this.project(child), done: false };
      this.path.push(child);
      this.positions.push(0);
    }
    return { value: undefined, done: true };
  }

  [Symbol.iterator](): this {
    return this;
  }
}

const keyOf = <V>(leaf: Leaf<V>): string => leaf.key;
const valueOf = <V>(leaf: Leaf<V>): V => leaf.value;
const entryOf = <V>(leaf: Leaf<V>): [string, V] => [leaf.key, leaf.value];

/** An immutable map from strings to values; every write returns a new map. */
export class HamtMap<V> implements Iterable<[string, V]> {
  private static readonly EMPTY = new HamtMap<never>(undefined, 0);

  private constructor(
    /** Written only by the write that builds this map, before it returns it. */
    private root: Node<V> | undefined,
    /** The number of entries, O(1); counted by the write that builds the map (see SizeCount). */
    readonly size: number,
  ) {}

  /** The empty map (one shared instance). */
  static empty<V>(): HamtMap<V> {
    return HamtMap.EMPTY as HamtMap<V>;
  }

  /** The map over `root`; the shared empty map when there is nothing. Handed to transients to seal with. */
  private static fromRoot<V>(root: Node<V> | undefined, size: number): HamtMap<V> {
    return size === 0 ? HamtMap.empty() : new HamtMap(root, size);
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
    // The new map counts a new key itself: until it is returned, it belongs to this write alone.
    const next = new HamtMap<V>(undefined, this.size);
    const root = insert(this.root, null, 0, new Leaf(hashString(key), key, value), next);
    if (root === this.root) return this;
    next.root = root;
    return next;
  }

  /** A map without `key`; this map itself when the key is absent. */
  delete(key: string): HamtMap<V> {
    const root = remove(this.root, null, 0, hashString(key), key);
    return root === this.root ? this : HamtMap.fromRoot(root, this.size - 1);
  }

  /** Visits every entry, in hash order; faster than the iterators. */
  forEach(visit: (value: V, key: string) => void): void {
    forEachLeaf(this.root, visit);
  }

  /** Keys in hash order (stable for a given set of keys, unrelated to insertion order). */
  keys(): IterableIterator<string> {
    return new LeafIterator(this.root, keyOf);
  }

  values(): IterableIterator<V> {
    return new LeafIterator(this.root, valueOf<V>);
  }

  entries(): IterableIterator<[string, V]> {
    return new LeafIterator(this.root, entryOf<V>);
  }

  [Symbol.iterator](): IterableIterator<[string, V]> {
    return this.entries();
  }

  /**
   * A mutable batch starting from this map. Its writes edit only nodes it created, so this map
   * stays unchanged, and a run of writes costs one path copy per touched node, not per write.
   */
  asTransient(): TransientHamtMap<V> {
    return new Transient(this.root, this.size, HamtMap.fromRoot);
  }
}

/** A map being built in place; call `persistent()` once to seal it into a {@link HamtMap}. */
export interface TransientHamtMap<V> {
  /** The number of entries so far. */
  readonly size: number;
  /** The value under `key` in the batch as it stands. */
  get(key: string): V | undefined;
  /** Whether `key` is present in the batch as it stands. */
  has(key: string): boolean;
  /** Sets `key` in place. */
  set(key: string, value: V): this;
  /** Removes `key`; true when it was present. */
  delete(key: string): boolean;
  /** Seals the batch. The transient refuses writes afterwards, so the result stays immutable. */
  persistent(): HamtMap<V>;
}

class Transient<V> implements TransientHamtMap<V> {
  private readonly batch: Batch;
  private sealed = false;

  constructor(
    private root: Node<V> | undefined,
    size: number,
    private readonly seal: (root: Node<V> | undefined, size: number) => HamtMap<V>,
  ) {
    this.batch = new Batch(size);
  }

  get size(): number {
    return this.batch.size;
  }

  get(key: string): V | undefined {
    return lookup(this.root, hashString(key), key)?.value;
  }

  has(key: string): boolean {
    return lookup(this.root, hashString(key), key) !== undefined;
  }

  set(key: string, value: V): this {
    const batch = this.editor();
    this.root = insert(this.root, batch, 0, new Leaf(hashString(key), key, value), batch);
    return this;
  }

  delete(key: string): boolean {
    const before = this.batch.size;
    this.root = remove(this.root, this.editor(), 0, hashString(key), key);
    return this.batch.size !== before;
  }

  persistent(): HamtMap<V> {
    this.editor();
    this.sealed = true;
    return this.seal(this.root, this.batch.size);
  }

  private editor(): Batch {
    if (this.sealed) throw new Error('TransientHamtMap used after persistent()');
    return this.batch;
  }
}

/** The trie under a map, for the walks below (TypeScript lets the module read the private field by name). */
function rootOf<V>(map: HamtMap<V>): Node<V> | undefined {
  return map['root'];
}

/** Every leaf under `node`, depth-first. */
function leaves<V>(node: Node<V> | undefined): IterableIterator<Leaf<V>> {
  return new LeafIterator(node, (leaf: Leaf<V>) => leaf);
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
