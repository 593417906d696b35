import type { Observable } from 'rxjs';
import { ResourceGoneError, StatusError } from '../../lib/base/errors';
import type { ListPage, WatchEvent } from '../../lib/sources/listerWatcher';
import { describeCalls, initialEventsEnd, page, simulate, statusError } from './reflectHarness';

/**
 * A collection answered 404 is a resource the API server does not serve (its CRD deleted, or not
 * installed yet): the reflector says so with a ResourceGoneError and retries at its slower
 * `resourceGoneBackoff` (default 5 s doubling to 2 min, each wait in [d, 2d)), until the resource
 * is served again.
 */

const notFound = (): StatusError =>
  new StatusError({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 404, reason: 'NotFound', message: 'the server could not find the requested resource' }, undefined, 'GET /apis/example.com/v1/widgets');

type Cold = <V>(marbles: string, values?: Record<string, V>, error?: unknown) => Observable<V>;
const listFails = (cold: Cold, error: unknown = notFound()) => () => cold<ListPage>('#', {}, error);
const listed = (cold: Cold, resourceVersion: string) => () => cold<ListPage>('(a|)', { a: page([], resourceVersion) });

/** Gaps between consecutive calls of one kind: the waits the reflector chose. */
function gaps(calls: readonly { kind: string; at: number }[], kind: 'list' | 'watch'): number[] {
  const times = calls.filter((call) => call.kind === kind).map((call) => call.at);
  return times.slice(1).map((at, i) => at - (times[i] ?? 0));
}

describe('reflect: a resource the API server does not serve (404)', () => {
  it('shows a ResourceGoneError on health from the first 404, retrying at 5 s doubling to 2 min rather than at 800 ms', () => {
    const run = simulate(({ cold }) => ({ lists: Array.from({ length: 8 }, () => listFails(cold)) }), { until: 500_000 });
    expect(gaps(run.lw.calls, 'list')).toEqual([5_000, 10_000, 20_000, 40_000, 80_000, 120_000, 120_000]);
    const backingOff = run.health.filter((h) => h.phase === 'backingOff');
    expect(backingOff.map((h) => [h.attempt, h.retryInMs])).toEqual([
      [1, 5_000],
      [2, 10_000],
      [3, 20_000],
      [4, 40_000],
      [5, 80_000],
      [6, 120_000],
      [7, 120_000],
      [8, 120_000],
    ]);
    const gone = backingOff[0]?.lastError;
    expect(gone).toBeInstanceOf(ResourceGoneError);
    expect(gone?.kind).toBe('resourceGone');
    expect((gone as ResourceGoneError).request).toBe('GET /apis/example.com/v1/widgets');
    expect((gone as ResourceGoneError).cause).toBeInstanceOf(StatusError);
    expect(gone?.message).toBe('the resource is not served (404 NotFound on GET /apis/example.com/v1/widgets: the server could not find the requested resource)');
  });

  it('draws each wait from [d, 2d) like every backoff, so informers that lost the same CRD do not retry together', () => {
    const run = simulate(({ cold }) => ({ lists: Array.from({ length: 3 }, () => listFails(cold)) }), { until: 50_000, config: { random: () => 0.5 } });
    expect(gaps(run.lw.calls, 'list')).toEqual([7_500, 15_000]);
  });

  it('relists after a 404 on the watch (a CRD created again serves new objects), at the slower pace', () => {
    const run = simulate(
      ({ cold }) => ({
        lists: [listed(cold, '10'), listed(cold, '20')],
        watches: [() => cold<WatchEvent>('1s #', {}, notFound())],
      }),
      { until: 10_000 },
    );
    expect(describeCalls(run.lw.calls)).toEqual(['list@0 rv=0', 'watch@0 rv=10', 'list@6000 rv=10 unpaged', 'watch@6000 rv=20']);
  });

  it('resumes once the resource is served again: the list syncs, health clears, and a later 404 starts the slow sequence over', () => {
    const run = simulate(
      ({ cold }) => ({
        lists: [listFails(cold), listFails(cold), listed(cold, '10'), listed(cold, '30')],
        watches: [() => cold<WatchEvent>('1s #', {}, notFound())],
      }),
      { until: 30_000 },
    );
    // Gone at 0 and 5 s; served at 15 s; the watch gets a 404 at 16 s, and 5 s later it relists.
    expect(describeCalls(run.lw.calls)).toEqual(['list@0 rv=0', 'list@5000 rv=0', 'list@15000 rv=0', 'watch@15000 rv=10', 'list@21000 rv=10 unpaged', 'watch@21000 rv=30']);
    const synced = run.health.find((h) => h.phase === 'watching');
    expect(synced).toMatchObject({ attempt: 0, lastError: undefined, resourceVersion: '10' });
  });

  it('keeps its sequence apart from that of other failures: a 500 between two 404s waits 800 ms, and the second 404 waits 10 s', () => {
    const run = simulate(({ cold }) => ({ lists: [listFails(cold), listFails(cold, statusError(500, 'InternalError')), listFails(cold), listFails(cold)] }), {
      until: 20_000,
    });
    expect(describeCalls(run.lw.calls)).toEqual(['list@0 rv=0', 'list@5000 rv=0', 'list@5800 rv=0', 'list@15800 rv=0']);
    expect(run.health.filter((h) => h.phase === 'backingOff').map((h) => h.lastError?.kind)).toEqual(['resourceGone', 'status', 'resourceGone', 'resourceGone']);
  });

  it('keeps streaming lists after a 404 on one (it says nothing about streaming), retried at the slower pace', () => {
    const run = simulate(
      ({ cold }) => ({
        watches: [() => cold<WatchEvent>('#', {}, notFound()), () => cold<WatchEvent>('(a)', { a: initialEventsEnd('7') })],
      }),
      { until: 10_000, config: { streamingList: true } },
    );
    expect(describeCalls(run.lw.calls)).toEqual(['watch@0 rv= streaming match=NotOlderThan', 'watch@5000 rv= streaming match=NotOlderThan']);
    expect(run.health.at(-1)).toMatchObject({ phase: 'watching', attempt: 0, lastError: undefined, resourceVersion: '7' });
  });

  it('follows resourceGoneBackoff from the config', () => {
    const run = simulate(({ cold }) => ({ lists: Array.from({ length: 5 }, () => listFails(cold)) }), {
      until: 14_000,
      config: { resourceGoneBackoff: { initialMs: 1_000, maxMs: 4_000, jitter: 'none' } },
    });
    expect(gaps(run.lw.calls, 'list')).toEqual([1_000, 2_000, 4_000, 4_000]);
  });

  it('logs each 404 as a warning that names the request: a state to know of, which may be on purpose (a CRD deleted)', () => {
    const run = simulate(({ cold }) => ({ lists: [listFails(cold), listFails(cold)] }), { until: 6_000, config: { name: 'widgets.example.com' } });
    const warnings = run.log.filter((line) => line.level === 'warn');
    expect(warnings).toHaveLength(2);
    expect(warnings[0]?.fields).toMatchObject({ informer: 'widgets.example.com', attempt: 1, retryInMs: 5_000 });
    expect(warnings[0]?.fields['err']).toBeInstanceOf(ResourceGoneError);
    expect(run.log.filter((line) => line.level === 'error')).toEqual([]);
  });

  it('rejects a resourceGoneBackoff out of range at once', () => {
    expect(() => simulate(() => ({}), { until: 1, config: { resourceGoneBackoff: { initialMs: -1 } } })).toThrow(RangeError);
  });
});
