import { silentLogger } from '../../lib/base/logger';
import { VirtualAction, VirtualTimeScheduler, type Subscription } from 'rxjs';
import { leases, pods, type Pod } from '../../lib/resources/builtins';
import { objectBucket } from '../../lib/sharding/shardListerWatcher';
import { shardedInformerFrom, type ShardedInformer, type ShardFilterMode } from '../../lib/sharding/shardedInformer';
import { RING_LABEL } from '../../lib/sharding/ringLease';
import type { Change } from '../../lib/store/change';
import type { Snapshot } from '../../lib/store/snapshot';
import { createClusterStore, storeLeaseClient, storeListerWatcher, type ClusterStore } from '../../apiserver/src';

/** Sharded informers in virtual time over one store: their caches split the objects between them. */

const RING = { name: 'shop', namespace: 'default' } as const;
const TIMINGS = { leaseDuration: 15_000, renewDeadline: 10_000, retryPeriod: 2_000 } as const;
const BUCKETS = 16;

interface Replica {
  readonly id: string;
  readonly shard: ShardedInformer<Pod>;
  latest: Snapshot<Pod> | undefined;
  readonly modes: ShardFilterMode[];
  readonly running: Subscription;
}

function setUp(mode: ShardFilterMode, buckets = BUCKETS) {
  const time = new VirtualTimeScheduler(VirtualAction, Infinity);
  const store: ClusterStore = createClusterStore();
  for (let i = 0; i < 60; i++) store.create(pods, { metadata: { name: `pod-${i}`, namespace: `ns-${i % 3}` } });
  const replicas: Replica[] = [];
  const add = (id: string): Replica => {
    const shard = shardedInformerFrom<Pod>(
      {
        listerWatcher: storeListerWatcher(store, pods, { scheduler: time, latency: 10 }),
        leaseClient: storeLeaseClient(store, { scheduler: time, latency: 10 }),
        ringListerWatcher: storeListerWatcher(store, leases, { scheduler: time, latency: 10, namespace: RING.namespace, labelSelector: `${RING_LABEL}=${RING.name}` }),
      },
      // The fallback to client-side filtering is read from filtering$, not from its warning.
      { ring: RING, identity: id, buckets, mode, scheduler: time, logger: silentLogger, ...TIMINGS },
    );
    const replica: Replica = { id, shard, latest: undefined, modes: [], running: undefined as unknown as Subscription };
    shard.filtering$.subscribe((m) => replica.modes.push(m));
    (replica as { running: Subscription }).running = shard.informer$.subscribe((snapshot) => (replica.latest = snapshot));
    replicas.push(replica);
    return replica;
  };
  const runFor = (ms: number): void => {
    time.maxFrames = time.now() + ms;
    time.flush();
    time.frame = time.maxFrames;
  };
  const names = (replica: Replica): string[] => [...(replica.latest?.values() ?? [])].map((pod) => pod.metadata.name).sort();
  const everyone = (): string[] => store.list(pods).map((pod) => pod.metadata.name).sort();
  return { time, store, replicas, add, runFor, names, everyone };
}

describe('shardedInformer', () => {
  it('alone, caches everything once it holds every bucket', () => {
    const { add, runFor, names, everyone } = setUp('client');
    const a = add('a');
    runFor(5_000);
    expect(a.shard.owned()).toHaveLength(BUCKETS);
    expect(a.latest?.synced).toBe(true);
    expect(names(a)).toEqual(everyone());
    a.running.unsubscribe();
  });

  it('is not synced before it has listed the buckets placed on it: alone in a new ring, its first synced snapshot holds every object', () => {
    const { add, runFor, everyone, time } = setUp('client');
    const a = add('a');
    // What a synced$ subscriber (waitForSync) gets, and when each bucket set came.
    const firstSynced: { size: number; owned: number; at: number }[] = [];
    a.shard.synced$.subscribe((snapshot) => firstSynced.push({ size: snapshot.size, owned: a.shard.owned().length, at: time.now() }));
    let acquiredAt: number | undefined;
    a.shard.ownership$.subscribe((event) => {
      if (event.type === 'acquired') acquiredAt ??= time.now();
    });
    runFor(5_000);
    expect(acquiredAt).toBeDefined();
    // Its ring view synced (and placed every bucket on it) before it acquired them; the cache it
    // had then was empty because nothing was listed yet, not because it owns nothing.
    expect(firstSynced).toEqual([{ size: everyone().length, owned: BUCKETS, at: expect.any(Number) }]);
    expect(firstSynced[0]!.at).toBeGreaterThan(acquiredAt!);
    a.running.unsubscribe();
  });

  it('is synced, empty, when the placement gives it no bucket', () => {
    // One bucket, two replicas: whoever does not own it has nothing to list.
    const { add, runFor, everyone } = setUp('client', 1);
    const a = add('a');
    runFor(5_000);
    const b = add('b');
    runFor(20_000);
    const [owner, other] = a.shard.owned().length === 1 ? [a, b] : [b, a];
    expect(owner.shard.owned()).toEqual([0]);
    expect(owner.latest?.synced).toBe(true);
    expect(owner.latest?.size).toBe(everyone().length);
    expect(other.shard.owned()).toEqual([]);
    expect(other.latest?.synced).toBe(true);
    expect(other.latest?.size).toBe(0);
    a.running.unsubscribe();
    b.running.unsubscribe();
  });

  it('three replicas split the objects: each caches exactly its buckets, the caches are disjoint and their union is everything; a leaver’s objects move', () => {
    const { add, runFor, names, everyone, replicas, store } = setUp('client');
    add('a');
    add('b');
    add('c');
    runFor(20_000);
    const check = (live: Replica[]): void => {
      const all = live.flatMap(names);
      expect(all.sort()).toEqual(everyone());
      for (const replica of live) {
        expect(replica.latest?.synced).toBe(true);
        const owned = new Set(replica.shard.owned());
        expect(owned.size).toBeGreaterThan(0);
        for (const pod of replica.latest!.values()) expect(owned.has(objectBucket(pod, 'uid', BUCKETS))).toBe(true);
        for (const pod of replica.latest!.values()) expect(replica.shard.owns(pod)).toBe(true);
      }
    };
    check(replicas);
    // Churn reaches the owner only.
    store.create(pods, { metadata: { name: 'late', namespace: 'ns-0' } });
    runFor(1_000);
    check(replicas);
    // b leaves: it releases its Lease, a and c take its buckets and list their objects.
    const [a, b, c] = replicas as [Replica, Replica, Replica];
    b.running.unsubscribe();
    runFor(10_000);
    check([a, c]);
    expect(a.shard.owned().length + c.shard.owned().length).toBe(BUCKETS);
    a.running.unsubscribe();
    c.running.unsubscribe();
  });

  it('announces acquired and released buckets on ownership$', () => {
    const { add, runFor } = setUp('client');
    const a = add('a');
    const events: string[] = [];
    a.shard.ownership$.subscribe((event) => {
      if (event.type === 'acquired' || event.type === 'released') events.push(`${event.type} ${event.buckets.length}`);
    });
    runFor(5_000);
    const b = add('b');
    runFor(10_000);
    expect(events[0]).toBe(`acquired ${BUCKETS}`);
    expect(events).toContain(`released ${b.shard.owned().length}`);
    a.running.unsubscribe();
    b.running.unsubscribe();
  });

  it('marks the moves in the delta stream: a handler sees a released bucket’s objects leave marked with the release, and an acquired bucket’s arrive marked with the acquisition', () => {
    const { add, runFor, replicas, store } = setUp('client');
    const seen = new Map<string, string[]>();
    const watch = (replica: Replica): void => {
      const lines: string[] = [];
      seen.set(replica.id, lines);
      replica.shard
        .handle({
          onAdd: (pod, info) => lines.push(`add ${pod.metadata.name} ${info.handover ? `${info.handover.type} ${info.handover.bucket}` : '-'}${info.isInInitialList ? ' initial' : ''}`),
          onDelete: (pod, info) => lines.push(`delete ${pod.metadata.name} ${info.handover ? `${info.handover.type} ${info.handover.bucket}` : '-'}`),
        })
        .subscribe();
    };
    const a = add('a');
    watch(a);
    runFor(5_000);
    // The first list: every object arrives in the initial list, with its bucket's acquisition.
    const initial = seen.get('a')!;
    expect(initial).toHaveLength(60);
    for (const pod of store.list(pods)) expect(initial).toContain(`add ${pod.metadata.name} acquired ${a.shard.bucketOf(pod)} initial`);
    initial.length = 0;

    const b = add('b');
    watch(b);
    runFor(20_000);
    const moved = store.list(pods).filter((pod) => b.shard.owns(pod));
    expect(moved.length).toBeGreaterThan(0);
    // a: exactly the moved objects leave, each marked with the release of its bucket.
    expect(seen.get('a')!.sort()).toEqual(moved.map((pod) => `delete ${pod.metadata.name} released ${b.shard.bucketOf(pod)}`).sort());
    // b: exactly those arrive, marked with the acquisition of their bucket, in b's initial list.
    expect(seen.get('b')!.sort()).toEqual(moved.map((pod) => `add ${pod.metadata.name} acquired ${b.shard.bucketOf(pod)} initial`).sort());
    for (const replica of replicas) replica.running.unsubscribe();
  });

  it('marks on changes$ the handover whole, and leaves unmarked a delete in a bucket still served', () => {
    const { add, runFor, replicas, store } = setUp('client');
    const a = add('a');
    const changes: Change<Pod>[] = [];
    a.shard.changes$.subscribe((change) => changes.push(change));
    runFor(5_000);
    const adds = changes.filter((change) => change.type === 'add');
    expect(adds).toHaveLength(60);
    expect(adds[0]!.handover?.handover).toMatchObject({ released: [], served: a.shard.owned(), acquired: a.shard.owned() });
    changes.length = 0;
    // b joins; meanwhile a pod a keeps is deleted while a's watch is down for the relist.
    const b = add('b');
    const kept = (): Pod => store.list(pods).find((pod) => !b.shard.owns(pod) && b.shard.owned().length > 0)!;
    let victim: Pod | undefined;
    b.shard.ownership$.subscribe((event) => {
      if (event.type === 'acquired' && victim === undefined) {
        victim = kept();
        store.delete(pods, victim.metadata.namespace!, victim.metadata.name!);
      }
    });
    runFor(20_000);
    const deletes = changes.filter((change) => change.type === 'delete');
    const unmarked = deletes.filter((change) => change.handover === undefined).map((change) => change.object.metadata.name);
    expect(unmarked).toEqual([victim!.metadata.name]);
    for (const change of deletes.filter((change) => change.handover !== undefined)) {
      expect(change.handover!.type).toBe('released');
      expect(change.handover!.handover.released).toContain(change.handover!.bucket);
      expect(b.shard.owned()).toContain(change.handover!.bucket);
    }
    for (const replica of replicas) replica.running.unsubscribe();
  });

  it('in server mode, falls back to client-side filtering when the lists do not echo the shard selector, and still caches only its share', () => {
    const { add, runFor, names, everyone } = setUp('server');
    const a = add('a');
    const b = add('b');
    runFor(20_000);
    expect(a.modes).toEqual(['server', 'client']);
    expect([...names(a), ...names(b)].sort()).toEqual(everyone());
    expect(names(a).length).toBeGreaterThan(0);
    expect(names(b).length).toBeGreaterThan(0);
    a.running.unsubscribe();
    b.running.unsubscribe();
  });

  it('refuses at once a mode it does not know and a ring name that is not a label value', () => {
    const { store } = setUp('client');
    const time = new VirtualTimeScheduler(VirtualAction, Infinity);
    const sources = {
      listerWatcher: storeListerWatcher(store, pods, { scheduler: time }),
      leaseClient: storeLeaseClient(store, { scheduler: time }),
      ringListerWatcher: storeListerWatcher(store, leases, { scheduler: time }),
    };
    expect(() => shardedInformerFrom(sources, { ring: RING, identity: 'a', mode: 'label' as ShardFilterMode })).toThrow(/labelShardedInformer/);
    expect(() => shardedInformerFrom(sources, { ring: { name: 'not a label', namespace: 'default' }, identity: 'a' })).toThrow(TypeError);
    expect(() => shardedInformerFrom(sources, { ring: RING, identity: 'a', buckets: 0 })).toThrow(RangeError);
  });
});
