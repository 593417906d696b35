/**
 * The API of `lib/store/hamt` (`HamtMap`, `TransientHamtMap`) on top of immutable.js's `Map`, so
 * the informer can run on the maintained library without a switch in the product code:
 * `useImmutableMap.ts` puts this module in place of `lib/store/hamt` before anything loads it.
 *
 * Each map is one small wrapper around an `immutable.Map` (ours is one wrapper around a root
 * node too); a transient is `asMutable()` and seals with `asImmutable()`, as `withMutations` does.
 */
import { Map as ImmutableMap } from 'immutable';

/** An immutable map from strings to values, backed by `immutable.Map`. */
export class HamtMap<V> implements Iterable<[string, V]> {
  private static readonly EMPTY = new HamtMap<never>(ImmutableMap<string, never>());

  private constructor(private readonly map: ImmutableMap<string, V>) {}

  static empty<V>(): HamtMap<V> {
    return HamtMap.EMPTY as HamtMap<V>;
  }

  /** Wraps a sealed immutable map; used by transients. */
  static of<V>(map: ImmutableMap<string, V>): HamtMap<V> {
    return map.size === 0 ? HamtMap.empty() : new HamtMap(map);
  }

  get size(): number {
    return this.map.size;
  }

  get(key: string): V | undefined {
    return this.map.get(key);
  }

  has(key: string): boolean {
    return this.map.has(key);
  }

  set(key: string, value: V): HamtMap<V> {
    const next = this.map.set(key, value);
    return next === this.map ? this : new HamtMap(next);
  }

  delete(key: string): HamtMap<V> {
    const next = this.map.delete(key);
    return next === this.map ? this : HamtMap.of(next);
  }

  forEach(visit: (value: V, key: string) => void): void {
    // immutable's forEach stops when the callback returns false; ours never stops.
    this.map.forEach((value, key) => {
      visit(value, key);
    });
  }

  keys(): IterableIterator<string> {
    return this.map.keys();
  }

  values(): IterableIterator<V> {
    return this.map.values();
  }

  entries(): IterableIterator<[string, V]> {
    return this.map.entries();
  }

  [Symbol.iterator](): IterableIterator<[string, V]> {
    return this.map.entries();
  }

  asTransient(): TransientHamtMap<V> {
    return new Transient(this.map.asMutable());
  }
}

/** A key whose value differs between two maps, as `lib/store/hamt` declares it. */
export type HamtDifference<V> = readonly [key: string, before: V | undefined, after: V | undefined];

/**
 * `diffHamt` on immutable.js, which exposes no walk of the structure two versions share: this one
 * looks up every key of both maps, O(n) where ours skips shared subtrees and costs O(k log32 n).
 */
export function* diffHamt<V>(older: HamtMap<V>, newer: HamtMap<V>): Generator<HamtDifference<V>, void, undefined> {
  if (older === newer) return;
  for (const [key, before] of older) {
    if (!newer.has(key)) yield [key, before, undefined];
    else if (newer.get(key) !== before) yield [key, before, newer.get(key)];
  }
  for (const [key, after] of newer) if (!older.has(key)) yield [key, undefined, after];
}

/** The transient's API, as `lib/store/hamt` declares it. */
export interface TransientHamtMap<V> {
  readonly size: number;
  get(key: string): V | undefined;
  has(key: string): boolean;
  set(key: string, value: V): this;
  delete(key: string): boolean;
  persistent(): HamtMap<V>;
}

class Transient<V> implements TransientHamtMap<V> {
  private sealed = false;

  constructor(private readonly map: ImmutableMap<string, V>) {}

  get size(): number {
    return this.map.size;
  }

  get(key: string): V | undefined {
    return this.map.get(key);
  }

  has(key: string): boolean {
    return this.map.has(key);
  }

  set(key: string, value: V): this {
    this.writable().set(key, value);
    return this;
  }

  delete(key: string): boolean {
    const before = this.map.size;
    this.writable().delete(key);
    return this.map.size !== before;
  }

  persistent(): HamtMap<V> {
    this.writable();
    this.sealed = true;
    return HamtMap.of(this.map.asImmutable());
  }

  private writable(): ImmutableMap<string, V> {
    if (this.sealed) throw new Error('TransientHamtMap used after persistent()');
    return this.map;
  }
}
