/**
 * The nodes of the persistent hash trie under `HamtMap` (`hamt.ts`), and the writes on them: a
 * lookup, and an insert and a remove that copy the path they change (persistent writes) or edit
 * in place the nodes their own batch created (a transient's writes). A key's 32-bit hash picks
 * one of 32 slots per level, 5 bits at a time.
 */

export const BITS = 5;
export const MASK = (1 << BITS) - 1;

/**
 * Where a write counts a key it adds: the map a persistent `set` builds (before anyone else sees
 * it), or a transient's batch, which counts removals too. So the size travels with the map being
 * built, never through state that every map in the process shares, and a write allocates nothing
 * for it. (A persistent `delete` needs no count: its root changes exactly when the key was there.)
 */
export interface SizeCount {
  size: number;
}

/**
 * One transient's batch of writes: its identity marks the nodes the batch created, which only it
 * edits in place, and it counts the batch's entries. Persistent writes have none (null).
 */
export class Batch implements SizeCount {
  constructor(public size: number) {}
}

/** Which batch may edit a node in place; null for nodes of persistent writes. */
export type Owner = Batch;

export class Leaf<V> {
  constructor(readonly hash: number, readonly key: string, readonly value: V) {}
}

/**
 * An entry of the trie: a `Leaf`, or, for the value `true`, the key string itself. A set is a map
 * to `true` (an index's keys per value), and its entries are most of what a cache's indexes hold:
 * a bare key costs the slot its parent already has, a `Leaf` an object of three fields more per
 * key. The hash of a bare key is computed again when needed, only where two entries meet.
 */
export type Entry<V> = Leaf<V> | string;

export function entryOf<V>(hash: number, key: string, value: V): Entry<V> {
  return value === true ? key : new Leaf(hash, key, value);
}

export function isEntry<V>(node: Node<V>): node is Entry<V> {
  return typeof node === 'string' || node instanceof Leaf;
}

export function entryKey<V>(entry: Entry<V>): string {
  return typeof entry === 'string' ? entry : entry.key;
}

export function entryValue<V>(entry: Entry<V>): V {
  return typeof entry === 'string' ? (true as V) : entry.value;
}

export function entryHash<V>(entry: Entry<V>): number {
  return typeof entry === 'string' ? hashString(entry) : entry.hash;
}

/** Children are packed: slot i of the 32 is present when bit i is set, at index popcount(below i). */
export class Branch<V> {
  constructor(public owner: Owner | null, public bitmap: number, public children: Node<V>[]) {}
}

/** Entries whose full 32-bit hashes are equal. */
export class Collision<V> {
  constructor(public owner: Owner | null, readonly hash: number, public leaves: Entry<V>[]) {}
}

export type Node<V> = Entry<V> | Branch<V> | Collision<V>;

/**
 * FNV-1a with a murmur3 finalizer: cheap, and spreads `namespace/name-123` keys across all bits.
 * The result is a signed 32-bit integer, which V8 keeps inline in each leaf as a small integer;
 * an unsigned one above 2^31 would be boxed in a heap number of its own, for half of all leaves.
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

export function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

export function lookup<V>(root: Node<V> | undefined, hash: number, key: string): Entry<V> | undefined {
  let node = root;
  let shift = 0;
  while (node !== undefined) {
    if (node instanceof Branch) {
      const bit = 1 << ((hash >>> shift) & MASK);
      if ((node.bitmap & bit) === 0) return undefined;
      node = node.children[popcount(node.bitmap & (bit - 1))];
      shift += BITS;
    } else if (node instanceof Collision) {
      if (node.hash !== hash) return undefined;
      for (const leaf of node.leaves) if (entryKey(leaf) === key) return leaf;
      return undefined;
    } else {
      return entryKey(node) === key ? node : undefined;
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

/**
 * For a transient's own nodes. Unlike `splice`, allocates no array of removed items, which a build
 * would pay per write (docs/performance-notes.md, "The persistent map").
 */
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

/** A node holding two entries with different keys (hashes `hashA`, `hashB`), at depth `shift`. */
function pair<V>(owner: Owner | null, shift: number, a: Entry<V>, hashA: number, b: Entry<V>, hashB: number): Node<V> {
  if (hashA === hashB) return new Collision(owner, hashA, [a, b]);
  const fragmentA = (hashA >>> shift) & MASK;
  const fragmentB = (hashB >>> shift) & MASK;
  if (fragmentA === fragmentB) return new Branch(owner, 1 << fragmentA, [pair(owner, shift + BITS, a, hashA, b, hashB)]);
  return new Branch(owner, (1 << fragmentA) | (1 << fragmentB), fragmentA < fragmentB ? [a, b] : [b, a]);
}

/** Returns the node with `leaf` (whose key hashes to `hash`) in it; counts a new key in `count`. */
export function insert<V>(node: Node<V> | undefined, owner: Owner | null, shift: number, hash: number, leaf: Entry<V>, count: SizeCount): Node<V> {
  if (node === undefined) {
    count.size++;
    return leaf;
  }
  if (node instanceof Branch) {
    const bit = 1 << ((hash >>> shift) & MASK);
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
    const updated = insert(child, owner, shift + BITS, hash, leaf, count);
    if (updated === child) return node;
    if (editable) {
      node.children[index] = updated;
      return node;
    }
    return new Branch(owner, node.bitmap, arrayReplace(node.children, index, updated));
  }
  const key = entryKey(leaf);
  if (!(node instanceof Collision)) {
    if (entryKey(node) === key) return entryValue(node) === entryValue(leaf) ? node : leaf;
    count.size++;
    return pair(owner, shift, node, entryHash(node), leaf, hash);
  }
  if (node.hash !== hash) {
    // A collision is position-independent; push it down beside the new leaf.
    const fragmentA = (node.hash >>> shift) & MASK;
    const fragmentB = (hash >>> shift) & MASK;
    if (fragmentA === fragmentB) return new Branch(owner, 1 << fragmentA, [insert(node, owner, shift + BITS, hash, leaf, count)]);
    count.size++;
    return new Branch(owner, (1 << fragmentA) | (1 << fragmentB), fragmentA < fragmentB ? [node, leaf] : [leaf, node]);
  }
  const at = node.leaves.findIndex((l) => entryKey(l) === key);
  if (at >= 0 && entryValue(node.leaves[at]!) === entryValue(leaf)) return node;
  if (at < 0) count.size++;
  const leaves = at >= 0 ? arrayReplace(node.leaves, at, leaf) : [...node.leaves, leaf];
  return new Collision(owner, node.hash, leaves);
}

/**
 * Returns the node without `key` (undefined when empty); a batch (`owner`) counts the removal.
 * Without a batch, the result is a new node exactly when `key` was present.
 */
export function remove<V>(node: Node<V> | undefined, owner: Owner | null, shift: number, hash: number, key: string): Node<V> | undefined {
  if (node === undefined) return undefined;
  if (isEntry(node)) {
    if (entryKey(node) !== key) return node;
    if (owner !== null) owner.size--;
    return undefined;
  }
  if (node instanceof Collision) {
    const at = node.hash === hash ? node.leaves.findIndex((l) => entryKey(l) === key) : -1;
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
