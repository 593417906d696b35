import { leases, type Lease } from '../../lib/resources/builtins';
import { formatBuckets } from '../../lib/sharding/buckets';
import { BUCKETS_ANNOTATION, BUCKET_COUNT_ANNOTATION, REAPED_BY_ANNOTATION, RING_LABEL } from '../../lib/sharding/ringLease';
import { RING, Ring, TIMINGS } from './ringHarness';

const { leaseDuration, renewDeadline, retryPeriod } = TIMINGS;

function lease(ring: Ring, id: string): Lease {
  return ring.store.get(leases, RING.namespace, `${RING.name}-${id}`)!;
}

describe('ringMembership', () => {
  it('three members split the buckets as the placement says, and their Leases say which', () => {
    const ring = new Ring(16);
    const members = ['a', 'b', 'c'].map((id) => ring.add(id));
    ring.runTo(20_000);
    expect(ring.overlaps).toEqual([]);
    expect(ring.ownersNow()).toEqual(ring.expected());
    for (const member of members) {
      const own = lease(ring, member.id);
      expect(own.metadata.labels?.[RING_LABEL]).toBe(RING.name);
      expect(own.spec?.holderIdentity).toBe(member.id);
      expect(own.metadata.annotations?.[BUCKET_COUNT_ANNOTATION]).toBe('16');
      const owned = ring.ownersNow().flatMap((owner, bucket) => (owner === member.id ? [bucket] : []));
      expect(own.metadata.annotations?.[BUCKETS_ANNOTATION]).toBe(formatBuckets(owned));
      expect([...member.owned].sort((x, y) => x - y)).toEqual(owned);
    }
    ring.stopAll();
  });

  it('reports the members it sees and the buckets placed on it', () => {
    const ring = new Ring(8);
    const a = ring.add('a');
    ring.runTo(5_000);
    ring.add('b');
    ring.runTo(10_000);
    const views = a.events.flatMap(({ event }) => (event.type === 'members' ? [event.members.join(',')] : []));
    expect(views).toEqual(['a', 'a,b']);
    ring.stopAll();
  });

  it('stops serving everything at the renew deadline when it cannot reach the API server, counted from the last renewal its view showed', () => {
    const ring = new Ring(8);
    const a = ring.add('a', { latency: 20 });
    ring.add('b', { latency: 20 });
    ring.runTo(20_000);
    const servingUntil = a.servingUntil;
    a.fault = 'unreachable';
    ring.runTo(60_000);
    const released = a.events.find(({ event }) => event.type === 'released' && event.reason === 'renew-deadline');
    expect(released).toBeDefined();
    // servingUntil is the last echoed renewal's send time + retryPeriod + renewDeadline.
    expect(released!.at).toBe(servingUntil);
    expect(servingUntil).toBeLessThanOrEqual(20_000 + retryPeriod + renewDeadline);
    expect(a.owned.size).toBe(0);
    expect(ring.overlaps).toEqual([]);
    ring.stopAll();
  });

  it('takes over the Lease of a member silent for two lease durations, so that member finds it taken when it wakes', () => {
    const ring = new Ring(8);
    const a = ring.add('a');
    const b = ring.add('b');
    ring.runTo(20_000);
    const bBuckets = [...b.owned];
    expect(bBuckets.length).toBeGreaterThan(0);
    b.pausedUntil = 100_000;
    ring.runTo(99_000);
    const reaped = lease(ring, 'b');
    expect(reaped.spec?.holderIdentity).toBe('');
    expect(reaped.metadata.annotations?.[REAPED_BY_ANNOTATION]).toBe('a');
    expect(reaped.metadata.annotations?.[BUCKETS_ANNOTATION]).toBe('');
    // a took b's buckets only after two lease durations of silence.
    const taken = a.events.find(({ event }) => event.type === 'acquired' && event.buckets.includes(bBuckets[0]!))!;
    expect(taken.at).toBeGreaterThanOrEqual(20_000 + 2 * leaseDuration - retryPeriod);
    ring.runTo(140_000);
    // b woke, let go of everything at once, found its Lease taken and joined again.
    const reasons = b.events.flatMap(({ event }) => (event.type === 'released' ? [event.reason] : []));
    expect(reasons[0]).toBe('renew-deadline');
    expect(lease(ring, 'b').spec?.holderIdentity).toBe('b');
    expect(ring.overlaps).toEqual([]);
    expect(ring.ownersNow()).toEqual(ring.expected());
    ring.stopAll();
  });

  it('stops serving at once when its Lease is deleted under it, then joins again', () => {
    const ring = new Ring(8);
    ring.add('a');
    const b = ring.add('b');
    ring.runTo(20_000);
    ring.at(20_001, () => ring.store.delete(leases, RING.namespace, `${RING.name}-b`));
    ring.runTo(40_000);
    const released = b.events.find(({ event }) => event.type === 'released');
    expect(released?.event).toMatchObject({ reason: 'taken' });
    expect(released!.at).toBeLessThan(20_000 + retryPeriod);
    expect(ring.ownersNow()).toEqual(ring.expected());
    ring.stopAll();
  });

  it('releases its Lease when unsubscribed, so the others take its buckets in round trips', () => {
    const ring = new Ring(8);
    const a = ring.add('a');
    const b = ring.add('b');
    ring.runTo(20_000);
    ring.leave(b);
    ring.runTo(20_500);
    expect(lease(ring, 'b').spec?.holderIdentity).toBe('');
    expect(a.owned.size).toBe(8);
    ring.stopAll();
  });

  it('treats a member Lease it cannot read as claiming every bucket, and waits rather than guess', () => {
    const ring = new Ring(8);
    ring.store.create(leases, {
      metadata: { name: `${RING.name}-odd`, namespace: RING.namespace, labels: { [RING_LABEL]: RING.name }, annotations: { [BUCKETS_ANNOTATION]: '0-3', [BUCKET_COUNT_ANNOTATION]: '32' } },
      spec: { holderIdentity: 'odd', leaseDurationSeconds: 15 },
    });
    const a = ring.add('a');
    ring.runTo(10_000);
    expect(a.owned.size).toBe(0);
    // Silent for two lease durations, it is taken over, and a serves everything.
    ring.runTo(2 * leaseDuration + 5 * retryPeriod);
    expect(a.owned.size).toBe(8);
    ring.stopAll();
  });
});
