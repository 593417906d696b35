/**
 * The immutable, structurally shared Snapshot the indexer emits. Objects live in a HAMT keyed by
 * cache key; each index is a HAMT from index value to a HAMT-set of keys (a posting), and empty
 * postings are removed. One change rewrites one path of the object trie plus, only when the
 * object's index values changed, one path per touched posting: O(log n), whatever the size.
 */
import type { Change } from './change';
import type { NumberedSnapshot } from './changeSequence';
import { diffHamt, HamtMap, TransientHamtMap, type HamtDifference } from './hamt';
import { namespaceIndex, type IndexFunc } from './indexers';
import type { KubeObject } from '../base/object';
import { parseLabelSelector } from './selector';
import type { ListQuery, Snapshot } from './snapshot';

/** Asked for an index the indexer was not configured with. */
export class IndexNotFoundError extends Error {
  readonly indexName: string;

  constructor(indexName: string, known: readonly string[]) {
    super(`index ${JSON.stringify(indexName)} does not exist (configured: ${known.map((n) => JSON.stringify(n)).join(', ') || 'none'})`);
    this.name = 'IndexNotFoundError';
    this.indexName = indexName;
  }
}

type KeySet = HamtMap<true>;
type Postings = HamtMap<KeySet>;

/** The configured indexes, fixed for the life of one indexer subscription. */
class IndexSchema<T extends KubeObject> {
  readonly names: readonly string[];
  readonly functions: readonly IndexFunc<T>[];
  /** Which index `list({ namespace })` may use: the position of the built-in namespace index. */
  readonly namespacePosition: number;
  private readonly positions: ReadonlyMap<string, number>;

  constructor(indexers: Readonly<Record<string, IndexFunc<T>>>) {
    this.names = Object.keys(indexers);
    this.functions = this.names.map((name) => indexers[name]!);
    this.positions = new Map(this.names.map((name, position) => [name, position]));
    this.namespacePosition = this.functions.findIndex((fn) => (fn as IndexFunc) === namespaceIndex);
  }

  position(name: string): number {
    const position = this.positions.get(name);
    if (position === undefined) throw new IndexNotFoundError(name, this.names);
    return position;
  }

  /** The object's index values with non-strings dropped; duplicates are harmless downstream. */
  valuesOf(position: number, object: T | undefined): readonly string[] {
    if (object === undefined) return NO_VALUES;
    const values = this.functions[position]!(object);
    for (const value of values) if (typeof value !== 'string') return values.filter((v) => typeof v === 'string');
    return values;
  }
}

const NO_VALUES: readonly string[] = Object.freeze([]);
const NO_CHANGES: readonly never[] = Object.freeze([]);
const EMPTY_KEYS: KeySet = HamtMap.empty();

function sameValues(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function withPosting(postings: Postings, value: string, key: string): Postings {
  return postings.set(value, (postings.get(value) ?? EMPTY_KEYS).set(key, true));
}

function withoutPosting(postings: Postings, value: string, key: string): Postings {
  const keys = postings.get(value);
  if (keys === undefined) return postings;
  const remaining = keys.delete(key);
  return remaining.size === 0 ? postings.delete(value) : postings.set(value, remaining);
}

/** One immutable state of the cache. Build the first with {@link IndexedSnapshot.empty}. */
export class IndexedSnapshot<T extends KubeObject = KubeObject> implements Snapshot<T>, NumberedSnapshot<T> {
  /** This snapshot's place in its indexer's stream (see `ChangeSequencer`); -1 until numbered. */
  private position = -1;
  private touched = -1;
  /** This state without its changes, made once when first asked for (see {@link settled}). */
  private settledTwin: IndexedSnapshot<T> | undefined;

  private constructor(
    private readonly schema: IndexSchema<T>,
    private readonly objects: HamtMap<T>,
    private readonly postings: readonly Postings[],
    readonly resourceVersion: string,
    readonly synced: boolean,
    readonly changes: readonly Change<T>[],
  ) {}

  /** An empty, unsynced snapshot with these indexes. */
  static empty<T extends KubeObject>(indexers: Readonly<Record<string, IndexFunc<T>>>): IndexedSnapshot<T> {
    const schema = new IndexSchema(indexers);
    return new IndexedSnapshot(schema, HamtMap.empty(), schema.names.map(() => HamtMap.empty()), '', false, NO_CHANGES);
  }

  get size(): number {
    return this.objects.size;
  }

  /** This snapshot's number in its indexer's stream (internal, see `ChangeSequencer`); -1 when not numbered. */
  get sequence(): number {
    return this.position;
  }

  /** The latest earlier snapshot that changed a key this one changes (internal, see `ChangeSequencer`). */
  get touchedSince(): number {
    return this.touched;
  }

  /** Records this snapshot's place in its indexer's stream, once, before it is emitted (internal). */
  numbered(sequence: number, touchedSince: number): void {
    this.position = sequence;
    this.touched = touchedSince;
  }

  /**
   * This state without the changes that produced it, numbered as this snapshot is: what a stream
   * keeps once the changes are delivered. The latest snapshot is held for as long as the cache is
   * quiet (to replay to late subscribers, to resync from, to edit next), and a relist's changes are
   * one per object: holding them would keep a second entry per object alive after the relist.
   * Made once, so every holder keeps the same twin (internal).
   */
  settled(): IndexedSnapshot<T> {
    if (this.changes.length === 0) return this;
    if (this.settledTwin === undefined) {
      const twin = new IndexedSnapshot(this.schema, this.objects, this.postings, this.resourceVersion, this.synced, NO_CHANGES);
      twin.numbered(this.position, this.touched);
      this.settledTwin = twin;
    }
    return this.settledTwin;
  }

  get(key: string): T | undefined {
    return this.objects.get(key);
  }

  has(key: string): boolean {
    return this.objects.has(key);
  }

  keys(): IterableIterator<string> {
    return this.objects.keys();
  }

  values(): IterableIterator<T> {
    return this.objects.values();
  }

  /** Visits every object without allocating an iterator; order is the trie's, not insertion. */
  forEach(visit: (object: T, key: string) => void): void {
    this.objects.forEach(visit);
  }

  /**
   * All objects, or those in `query.namespace` ('' means all namespaces, as in Kubernetes)
   * matching `query.labelSelector`. A namespace query reads the namespace index when the
   * built-in one is configured (O(objects in the namespace)); otherwise it filters.
   *
   * @throws SelectorSyntaxError when the label selector does not parse.
   */
  list(query?: ListQuery): T[] {
    const selector = query?.labelSelector ? parseLabelSelector(query.labelSelector) : undefined;
    const accept = selector && selector.requirements.length > 0 ? (o: T) => selector.matches(o.metadata.labels) : undefined;
    const namespace = query?.namespace;
    const result: T[] = [];
    if (namespace) {
      if (this.schema.namespacePosition >= 0) {
        this.postings[this.schema.namespacePosition]!.get(namespace)?.forEach((_, key) => {
          const object = this.objects.get(key)!;
          if (accept === undefined || accept(object)) result.push(object);
        });
      } else {
        this.objects.forEach((object) => {
          if ((object.metadata.namespace ?? '') === namespace && (accept === undefined || accept(object))) result.push(object);
        });
      }
      return result;
    }
    this.objects.forEach((object) => {
      if (accept === undefined || accept(object)) result.push(object);
    });
    return result;
  }

  /**
   * The keys of the objects in `namespace`: from the built-in namespace index when it is
   * configured (O(objects in the namespace)), else by a scan of every object. Internal: a relist
   * of one namespace reads it (see `NamespaceScope`).
   */
  keysInNamespace(namespace: string): string[] {
    const keys: string[] = [];
    if (this.schema.namespacePosition >= 0) {
      this.postings[this.schema.namespacePosition]!.get(namespace)?.forEach((_, key) => keys.push(key));
    } else {
      this.objects.forEach((object, key) => {
        if ((object.metadata.namespace ?? '') === namespace) keys.push(key);
      });
    }
    return keys;
  }

  /** @throws IndexNotFoundError for an index the indexer was not given. */
  byIndex(indexName: string, value: string): T[] {
    const result: T[] = [];
    this.postings[this.schema.position(indexName)]!.get(value)?.forEach((_, key) => result.push(this.objects.get(key)!));
    return result;
  }

  /** @throws IndexNotFoundError for an index the indexer was not given. */
  indexKeys(indexName: string, value: string): string[] {
    const keys = this.postings[this.schema.position(indexName)]!.get(value);
    return keys === undefined ? [] : [...keys.keys()];
  }

  /** @throws IndexNotFoundError for an index the indexer was not given. */
  indexValues(indexName: string): string[] {
    return [...this.postings[this.schema.position(indexName)]!.keys()];
  }

  /**
   * The keys whose objects differ between `older` and this snapshot (see {@link differences}).
   * Snapshots of one indexer share every subtree of their tries that no change touched, so this
   * costs O(k log n) for k differing keys, whatever the size of the cache.
   */
  differencesFrom(older: Snapshot<T>): Generator<ObjectDifference<T>, void, undefined> {
    return older instanceof IndexedSnapshot ? diffHamt(older.objects, this.objects) : differencesByKey(older, this);
  }

  /**
   * An edit of this state: puts and removes applied in place to a transient copy of its trie (one
   * path copy per touched node, however many writes cross it), sealed once into a snapshot that
   * shares every untouched subtree with this one. This snapshot never changes.
   */
  edit(): SnapshotEdit<T> {
    return new Edit(this.schema, this.objects, this.postings, this.synced, (objects, postings, resourceVersion, synced, changes) => new IndexedSnapshot(this.schema, objects, postings, resourceVersion, synced, changes));
  }

  /** An empty builder with the same indexes, to fill from a relist. */
  builder(): SnapshotBuilder<T> {
    return new Builder(this.schema, (objects, postings, resourceVersion, changes) => new IndexedSnapshot(this.schema, objects, postings, resourceVersion, true, changes));
  }
}

/**
 * `postings` with `key` moved from the index values of `previous` to those of `next`; the same
 * array when no value changed (the usual update). Throws before returning when an index function does.
 */
function reindexed<T extends KubeObject>(schema: IndexSchema<T>, postings: readonly Postings[], key: string, previous: T | undefined, next: T | undefined): readonly Postings[] {
  let updated: Postings[] | undefined;
  for (let position = 0; position < postings.length; position++) {
    const before = schema.valuesOf(position, previous);
    const after = schema.valuesOf(position, next);
    if (sameValues(before, after)) continue;
    let posting = postings[position]!;
    for (const value of before) if (!after.includes(value)) posting = withoutPosting(posting, value, key);
    for (const value of after) if (!before.includes(value)) posting = withPosting(posting, value, key);
    updated ??= postings.slice();
    updated[position] = posting;
  }
  return updated ?? postings;
}

/**
 * Writes to a snapshot's state in place, for a batch of watch deltas: `finish` seals them into one
 * snapshot. Reads see the writes so far. Nothing it writes is visible before `finish`, and the
 * snapshot it started from never changes.
 */
export interface SnapshotEdit<T extends KubeObject = KubeObject> {
  get(key: string): T | undefined;
  /** Stores `object` under `key` (`previous` is what the edit holds there, for the indexes); all or nothing. */
  put(key: string, previous: T | undefined, object: T): void;
  /** Drops `key` (`previous` is what the edit holds there, for the indexes); all or nothing. */
  remove(key: string, previous: T): void;
  /**
   * Seals the edit (it refuses writes afterwards) into a snapshot carrying `changes`, synced as
   * the snapshot it started from unless `synced` says otherwise.
   */
  finish(resourceVersion: string, changes: readonly Change<T>[], synced?: boolean): IndexedSnapshot<T>;
}

type SealEdit<T extends KubeObject> = (objects: HamtMap<T>, postings: readonly Postings[], resourceVersion: string, synced: boolean, changes: readonly Change<T>[]) => IndexedSnapshot<T>;

class Edit<T extends KubeObject> implements SnapshotEdit<T> {
  private readonly objects: TransientHamtMap<T>;

  constructor(
    private readonly schema: IndexSchema<T>,
    objects: HamtMap<T>,
    /** Persistent: an index value changes on few updates, so a path copy per such write is cheap enough. */
    private postings: readonly Postings[],
    private readonly synced: boolean,
    private readonly seal: SealEdit<T>,
  ) {
    this.objects = objects.asTransient();
  }

  get(key: string): T | undefined {
    return this.objects.get(key);
  }

  put(key: string, previous: T | undefined, object: T): void {
    // The index first: an index function that throws leaves the edit as it was.
    this.postings = reindexed(this.schema, this.postings, key, previous, object);
    this.objects.set(key, object);
  }

  remove(key: string, previous: T): void {
    this.postings = reindexed(this.schema, this.postings, key, previous, undefined);
    this.objects.delete(key);
  }

  finish(resourceVersion: string, changes: readonly Change<T>[], synced = this.synced): IndexedSnapshot<T> {
    return this.seal(this.objects.persistent(), this.postings, resourceVersion, synced, changes);
  }
}

/** A key whose object differs between two snapshots, with its object in each (undefined where absent). */
export type ObjectDifference<T extends KubeObject = KubeObject> = HamtDifference<T>;

/**
 * The keys whose objects differ between two snapshots (compared by identity: the indexer keeps an
 * object's instance until it changes), lazily, in no particular order. Between snapshots of one
 * indexer it skips what they share (O(k log n) for k differences); any other pair of `Snapshot`s
 * is compared key by key, O(n). Internal: `handle()` catches a lagging handler up with it.
 */
export function differences<T extends KubeObject>(older: Snapshot<T>, newer: Snapshot<T>): Generator<ObjectDifference<T>, void, undefined> {
  return newer instanceof IndexedSnapshot ? newer.differencesFrom(older) : differencesByKey(older, newer);
}

function* differencesByKey<T extends KubeObject>(older: Snapshot<T>, newer: Snapshot<T>): Generator<ObjectDifference<T>, void, undefined> {
  for (const key of older.keys()) {
    const before = older.get(key);
    const after = newer.get(key);
    if (before !== after) yield [key, before, after];
  }
  for (const key of newer.keys()) if (!older.has(key)) yield [key, undefined, newer.get(key)];
}

type Seal<T extends KubeObject> = (objects: HamtMap<T>, postings: readonly Postings[], resourceVersion: string, changes: readonly Change<T>[]) => IndexedSnapshot<T>;

/**
 * Fills a new store in place from a relist, page by page, without copying trie paths per object;
 * `finish` seals it into a synced snapshot. Nothing it builds is visible before then.
 */
export interface SnapshotBuilder<T extends KubeObject = KubeObject> {
  readonly size: number;
  get(key: string): T | undefined;
  has(key: string): boolean;
  /** Stores `object` under `key`, replacing (and unindexing) anything put there before; all or nothing. */
  put(key: string, object: T): void;
  /** Drops (and unindexes) what was put under `key`; false when nothing was. */
  remove(key: string): boolean;
  finish(resourceVersion: string, changes: readonly Change<T>[]): IndexedSnapshot<T>;
}

class Builder<T extends KubeObject> implements SnapshotBuilder<T> {
  private readonly objects: TransientHamtMap<T> = HamtMap.empty<T>().asTransient();
  /** Per index: value → keys. Local to the build, so a plain Map is the right tool here. */
  private readonly postings: Map<string, TransientHamtMap<true>>[];
  /** Scratch: the index values of the object being put, one entry per index. */
  private readonly values: (readonly string[])[];

  constructor(
    private readonly schema: IndexSchema<T>,
    private readonly seal: Seal<T>,
  ) {
    this.postings = schema.names.map(() => new Map());
    this.values = schema.names.map(() => NO_VALUES);
  }

  get size(): number {
    return this.objects.size;
  }

  get(key: string): T | undefined {
    return this.objects.get(key);
  }

  has(key: string): boolean {
    return this.objects.has(key);
  }

  put(key: string, object: T): void {
    const previous = this.objects.get(key);
    // Every index value before any write: an index function that throws leaves the builder as it was.
    const values = this.values;
    for (let position = 0; position < values.length; position++) values[position] = this.schema.valuesOf(position, object);
    this.objects.set(key, object);
    this.reindex(key, previous, values);
  }

  remove(key: string): boolean {
    const previous = this.objects.get(key);
    if (previous === undefined) return false;
    this.objects.delete(key);
    this.reindex(key, previous, undefined);
    return true;
  }

  /** Moves `key` from the index values of `previous` to `values` (per index; none when undefined). */
  private reindex(key: string, previous: T | undefined, values: readonly (readonly string[])[] | undefined): void {
    for (let position = 0; position < this.postings.length; position++) {
      const byValue = this.postings[position]!;
      for (const value of this.schema.valuesOf(position, previous)) {
        const keys = byValue.get(value);
        if (keys !== undefined && keys.delete(key) && keys.size === 0) byValue.delete(value);
      }
      for (const value of values?.[position] ?? NO_VALUES) {
        let keys = byValue.get(value);
        if (keys === undefined) byValue.set(value, (keys = HamtMap.empty<true>().asTransient()));
        keys.set(key, true);
      }
    }
  }

  finish(resourceVersion: string, changes: readonly Change<T>[]): IndexedSnapshot<T> {
    const postings = this.postings.map((byValue) => {
      const sealed = HamtMap.empty<KeySet>().asTransient();
      for (const [value, keys] of byValue) sealed.set(value, keys.persistent());
      return sealed.persistent();
    });
    return this.seal(this.objects.persistent(), postings, resourceVersion, changes);
  }
}

/**
 * What to keep of a snapshot once its changes are delivered: the same state without them (see
 * {@link IndexedSnapshot.settled}); a snapshot of another kind is kept as it is.
 */
export function settledSnapshot<T extends KubeObject>(snapshot: Snapshot<T>): Snapshot<T> {
  return snapshot instanceof IndexedSnapshot ? (snapshot as IndexedSnapshot<T>).settled() : snapshot;
}
