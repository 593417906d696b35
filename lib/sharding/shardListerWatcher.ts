import { filter, map, type Observable } from 'rxjs';
import type { ListerWatcher, ListOptions, ListPage, WatchEvent, WatchOptions } from '../sources/listerWatcher';
import type { KubeObject } from '../base/object';
import { bucketOf, shardSelectorOf, type ShardField } from './buckets';
import { fnv1a64 } from './fnv1a64';

/**
 * The list and watch of a set of buckets: what a sharded informer's reflector runs between two
 * changes of the buckets it owns.
 *
 * - `server`: sends KEP-5866's `shardSelector` for the buckets (adjacent ones merged) and lists in
 *   pages, never as a streaming list, since only a list echoes `metadata.shardInfo`. A list whose
 *   pages do not echo exactly the selector sent came from a server that ignored it (before 1.36, or
 *   the `ShardedListAndWatch` gate off): `onIgnored` is told, and the owner switches to `client`.
 * - `client`: lists and watches everything and keeps what hashes into the buckets.
 *
 * Either way every object is checked against the buckets after decoding (one FNV-1a per object,
 * small beside its JSON parse), so a server that ignores the selector never leaks another
 * member's objects into this cache. BOOKMARKs always pass: they carry no key (kube-state-metrics
 * loses them on every shard but one by hashing them).
 */

/** What a sharded informer hashes: the field names KEP-5866 filters on. */
export type ShardKey = 'uid' | 'namespace';

/** The shard selector field of a key. */
export function shardFieldOf(key: ShardKey): ShardField {
  return key === 'uid' ? 'object.metadata.uid' : 'object.metadata.namespace';
}

/** The bucket of `object` among `count`, by `key` (a missing field hashes as ''). */
export function objectBucket(object: KubeObject, key: ShardKey, count: number): number {
  return bucketOf(fnv1a64((key === 'uid' ? object.metadata.uid : object.metadata.namespace) ?? ''), count);
}

/** Options of {@link shardListerWatcher}. */
export interface ShardListerWatcherOptions {
  /** The buckets to keep; not empty. */
  readonly buckets: readonly number[];
  /** The ring's bucket count. */
  readonly count: number;
  readonly key: ShardKey;
  /** `server` sends the selector (and still checks each object); `client` only checks. */
  readonly filtering: 'server' | 'client';
  /** A list came back without the echo of the selector sent: the server ignored it. */
  readonly onIgnored: (echoed: string | undefined, sent: string) => void;
}

/** `inner` narrowed to `options.buckets`. */
export function shardListerWatcher<T extends KubeObject>(inner: ListerWatcher<T>, options: ShardListerWatcherOptions): ListerWatcher<T> {
  const { count, key, filtering, onIgnored } = options;
  const wanted = new Set(options.buckets);
  const keep = (object: T): boolean => wanted.has(objectBucket(object, key, count));
  if (filtering === 'client') {
    return {
      supportsStreamingList: inner.supportsStreamingList,
      list: (listOptions: ListOptions): Observable<ListPage<T>> => inner.list(listOptions).pipe(map((page) => ({ ...page, items: page.items.filter(keep) }))),
      watch: (watchOptions: WatchOptions): Observable<WatchEvent<T>> => inner.watch(watchOptions).pipe(filter((event) => event.type === 'BOOKMARK' || keep(event.object))),
    };
  }
  const shardSelector = shardSelectorOf(options.buckets, count, shardFieldOf(key));
  return {
    supportsStreamingList: false,
    list: (listOptions: ListOptions): Observable<ListPage<T>> => {
      let told = false;
      return inner.list({ ...listOptions, shardSelector }).pipe(
        map((page) => {
          if (!told && page.shardInfo?.selector !== shardSelector) {
            told = true;
            onIgnored(page.shardInfo?.selector, shardSelector);
          }
          return { ...page, items: page.items.filter(keep) };
        }),
      );
    },
    watch: (watchOptions: WatchOptions): Observable<WatchEvent<T>> =>
      inner.watch({ ...watchOptions, shardSelector }).pipe(filter((event) => event.type === 'BOOKMARK' || keep(event.object))),
  };
}
