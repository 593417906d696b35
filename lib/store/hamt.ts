/**
 * A persistent hash array mapped trie (HAMT) from string keys to values: the structure under every
 * snapshot. `set` and `delete` return a new map sharing all but one root-to-leaf path with the old
 * one, so a change costs O(log32 n) time and allocation (about four small arrays at 100k keys),
 * and every older version stays valid and unchanged.
 *
 * A transient ({@link HamtMap.asTransient}) edits nodes it created itself in place, so building
 * a 100k-entry map from a relist copies no paths; `persistent()` seals it.
 */
import { Batch, entryKey, entryOf, entryValue, hashString, insert, lookup, remove, type Entry, type Node } from './hamtNodes';
import { forEachLeaf, LeafIterator } from './hamtWalk';

export { hashString } from './hamtNodes';
import { diffTries, type HamtDifference } from './hamtDiff';

export type { HamtDifference } from './hamtDiff';

const pairOf = <V>(entry: Entry<V>): [string, V] => [entryKey(entry), entryValue(entry)];

/** The value of the entry under `key`, or undefined. */
function valueAt<V>(root: Node<V> | undefined, key: string): V | undefined {
  const entry = lookup(root, hashString(key), key);
  return entry === undefined ? undefined : entryValue(entry);
}

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
    return valueAt(this.root, key);
  }

  /** Whether `key` is present (even with an undefined value). */
  has(key: string): boolean {
    return lookup(this.root, hashString(key), key) !== undefined;
  }

  /** A map with `key` set; this map itself when the key already holds this very value. */
  set(key: string, value: V): HamtMap<V> {
    // The new map counts a new key itself: until it is returned, it belongs to this write alone.
    const next = new HamtMap<V>(undefined, this.size);
    const hash = hashString(key);
    const root = insert(this.root, null, 0, hash, entryOf(hash, key, value), next);
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
    return new LeafIterator(this.root, entryKey);
  }

  values(): IterableIterator<V> {
    return new LeafIterator(this.root, entryValue<V>);
  }

  entries(): IterableIterator<[string, V]> {
    return new LeafIterator(this.root, pairOf<V>);
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

/**
 * The keys whose values differ between `older` and `newer` (compared by identity), lazily, in
 * the trie's order. Subtrees the two maps share are skipped without a look inside, so two versions
 * of one map that differ in k keys cost O(k log32 n) however large they are (unrelated maps cost
 * O(n)); the walk holds one frame per trie level, never a list of the differences.
 */
export function diffHamt<V>(older: HamtMap<V>, newer: HamtMap<V>): Generator<HamtDifference<V>, void, undefined> {
  // A module-level reader of the private field, by name, which TypeScript allows.
  return diffTries(older['root'], newer['root']);
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
    return valueAt(this.root, key);
  }

  has(key: string): boolean {
    return lookup(this.root, hashString(key), key) !== undefined;
  }

  set(key: string, value: V): this {
    const batch = this.editor();
    const hash = hashString(key);
    this.root = insert(this.root, batch, 0, hash, entryOf(hash, key, value), batch);
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
