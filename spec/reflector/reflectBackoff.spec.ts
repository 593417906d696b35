import type { Observable } from 'rxjs';
import type { WatchEvent } from '../../lib/sources/listerWatcher';
import { modified, page, pod, simulate, statusError } from './reflectHarness';

/** Gaps between consecutive watch calls: the waits the reflector chose. */
function watchGaps(calls: readonly { kind: string; at: number }[]): number[] {
  const times = calls.filter((call) => call.kind === 'watch').map((call) => call.at);
  return times.slice(1).map((at, i) => at - (times[i] ?? 0));
}

const failNow = (cold: (marbles: string, values?: Record<string, WatchEvent>, error?: unknown) => Observable<WatchEvent>) => () =>
  cold('#', {}, statusError(500, 'InternalError'));

describe('reflect: backoff', () => {
  it('waits 800 ms, doubling, capped at 30 s, between consecutive failures (random 0: the low end of each draw)', () => {
    const run = simulate(
      ({ cold }) => ({ lists: [() => cold('(a|)', { a: page([], '10') })], watches: Array.from({ length: 10 }, () => failNow(cold)) }),
      { until: 300_000 },
    );
    expect(watchGaps(run.lw.calls)).toEqual([800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000, 30_000, 30_000]);
    expect(run.health.filter((h) => h.phase === 'backingOff').map((h) => h.retryInMs)).toEqual([800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000, 30_000, 30_000]);
    expect(run.health.filter((h) => h.phase === 'backingOff').map((h) => h.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it("draws each wait from [d, 2d) by default, as client-go does: never shorter than 800 ms, up to 60 s at the cap", () => {
    const run = simulate(
      ({ cold }) => ({ lists: [() => cold('(a|)', { a: page([], '10') })], watches: Array.from({ length: 8 }, () => failNow(cold)) }),
      { until: 400_000, config: { random: () => 0.25 } },
    );
    expect(watchGaps(run.lw.calls)).toEqual([1000, 2000, 4000, 8000, 16_000, 32_000, 37_500, 37_500]);
  });

  it("draws each wait from [0, d) with jitter 'full'", () => {
    const run = simulate(
      ({ cold }) => ({ lists: [() => cold('(a|)', { a: page([], '10') })], watches: [failNow(cold), failNow(cold), failNow(cold)] }),
      { until: 100_000, config: { random: () => 0.25, backoff: { jitter: 'full' } } },
    );
    expect(watchGaps(run.lw.calls)).toEqual([200, 400, 800]);
  });

  it('follows a custom backoff config without jitter', () => {
    const run = simulate(
      ({ cold }) => ({ lists: [() => cold('(a|)', { a: page([], '10') })], watches: [failNow(cold), failNow(cold), failNow(cold), failNow(cold)] }),
      { until: 100_000, config: { random: () => 0.5, backoff: { initialMs: 100, factor: 3, maxMs: 1000, jitter: 'none' } } },
    );
    expect(watchGaps(run.lw.calls)).toEqual([100, 300, 900, 1000]);
  });

  it('starts the sequence over after 2 min without a failure since the last retry', () => {
    const run = simulate(
      ({ cold }) => ({
        lists: [() => cold('(a|)', { a: page([], '10') })],
        watches: [failNow(cold), failNow(cold), () => cold('1s a 118999ms #', { a: modified(pod('x', '11')) }, statusError(500, 'InternalError')), failNow(cold)],
      }),
      { until: 300_000 },
    );
    // The third watch starts at 2400 and fails exactly 120 s later.
    expect(watchGaps(run.lw.calls)).toEqual([800, 1600, 120_000 + 800, 1600]);
  });

  it('keeps growing the delay when a failure comes less than 2 min after the last retry, even if events arrived in between', () => {
    const run = simulate(
      ({ cold }) => ({
        lists: [() => cold('(a|)', { a: page([], '10') })],
        watches: [failNow(cold), failNow(cold), () => cold('1s a 118998ms #', { a: modified(pod('x', '11')) }, statusError(500, 'InternalError'))],
      }),
      { until: 300_000 },
    );
    expect(watchGaps(run.lw.calls)).toEqual([800, 1600, 119_999 + 3200]);
    // Health shows the recovery (attempt back to 0) even though the delay kept growing.
    expect(run.health.filter((h) => h.phase === 'backingOff').map((h) => h.attempt)).toEqual([1, 2, 1]);
  });

  it('waits for Retry-After when it is longer than the backoff', () => {
    const run = simulate(
      ({ cold }) => ({
        lists: [() => cold('(a|)', { a: page([], '10') })],
        watches: [() => cold('#', {}, statusError(429, 'TooManyRequests', { retryAfterSeconds: 5 }))],
      }),
      { until: 100_000 },
    );
    expect(watchGaps(run.lw.calls)).toEqual([5000]);
    expect(run.health.find((h) => h.phase === 'backingOff')).toMatchObject({ retryInMs: 5000, lastError: { code: 429, retryAfterSeconds: 5 } });
  });

  it('keeps the backoff when it is longer than Retry-After', () => {
    const run = simulate(
      ({ cold }) => ({
        lists: [() => cold('(a|)', { a: page([], '10') })],
        watches: [failNow(cold), failNow(cold), () => cold('#', {}, statusError(429, 'TooManyRequests', { retryAfterSeconds: 1 }))],
      }),
      { until: 100_000 },
    );
    expect(watchGaps(run.lw.calls)).toEqual([800, 1600, 3200]);
  });

  it('honours Retry-After on a list too', () => {
    const run = simulate(
      ({ cold }) => ({ lists: [() => cold('#', {}, statusError(503, 'ServiceUnavailable', { retryAfterSeconds: 7 }))] }),
      { until: 100_000, config: { listPageTimeoutMs: 200_000 } }, // the retried list never answers
    );
    expect(run.lw.calls.map((call) => `${call.kind}@${call.at}`)).toEqual(['list@0', 'list@7000']);
  });
});
