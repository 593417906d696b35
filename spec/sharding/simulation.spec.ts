import fc from 'fast-check';
import { Ring, TIMINGS, type RingMemberHandle } from './ringHarness';

/**
 * The ring's promises in virtual time, with 3 to 10 members on their own clocks (any offset, rates
 * within ±30 %), checked after every action any member takes:
 * - at most one owner per bucket (an owner holds it, runs, and is within its renewal deadline);
 * - once the membership has settled, exactly one, the one the placement names;
 * - no bucket unowned for longer than BOUND after the last disruption (a crash, a leave, a
 *   partition or a pause starting or ending, a join).
 */

const { leaseDuration, retryPeriod } = TIMINGS;
const MIN_RATE = 0.7;
const MAX_LATENCY = 300;
const MAX_WATCH_LAG = 3_000;
/** Two lease durations of silence before a takeover, a try period to notice, round trips and watch lag; in the slowest clock's terms. */
const BOUND = (2 * leaseDuration + 2 * retryPeriod) / MIN_RATE + 10 * MAX_LATENCY + 3 * MAX_WATCH_LAG;

type Disruption =
  | { readonly at: number; readonly kind: 'join' }
  | { readonly at: number; readonly kind: 'replace'; readonly who: number }
  | { readonly at: number; readonly kind: 'leave' | 'crash'; readonly who: number }
  | { readonly at: number; readonly kind: 'partition' | 'pause'; readonly who: number; readonly forMs: number }
  | { readonly at: number; readonly kind: 'latency'; readonly who: number; readonly latency: number };

interface Scenario {
  readonly members: { readonly offset: number; readonly rate: number; readonly latency: number; readonly watchLag: number }[];
  readonly disruptions: Disruption[];
  readonly buckets: number;
}

/** Runs a scenario and returns what the referee saw; member 0 is never disrupted, so somebody can always take over. */
function play(scenario: Scenario) {
  const ring = new Ring(scenario.buckets);
  let joined = 0;
  const join = (options: Scenario['members'][number]) =>
    ring.add(`m${joined++}`, { clock: { offset: options.offset, rate: options.rate }, latency: options.latency, watchLag: options.watchLag });
  for (const member of scenario.members) join(member);
  const disruptedAt: number[] = [0];
  const pick = (who: number): RingMemberHandle | undefined => {
    const candidates = ring.present().filter((m) => m.id !== 'm0');
    return candidates.length === 0 ? undefined : candidates[who % candidates.length];
  };
  let end = 0;
  for (const disruption of [...scenario.disruptions].sort((a, b) => a.at - b.at)) {
    ring.at(disruption.at, () => {
      disruptedAt.push(ring.time.now());
      if (disruption.kind === 'join') return void join(scenario.members[joined % scenario.members.length]!);
      const member = pick(disruption.who);
      if (member === undefined) return;
      switch (disruption.kind) {
        case 'replace':
          ring.leave(member);
          return void join(scenario.members[joined % scenario.members.length]!);
        case 'leave':
          return ring.leave(member);
        case 'crash':
          return ring.crash(member);
        case 'latency':
          member.latency = disruption.latency;
          return;
        case 'partition':
          member.fault = 'unreachable';
          return ring.at(ring.time.now() + disruption.forMs, () => {
            disruptedAt.push(ring.time.now());
            member.fault = undefined;
          });
        case 'pause':
          member.pausedUntil = ring.time.now() + disruption.forMs;
          return ring.at(member.pausedUntil, () => disruptedAt.push(ring.time.now()));
      }
    });
    end = Math.max(end, disruption.at + ('forMs' in disruption ? disruption.forMs : 0));
  }
  const settled = end + 3 * leaseDuration + 5 * retryPeriod;
  ring.runTo(settled);
  const lateGaps = ring.gaps.filter(([, from, to]) => {
    const lastDisruption = Math.max(from, ...disruptedAt.filter((at) => at <= to));
    return to - lastDisruption > BOUND;
  });
  const result = { overlaps: ring.overlaps, lateGaps, owners: ring.ownersNow(), expected: ring.expected(), openGap: ring.longestGap(settled - 1) };
  ring.stopAll();
  return result;
}

const memberArbitrary = fc.record({
  offset: fc.integer({ min: -3_600_000, max: 3_600_000 }),
  rate: fc.double({ min: MIN_RATE, max: 2 - MIN_RATE, noNaN: true }),
  latency: fc.integer({ min: 1, max: MAX_LATENCY }),
  watchLag: fc.integer({ min: 0, max: MAX_WATCH_LAG }),
});
const disruptionArbitrary: fc.Arbitrary<Disruption> = fc.oneof(
  fc.record({ at: fc.integer({ min: 1_000, max: 200_000 }), kind: fc.constant('join' as const) }),
  fc.record({ at: fc.integer({ min: 1_000, max: 200_000 }), kind: fc.constantFrom('leave' as const, 'crash' as const, 'replace' as const), who: fc.nat() }),
  fc.record({ at: fc.integer({ min: 1_000, max: 200_000 }), kind: fc.constantFrom('partition' as const, 'pause' as const), who: fc.nat(), forMs: fc.integer({ min: 500, max: 60_000 }) }),
  fc.record({ at: fc.integer({ min: 1_000, max: 200_000 }), kind: fc.constant('latency' as const), who: fc.nat(), latency: fc.integer({ min: 1, max: MAX_LATENCY }) }),
);

describe('sharding ring simulation', () => {
  it('a crashed member’s buckets move within two lease durations, and never to two members', () => {
    const result = play({
      buckets: 64,
      members: [0, 1, 2, 3].map((i) => ({ offset: i * 1_000_000, rate: 1, latency: 20 + i * 50, watchLag: 0 })),
      disruptions: [{ at: 30_000, kind: 'crash', who: 0 }],
    });
    expect(result).toMatchObject({ overlaps: [], lateGaps: [], openGap: 0 });
    expect(result.owners).toEqual(result.expected);
  });

  it('a partitioned member stops before anyone takes over, and gets its buckets back when it returns', () => {
    const result = play({
      buckets: 32,
      members: [0, 1, 2].map((i) => ({ offset: -i * 7_777, rate: 1, latency: 40, watchLag: 100 })),
      disruptions: [{ at: 20_000, kind: 'partition', who: 1, forMs: 45_000 }],
    });
    expect(result).toMatchObject({ overlaps: [], lateGaps: [], openGap: 0 });
    expect(result.owners).toEqual(result.expected);
  });

  it('a member paused past the margin serves nothing when it wakes, and the ring settles again', () => {
    const result = play({
      buckets: 32,
      members: [0, 1, 2].map((i) => ({ offset: i * 3_000, rate: 1, latency: 30, watchLag: 0 })),
      disruptions: [{ at: 25_000, kind: 'pause', who: 0, forMs: 50_000 }],
    });
    expect(result).toMatchObject({ overlaps: [], lateGaps: [], openGap: 0 });
    expect(result.owners).toEqual(result.expected);
  });

  it('a member partitioned until its view’s backoff reached its cap takes its buckets back within the bound once it heals', () => {
    // Jitter draws at the top of [d, 2d), and the partition heals just after the view's sixth
    // failed list: with the reflector's default backoff (30 s cap) its next list came ~59 s
    // later, and the member's buckets were still unowned when the ring should have settled.
    const random = jest.spyOn(Math, 'random').mockReturnValue(0.99);
    try {
      const result = play({
        buckets: 16,
        members: [0, 1, 2].map((i) => ({ offset: i * 5_000, rate: 1, latency: 30, watchLag: 0 })),
        disruptions: [{ at: 20_000, kind: 'partition', who: 2, forMs: 103_000 }],
      });
      expect(result).toMatchObject({ overlaps: [], lateGaps: [], openGap: 0 });
      expect(result.owners).toEqual(result.expected);
    } finally {
      random.mockRestore();
    }
  });

  it('serves a bucket only once its view has caught up with its own claim, so a lagging watch cannot hide a rival claim', () => {
    // One member leaves as another joins: m0 (whose watch lags 2 s) and the joiner both place the
    // leaver's buckets on themselves for a moment, and both claim some. Each must see its own claim
    // in its view before it serves: then the later claimer sees the earlier one. (Without that
    // rule this very run serves buckets 14, 22 and 29 on m0 and m3 at once.)
    const ring = new Ring(64);
    const members = [
      ring.add('m0', { latency: 116, watchLag: 2_096 }),
      ring.add('m1', { latency: 212, watchLag: 144 }),
      ring.add('m2', { latency: 108, watchLag: 1_192 }),
    ];
    ring.runTo(30_136);
    ring.leave(members[2]!);
    ring.add('m3', { latency: 252, watchLag: 568 });
    ring.runTo(80_000);
    expect(ring.overlaps).toEqual([]);
    expect(ring.ownersNow()).toEqual(ring.expected());
    ring.stopAll();
  });

  it('joins and graceful leaves hand buckets over in round trips, not lease durations', () => {
    const ring = new Ring(64);
    ring.add('a');
    ring.add('b');
    ring.runTo(20_000);
    ring.add('c');
    ring.runTo(40_000);
    const afterJoin = ring.longestGap(20_000);
    ring.leave(ring.members[1]!);
    ring.runTo(60_000);
    expect(ring.overlaps).toEqual([]);
    expect(ring.ownersNow()).toEqual(ring.expected());
    // A join and a leave each cost a write and its echo on either side (20 ms round trips).
    expect(afterJoin).toBeLessThan(retryPeriod);
    expect(ring.longestGap(40_000)).toBeLessThan(retryPeriod + 500);
    ring.stopAll();
  });

  it('keeps its promises under any mix of joins, leaves, crashes, partitions, pauses and latency', () => {
    fc.assert(
      fc.property(
        fc.record({
          buckets: fc.constantFrom(16, 64),
          members: fc.array(memberArbitrary, { minLength: 3, maxLength: 10 }),
          disruptions: fc.array(disruptionArbitrary, { maxLength: 8 }),
        }),
        (scenario) => {
          const result = play(scenario);
          expect(result.overlaps).toEqual([]);
          expect(result.lateGaps).toEqual([]);
          expect(result.openGap).toBe(0);
          expect(result.owners).toEqual(result.expected);
        },
      ),
      // endOnFailure: a counterexample is reported at once with its seed (replay it with `seed` and
      // `path` to shrink it locally); one full run spent over ten CPU minutes in this property, and
      // shrinking a scenario that replays ~1 s of work per try could hold CI for as long.
      { numRuns: 20, endOnFailure: true },
    );
  });
});
