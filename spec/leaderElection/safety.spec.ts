import fc from 'fast-check';
import type { LeaseFault } from '../../apiserver/src';
import { Election, timeline } from './electionHarness';

/**
 * The election's promise, checked at every change of any candidate's state: never two leaders
 * while all clocks run at the same rate (whatever their offsets), whatever the network does; and
 * a leader once the network is healthy again. Virtual time, in ms.
 */

describe('leaderElection safety', () => {
  it('with three candidates on offset clocks, a partitioned leader stops before another starts, every time', () => {
    const election = new Election();
    const candidates = [
      election.add('a', { clock: { offset: -40_000 } }),
      election.add('b', { clock: { offset: 3_600_000 }, latency: 300 }),
      election.add('c', { clock: { offset: 1_234 }, latency: 45 }),
    ];
    const handovers: string[] = [];
    // Every 40 s, cut the current leader off for 30 s.
    for (let t = 10_000; t < 400_000; t += 40_000) {
      election.at(t, () => {
        const leader = candidates.find((candidate) => candidate.leading);
        if (leader === undefined) return;
        handovers.push(leader.id);
        leader.fault = 'unreachable';
        election.at(t + 30_000, () => (leader.fault = undefined));
      });
    }
    election.runTo(420_000);
    expect(election.overlaps).toEqual([]);
    expect(handovers.length).toBeGreaterThanOrEqual(9);
    // Each cut leader lost within retryPeriod + renewDeadline (12 s) of the cut.
    for (const candidate of candidates) {
      for (const { at, state } of candidate.states) {
        if (state.state === 'lost') expect((at - 10_000) % 40_000).toBeLessThanOrEqual(12_000);
      }
    }
    election.stopAll();
  });

  it('counts the renew deadline from when the last renewal was sent, so a slow answer cannot eat the margin', () => {
    const election = new Election();
    const a = election.add('a');
    const b = election.add('b', { random: () => 0 });
    election.runTo(3_000);
    // a's answers now take 4.8 s (its requests arrive at once); then its network fails entirely.
    a.latency = { there: 0, back: 4_800 };
    election.runTo(7_500);
    a.fault = 'unreachable';
    election.runTo(40_000);
    const lastRenewalSent = a.requests.filter((r) => r.verb === 'update' && r.at < 7_500).at(-1)!.at;
    const lost = a.states.find(({ state }) => state.state === 'lost')!.at;
    // client-go would count from the answer (4.8 s later) and lead 1.8 s past b's earliest takeover.
    expect(lost).toBe(lastRenewalSent + 12_000);
    const takeover = b.states.find(({ state }) => state.state === 'leading')!.at;
    expect(takeover).toBeGreaterThan(lastRenewalSent + 15_000);
    expect(election.overlaps).toEqual([]);
    election.stopAll();
  });

  it('keeps its promise under any mix of partitions, hangs, lost answers, latency, crashes and restarts', () => {
    const fault = fc.constantFrom<LeaseFault | undefined>('unreachable', 'unreachable', 'hang', 'lostResponse', undefined);
    const event = fc.record({
      at: fc.integer({ min: 0, max: 150_000 }),
      who: fc.integer({ min: 0, max: 2 }),
      what: fc.oneof(
        { arbitrary: fault.map((f) => ({ kind: 'fault' as const, fault: f })), weight: 4 },
        { arbitrary: fc.integer({ min: 1, max: 3_000 }).map((latency) => ({ kind: 'latency' as const, latency })), weight: 1 },
        { arbitrary: fc.boolean().map((release) => ({ kind: 'restart' as const, release })), weight: 1 },
      ),
    });
    const scenario = fc.record({
      offsets: fc.array(fc.integer({ min: -600_000, max: 600_000 }), { minLength: 3, maxLength: 3 }),
      latencies: fc.array(fc.integer({ min: 1, max: 800 }), { minLength: 3, maxLength: 3 }),
      seeds: fc.array(fc.integer(), { minLength: 3, maxLength: 3 }),
      events: fc.array(event, { maxLength: 15 }),
    });
    fc.assert(
      fc.property(scenario, ({ offsets, latencies, seeds, events }) => {
        const election = new Election();
        const ids = ['a', 'b', 'c'];
        const current = ids.map((id, i) => election.add(id, { clock: { offset: offsets[i]! }, latency: latencies[i]!, seed: seeds[i]! }));
        for (const { at, who, what } of events) {
          election.at(at, () => {
            const candidate = current[who]!;
            if (what.kind === 'fault') candidate.fault = what.fault;
            else if (what.kind === 'latency') candidate.latency = what.latency;
            else {
              // A crash (no release) or a clean stop, and the process comes back at once.
              const { fault: networkFault, latency } = candidate;
              if (!what.release) candidate.fault = 'unreachable';
              candidate.stop();
              current[who] = election.add(ids[who]!, { clock: { offset: offsets[who]! }, latency, seed: seeds[who]! + at });
              current[who]!.fault = networkFault;
            }
          });
        }
        // Then the network heals for good: within a lease duration and a few tries, someone leads.
        election.at(160_000, () => current.forEach((candidate) => ((candidate.fault = undefined), (candidate.latency = 20))));
        election.runTo(200_000);
        const leaders = election.leaders();
        election.stopAll();
        expect(election.violations()).toEqual([]);
        return leaders.length === 1;
      }),
      { numRuns: 50 },
    );
  });

  it('cannot promise it when clocks run at different rates, as client-go documents', () => {
    const election = new Election();
    // a's clock runs at half speed: its 12 s to give up take 24 s of everyone else's time.
    const a = election.add('a', { clock: { rate: 0.5 } });
    election.runTo(1_000);
    const b = election.add('b', { random: () => 0 });
    election.runTo(5_000);
    a.fault = 'unreachable';
    election.runTo(40_000);
    expect(timeline(a)[0]).toMatch(/leading$/);
    expect(timeline(b).some((line) => line.endsWith('leading'))).toBe(true);
    expect(election.overlaps).not.toEqual([]);
    election.stopAll();
  });
});
