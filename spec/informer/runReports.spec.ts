import { InformerHealthTracker } from '../../lib/informer/informerHealth';
import { RunReports } from '../../lib/informer/runReports';
import type { Health, InformerHealth, ReflectorPhase } from '../../lib/reflector/health';
import type { RequestEvent } from '../../lib/reflector/requestEvent';

const health = (phase: ReflectorPhase, attempt = 0, since = 0): Health => ({
  phase,
  attempt,
  lastError: undefined,
  resourceVersion: '1',
  since,
  retryInMs: undefined,
  listedItems: undefined,
  remainingItemCount: undefined,
});

function reports(): { runs: RunReports; shown: string[]; requests: RequestEvent[] } {
  const tracker = new InformerHealthTracker('pods', 0);
  const shown: string[] = [];
  tracker.health$.subscribe((h: InformerHealth) => shown.push(`${h.phase} ${h.attempt} ${h.since}`));
  const runs = new RunReports(tracker);
  const requests: RequestEvent[] = [];
  runs.requests$.subscribe((event) => requests.push(event));
  return { runs, shown, requests };
}

describe('RunReports', () => {
  it('passes the reports of a single run as they come', () => {
    const { runs, shown } = reports();
    const lane = runs.lane();
    lane.health(health('listing'));
    lane.health(health('watching', 0, 3));
    lane.stop(9);
    expect(shown).toEqual(['idle 0 0', 'listing 0 0', 'watching 0 3', 'idle 0 9']);
  });

  it('shows the least healthy of runs side by side: backing off, then listing, then watching; then more attempts; then the oldest', () => {
    const { runs, shown } = reports();
    const [a, b, c] = [runs.lane(), runs.lane(), runs.lane()];
    a.health(health('watching', 0, 5));
    b.health(health('listing', 0, 6));
    c.health(health('backingOff', 2, 7));
    b.health(health('backingOff', 3, 8));
    c.health(health('watching', 0, 1));
    b.health(health('watching', 0, 9));
    // c recovering changes nothing shown while b still backs off; once all watch, the oldest is shown.
    expect(shown).toEqual(['idle 0 0', 'watching 0 5', 'listing 0 6', 'backingOff 2 7', 'backingOff 3 8', 'watching 0 1']);
  });

  it('shows nothing new when a healthier run stops, the next least healthy when the shown one stops, and idle after the last', () => {
    const { runs, shown } = reports();
    const [a, b] = [runs.lane(), runs.lane()];
    a.health(health('watching', 0, 5));
    b.health(health('backingOff', 1, 6));
    a.stop(10);
    b.health(health('watching', 0, 11));
    const c = runs.lane();
    c.health(health('listing', 0, 12));
    c.stop(13);
    b.stop(14);
    expect(shown).toEqual(['idle 0 0', 'watching 0 5', 'backingOff 1 6', 'watching 0 11', 'listing 0 12', 'watching 0 11', 'idle 0 14']);
  });

  it("reports each run's request in flight stopped when that run stops, on the shared stream", () => {
    const { runs, requests } = reports();
    const [a, b] = [runs.lane(), runs.lane()];
    a.request({ type: 'opened', request: { kind: 'watch', resourceVersion: '1' }, relist: false, after: undefined, continued: false, at: 0 });
    b.request({ type: 'opened', request: { kind: 'list', resourceVersion: '' }, relist: false, after: undefined, continued: false, at: 1 });
    a.count({ type: 'Added', object: { metadata: { name: 'x' } } });
    a.stop(5);
    expect(requests.map((event) => `${event.type} ${event.request.kind}${event.type === 'ended' ? ` ${event.outcome} ${event.items}` : ''}`)).toEqual(['opened watch', 'opened list', 'ended watch stopped 1']);
  });
});
