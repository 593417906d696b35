import { EMPTY, VirtualAction, VirtualTimeScheduler, type Subscription } from 'rxjs';
import { configMaps, leases, pods, type ConfigMap, type Pod } from '../../lib/resources/builtins';
import { labelShardedInformerFrom } from '../../lib/sharding/labelShardedInformer';
import { shardLabelOf } from '../../lib/sharding/labelShard';
import { RING_LABEL } from '../../lib/sharding/ringLease';
import { shardedInformerFrom, type ShardedInformer } from '../../lib/sharding/shardedInformer';
import { createClusterStore, storeLeaseClient, storeListerWatcher, type ClusterStore } from '../../apiserver/src';

/**
 * Membership is explicit: a replica is in the ring while something serves its buckets (its cache:
 * `informer$`, `deltas$`, `changes$`, `synced$`, a `handle()`), never because something observes
 * it (`ownership$`, `filtering$`, `health$`, `metrics$`, a label shard's `lease$`). Virtual time,
 * one in-memory store.
 */

const RING = { name: 'shop', namespace: 'default' } as const;
const TIMINGS = { leaseDuration: 15_000, renewDeadline: 10_000, retryPeriod: 2_000 } as const;
const BUCKETS = 16;

function setUp() {
  const time = new VirtualTimeScheduler(VirtualAction, Infinity);
  const store: ClusterStore = createClusterStore();
  for (let i = 0; i < 30; i++) store.create(pods, { metadata: { name: `pod-${i}`, namespace: 'default' } });
  const shard = (identity: string): ShardedInformer<Pod> =>
    shardedInformerFrom<Pod>(
      {
        listerWatcher: storeListerWatcher(store, pods, { scheduler: time, latency: 10 }),
        leaseClient: storeLeaseClient(store, { scheduler: time, latency: 10 }),
        ringListerWatcher: storeListerWatcher(store, leases, { scheduler: time, latency: 10, namespace: RING.namespace, labelSelector: `${RING_LABEL}=${RING.name}` }),
      },
      { ring: RING, identity, buckets: BUCKETS, mode: 'client', scheduler: time, ...TIMINGS },
    );
  const runFor = (ms: number): void => {
    time.maxFrames = time.now() + ms;
    time.flush();
    time.frame = time.maxFrames;
  };
  const memberLease = (identity: string) => store.get(leases, RING.namespace, `${RING.name}-${identity}`);
  return { time, store, shard, runFor, memberLease };
}

/** Subscribes every observing stream of a sharded informer; the returned subscription ends them all. */
function observeAll(shard: ShardedInformer<Pod>, seen: string[]): Subscription {
  const observing = shard.ownership$.subscribe((event) => {
    if (event.type === 'acquired' || event.type === 'released') seen.push(`${event.type} ${event.buckets.length}${event.type === 'released' ? ` ${event.reason}` : ''}`);
  });
  observing.add(shard.filtering$.subscribe());
  observing.add(shard.health$.subscribe());
  observing.add(shard.metrics$.subscribe());
  return observing;
}

describe('ring membership is explicit', () => {
  it('observing a sharded informer (ownership$, filtering$, health$, metrics$) never joins the ring: no Lease, no buckets', () => {
    const { shard, runFor, memberLease } = setUp();
    const b = shard('b');
    const serving = b.informer$.subscribe();
    const a = shard('a');
    const seen: string[] = [];
    const observing = observeAll(a, seen);
    runFor(40_000);
    expect(memberLease('a')).toBeUndefined();
    expect(a.owned()).toEqual([]);
    expect(b.owned()).toHaveLength(BUCKETS);
    expect(seen).toEqual([]);
    observing.unsubscribe();
    serving.unsubscribe();
  });

  it('a member whose cache stops leaves the ring though its ownership$ is still observed: its Lease is released, its buckets move at once, ownership$ says so', () => {
    const { shard, runFor, memberLease } = setUp();
    const a = shard('a');
    const b = shard('b');
    const seen: string[] = [];
    const observing = observeAll(a, seen);
    const servingA = a.informer$.subscribe();
    const servingB = b.informer$.subscribe();
    runFor(30_000);
    const held = a.owned().length;
    expect(held).toBeGreaterThan(0);
    expect(held + b.owned().length).toBe(BUCKETS);

    servingA.unsubscribe();
    // The cache stops when the current task ends (gracePeriodMs 0), and the membership with it.
    runFor(1);
    expect(a.owned()).toEqual([]);
    expect(seen.at(-1)).toBe(`released ${held} left`);
    // Released, not left to expire: b serves everything within a few retry periods, not two lease durations.
    runFor(3 * TIMINGS.retryPeriod);
    expect(memberLease('a')?.spec?.holderIdentity ?? '').toBe('');
    expect(b.owned()).toHaveLength(BUCKETS);
    // Still observed, still out.
    runFor(40_000);
    expect(a.owned()).toEqual([]);
    expect(memberLease('a')?.spec?.holderIdentity ?? '').toBe('');
    observing.unsubscribe();
    servingB.unsubscribe();
  });

  it('observing a label shard (lease$, health$, metrics$) never takes its shard Lease; its cache does, and gives it back when it stops', () => {
    const { time, store, runFor } = setUp();
    const ring = { name: 'example', namespace: 'default' };
    const shard = labelShardedInformerFrom<ConfigMap>(
      {
        listerWatcher: storeListerWatcher(store, configMaps, { scheduler: time, latency: 10, labelSelector: `${shardLabelOf(ring.name)}=example-0` }),
        leaseClient: storeLeaseClient(store, { scheduler: time, latency: 10 }),
        acknowledgeDrain: () => EMPTY,
      },
      { ring, identity: 'example-0', scheduler: time, ...TIMINGS },
    );
    const states: string[] = [];
    const observing = shard.lease$.subscribe((state) => states.push(state.state));
    observing.add(shard.health$.subscribe());
    observing.add(shard.metrics$.subscribe());
    const shardLease = () => store.get(leases, ring.namespace, 'example-0');
    runFor(20_000);
    expect(shardLease()).toBeUndefined();
    expect(states).toEqual([]);

    const serving = shard.informer$.subscribe();
    runFor(5_000);
    expect(shardLease()?.spec?.holderIdentity).toBe('example-0');
    expect(states).toEqual(['leading']);

    serving.unsubscribe();
    runFor(5_000);
    expect(shardLease()?.spec?.holderIdentity).toBe('');
    runFor(20_000);
    expect(shardLease()?.spec?.holderIdentity).toBe('');
    observing.unsubscribe();
  });
});
