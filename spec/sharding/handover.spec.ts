import type { Lease } from '../../lib/resources/builtins';
import { planHandover, targetOf, type PeerView, type SelfView } from '../../lib/sharding/handover';
import { readMember, RING_LABEL } from '../../lib/sharding/ringLease';

const LEASE_DURATION = 15_000;

function peer(holder: string, claims: string, changedAt: number): PeerView {
  const lease: Lease = {
    metadata: { name: `ring-${holder}`, namespace: 'default', labels: { [RING_LABEL]: 'ring' }, annotations: { 'rx-informer.io/buckets': claims } },
    spec: { holderIdentity: holder },
  };
  return { lease, record: readMember(lease, 8), changedAt };
}

function self(overrides: Partial<SelfView> = {}): SelfView {
  return { identity: 'a', live: true, active: new Set(), claimedAt: new Map(), echoedWrite: -1, ...overrides };
}

const plan = (me: SelfView, peers: PeerView[], now = 1_000) => planHandover(me, peers, now, 8, { leaseDuration: LEASE_DURATION });

describe('planHandover', () => {
  it('alone, claims every bucket and serves each once its view shows the claim', () => {
    expect(plan(self(), [])).toMatchObject({ members: ['a'], target: [0, 1, 2, 3, 4, 5, 6, 7], claims: [0, 1, 2, 3, 4, 5, 6, 7], acquire: [] });
    const claimed = new Map([0, 1, 2, 3, 4, 5, 6, 7].map((b) => [b, 3]));
    expect(plan(self({ claimedAt: claimed, echoedWrite: 2 }), []).acquire).toEqual([]);
    expect(plan(self({ claimedAt: claimed, echoedWrite: 3 }), []).acquire).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('places buckets among the live members and stops serving the ones placed elsewhere', () => {
    const mine = targetOf('a', ['a', 'b'], 8);
    const theirs = [0, 1, 2, 3, 4, 5, 6, 7].filter((b) => !mine.includes(b));
    const result = plan(self({ active: new Set([0, 1, 2, 3, 4, 5, 6, 7]) }), [peer('b', '', 0)]);
    expect(result.members).toEqual(['a', 'b']);
    expect(result.target).toEqual(mine);
    expect(result.release).toEqual(theirs);
    expect(result.claims).toEqual(mine);
  });

  it('waits for a bucket another Lease claims, and takes that Lease over after two lease durations of silence', () => {
    const claimed = new Map([0, 1, 2, 3, 4, 5, 6, 7].map((b) => [b, 1]));
    const me = self({ claimedAt: claimed, echoedWrite: 1 });
    const silent = peer('b', '0-7', 0);
    // Within one lease duration b is a member and keeps its buckets.
    expect(plan(me, [silent], LEASE_DURATION - 1).target).toEqual(targetOf('a', ['a', 'b'], 8));
    // Past it, b is out of the placement, but its claims still block.
    const expired = plan(me, [silent], LEASE_DURATION);
    expect(expired).toMatchObject({ members: ['a'], acquire: [], reap: [] });
    expect(expired.waiting).toContainEqual({ bucket: 0, on: 'peer-claim', lease: 'ring-b' });
    // After two, it is reaped.
    expect(plan(me, [silent], 2 * LEASE_DURATION).reap).toEqual([silent]);
  });

  it('a released Lease claims nothing', () => {
    const claimed = new Map([0, 1, 2, 3, 4, 5, 6, 7].map((b) => [b, 1]));
    expect(plan(self({ claimedAt: claimed, echoedWrite: 1 }), [peer('', '0-7', 900)]).acquire).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('when not live, stops serving everything and claims nothing', () => {
    expect(plan(self({ live: false, active: new Set([1, 5]) }), [])).toMatchObject({ release: [1, 5], acquire: [], claims: [], reap: [] });
  });
});
