import { leaderElectionFrom } from '../../lib/leaderElection/leaderElection';
import { createClusterStore, storeLeaseClient } from '../../apiserver/src';
import { asyncScheduler } from 'rxjs';
import { leases } from '../../lib/resources/builtins';
import { Election, timeline } from './electionHarness';

/**
 * leaderElection in virtual time (ms), against the loopback server's Lease semantics in memory.
 * Defaults: lease 15 s, renew deadline 10 s, retry period 2 s; requests take 10 ms unless a test
 * says otherwise (the store applies a request halfway).
 */

describe('leaderElection', () => {
  describe('checks its configuration as client-go does', () => {
    const client = storeLeaseClient(createClusterStore(), { scheduler: asyncScheduler });
    const base = { namespace: 'ns', name: 'lock', identity: 'a' };

    it('needs a namespace, a name and an identity', () => {
      expect(() => leaderElectionFrom(client, { ...base, identity: '' })).toThrow(TypeError);
      expect(() => leaderElectionFrom(client, { ...base, name: '' })).toThrow(TypeError);
      expect(() => leaderElectionFrom(client, { ...base, namespace: '' })).toThrow(TypeError);
    });

    it('needs leaseDuration > renewDeadline > 1.2 × retryPeriod, and a request timeout below the deadline', () => {
      expect(() => leaderElectionFrom(client, { ...base, leaseDuration: 10_000, renewDeadline: 10_000 })).toThrow(/leaseDuration \(10000\) must be greater than renewDeadline/);
      expect(() => leaderElectionFrom(client, { ...base, renewDeadline: 2_400, retryPeriod: 2_000 })).toThrow(/must be greater than retryPeriod × 1.2/);
      expect(() => leaderElectionFrom(client, { ...base, renewDeadline: 2_401, retryPeriod: 2_000 })).not.toThrow();
      expect(() => leaderElectionFrom(client, { ...base, requestTimeout: 10_000 })).toThrow(/requestTimeout/);
      expect(() => leaderElectionFrom(client, { ...base, retryPeriod: 0 })).toThrow(RangeError);
      expect(() => leaderElectionFrom(client, { ...base, leaseDuration: 900, renewDeadline: 500, retryPeriod: 100 })).toThrow(/whole seconds/);
    });
  });

  describe('one candidate', () => {
    it('creates the Lease and leads, writing client-go’s record with MicroTimes', () => {
      const election = new Election();
      const a = election.add('a');
      election.runTo(100);
      // A GET (404) and a create, 10 ms each.
      expect(timeline(a)).toEqual(['20 leading']);
      expect(election.lease()?.spec).toEqual({
        holderIdentity: 'a',
        leaseDurationSeconds: 15,
        acquireTime: '1970-01-01T00:00:00.000000Z',
        renewTime: '1970-01-01T00:00:00.000000Z',
        leaseTransitions: 0,
      });
      election.stopAll();
    });

    it('renews every retry period with one PUT of its cached Lease, keeping acquireTime', () => {
      const election = new Election();
      const a = election.add('a');
      election.runTo(7_000);
      expect(a.requests.map((r) => `${r.at} ${r.verb}`)).toEqual(['0 get', '10 create', '2020 update', '4030 update', '6040 update']);
      expect(election.lease()?.spec).toMatchObject({ acquireTime: '1970-01-01T00:00:00.000000Z', renewTime: '1970-01-01T00:00:06.040000Z', leaseTransitions: 0 });
      election.stopAll();
    });

    it('releases the Lease when unsubscribed while leading: holder "", 1 s, transitions kept', () => {
      const election = new Election();
      const a = election.add('a');
      election.runTo(3_000);
      a.stop();
      election.runTo(4_000);
      expect(election.lease()?.spec).toEqual({
        holderIdentity: '',
        leaseDurationSeconds: 1,
        acquireTime: '1970-01-01T00:00:03.010000Z',
        renewTime: '1970-01-01T00:00:03.010000Z',
        leaseTransitions: 0,
      });
      expect(a.requests.slice(-2).map((r) => r.verb)).toEqual(['get', 'update']);
    });

    it('retries a release that meets 409 Conflict, reading the Lease again', () => {
      const election = new Election();
      const a = election.add('a');
      election.runTo(3_000);
      a.stop();
      // Between the release's read (applied at 3005) and its write (applied at 3015), someone
      // touches the Lease: the write gets 409, and the release reads and writes again.
      election.at(3_012, () => {
        const current = election.lease()!;
        election.store.update(leases, { ...current, metadata: { ...current.metadata, annotations: { touched: 'yes' } } });
      });
      election.runTo(4_000);
      expect(a.requests.slice(-4).map((r) => `${r.at} ${r.verb}`)).toEqual(['3000 get', '3010 update', '3020 get', '3030 update']);
      expect(election.lease()?.spec?.holderIdentity).toBe('');
    });

    it('sets its labels on the Lease, merged with those it has', () => {
      const election = new Election();
      const a = election.add('a', { labels: { ring: 'r1' } });
      election.runTo(100);
      expect(election.lease()?.metadata.labels).toEqual({ ring: 'r1' });
      const current = election.lease()!;
      election.store.update(leases, { ...current, metadata: { ...current.metadata, labels: { other: 'kept' } } });
      election.runTo(5_000);
      expect(election.lease()?.metadata.labels).toEqual({ other: 'kept', ring: 'r1' });
      expect(timeline(a)).toEqual(['20 leading']);
      election.stopAll();
    });

    it('leaves the Lease alone on unsubscribe with releaseOnUnsubscribe false', () => {
      const election = new Election();
      const a = election.add('a', { releaseOnUnsubscribe: false });
      election.runTo(3_000);
      const before = election.lease();
      a.stop();
      election.runTo(60_000);
      expect(election.lease()).toEqual(before);
    });

    it('takes back its own Lease at once after a restart (it is the holder)', () => {
      const election = new Election();
      election.add('a', { releaseOnUnsubscribe: false }).stop();
      election.runTo(100);
      const again = election.add('a');
      election.runTo(200);
      // A GET, then a PUT of its own Lease.
      expect(timeline(again)).toEqual(['120 leading']);
      election.stopAll();
    });
  });

  describe('two candidates', () => {
    it('lets one lead and the other follow, retrying every retry period jittered up to 120 % later', () => {
      const election = new Election();
      const a = election.add('a');
      election.runTo(100);
      const b = election.add('b', { random: () => 0.5 });
      election.runTo(10_000);
      expect(timeline(a)).toEqual(['20 leading']);
      expect(timeline(b)).toEqual(['110 following a']);
      // 2 s × (1 + 0.5 × 1.2) = 3.2 s after each try ends, each try one GET.
      expect(b.requests.map((r) => `${r.at} ${r.verb}`)).toEqual(['100 get', '3310 get', '6520 get', '9730 get']);
      election.stopAll();
    });

    it('settles a race to create the Lease with 409 AlreadyExists, and hands over on release at the follower’s next try', () => {
      const election = new Election();
      const a = election.add('a');
      const b = election.add('b', { random: () => 0 });
      election.runTo(5_000);
      // Both found no Lease and created one at 15; a's came first, b's got 409 and saw no holder yet.
      expect(timeline(a)).toEqual(['20 leading']);
      a.stop();
      election.runTo(20_000);
      // a released it at 5015; b's next try (6040) finds it free.
      expect(timeline(b)).toEqual(['20 following -', '2030 following a', '6060 leading']);
      expect(election.lease()?.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1, leaseDurationSeconds: 15 });
      election.stopAll();
    });

    it('takes over a crashed leader’s Lease only a lease duration after it last saw it change', () => {
      const election = new Election();
      const a = election.add('a', { releaseOnUnsubscribe: false });
      const b = election.add('b', { random: () => 0 });
      election.runTo(5_000);
      // a dies without releasing: b must see its last renewal unchanged for a whole lease duration.
      a.stop();
      election.runTo(40_000);
      const lastRenewal = a.requests.filter((r) => r.verb === 'update').at(-1)!.at + 5;
      const takeover = b.states.find(({ state }) => state.state === 'leading')!.at;
      expect(takeover).toBeGreaterThan(lastRenewal + 15_000);
      expect(takeover).toBeLessThan(lastRenewal + 15_000 + 2_000 + 2_400 + 20);
      expect(election.lease()?.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
      election.stopAll();
    });

    it('a partitioned leader stops leading within the renew deadline of its first failed renewal, before anyone else leads', () => {
      const election = new Election();
      const a = election.add('a');
      const b = election.add('b');
      election.runTo(5_000);
      a.fault = 'unreachable';
      election.runTo(40_000);
      const lastRenewalSent = a.requests.filter((r) => r.verb === 'update' && r.at < 5_000).at(-1)!.at;
      const lost = a.states.find(({ state }) => state.state === 'lost')!;
      expect(lost.state).toMatchObject({ state: 'lost', reason: 'renew-deadline', error: expect.objectContaining({ code: 'ECONNREFUSED' }) });
      expect(lost.at).toBe(lastRenewalSent + 2_000 + 10_000);
      // The first renewal the partition failed came a retry period after the last one that worked.
      const firstFailed = a.requests.find((r) => r.at >= 5_000)!.at;
      expect(lost.at - firstFailed).toBeLessThanOrEqual(10_000);
      // It kept trying every retry period meanwhile.
      expect(a.requests.filter((r) => r.at >= firstFailed && r.at < lost.at).length).toBeGreaterThanOrEqual(5);
      expect(b.states.find(({ state }) => state.state === 'leading')!.at).toBeGreaterThan(lost.at);
      expect(election.overlaps).toEqual([]);
      election.stopAll();
    });

    it('abandons a hung request after requestTimeout and retries within the deadline', () => {
      const election = new Election();
      const a = election.add('a');
      election.runTo(3_000);
      a.fault = 'hang';
      election.runTo(4_500);
      a.fault = undefined;
      election.runTo(20_000);
      // The renewal sent at 4030 hangs; 5 s later (requestTimeout = renewDeadline / 2) it is
      // abandoned and the same try reads the Lease and renews it, well before the 16 020 deadline.
      expect(a.requests.filter((r) => r.at > 3_000).slice(0, 4).map((r) => `${r.at} ${r.verb}`)).toEqual(['4030 update', '9030 get', '9040 update', '11050 update']);
      expect(timeline(a)).toEqual(['20 leading']);
      election.stopAll();
    });

    it('stops leading at once when it sees another holder', () => {
      const election = new Election();
      const a = election.add('a');
      election.runTo(3_000);
      // Someone else (an operator, a misconfigured replica) writes the Lease.
      const current = election.lease()!;
      election.store.update(leases, { ...current, spec: { ...current.spec, holderIdentity: 'intruder' } });
      election.runTo(6_000);
      // The renewal at 4030 gets 409; the GET that follows shows the intruder: lost at once.
      expect(timeline(a)).toEqual(['20 leading', '4050 lost taken', '4060 following intruder']);
      election.stopAll();
    });

    it('never clears a Lease another candidate took meanwhile when it releases late', () => {
      const election = new Election();
      const a = election.add('a');
      election.runTo(3_000);
      a.fault = 'unreachable';
      const b = election.add('b', { random: () => 0 });
      election.runTo(40_000);
      expect(b.leading).toBe(true);
      expect(timeline(a).at(-1)).toBe(`${a.states.at(-1)!.at} lost renew-deadline`);
      // a, still believing the Lease was last its own, comes back and is stopped: it must not release b's Lease.
      a.fault = undefined;
      a.stop();
      election.runTo(41_000);
      expect(election.lease()?.spec?.holderIdentity).toBe('b');
      election.stopAll();
    });
  });
});

