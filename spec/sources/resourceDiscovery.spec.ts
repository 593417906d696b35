import { TestScheduler } from 'rxjs/testing';
import { NetworkError, ResourceGoneError } from '../../lib/base/errors';
import { defineResource } from '../../lib/resources/resource';
import type { DiscoveredResource } from '../../lib/sources/discoveryDocuments';
import { cachedDiscovery, isAggregatedDiscovery } from '../../lib/sources/resourceDiscovery';

/**
 * The discovery cache (client-go's memcache client under a deferred RESTMapper): fetched on first
 * use and shared, fetched again on a miss at most once per `minRefreshInterval`, on the
 * scheduler's clock (virtual time here), failures not cached, `invalidate()` forgetting.
 */

const entry = (group: string, kind: string, plural: string, shortNames: readonly string[] = []): DiscoveredResource => ({
  resource: defineResource({ group, version: 'v1', plural, kind, namespaced: true }),
  singular: kind.toLowerCase(),
  shortNames,
  verbs: ['list', 'watch'],
  categories: [],
  preferred: true,
});

const pods = entry('', 'Pod', 'pods', ['po']);
const gizmos = entry('example.org', 'Gizmo', 'gizmos', ['gz']);

/** A server whose table the spec changes, counting fetches; the clock is a TestScheduler's frame. */
function harness(minRefreshInterval = 30_000) {
  const scheduler = new TestScheduler(() => undefined);
  scheduler.maxFrames = Number.POSITIVE_INFINITY;
  const state = { table: [pods] as DiscoveredResource[], fetches: 0, failNext: undefined as Error | undefined };
  const discovery = cachedDiscovery(
    async () => {
      state.fetches += 1;
      const failure = state.failNext;
      state.failNext = undefined;
      if (failure !== undefined) throw failure;
      return state.table;
    },
    { minRefreshInterval, scheduler },
  );
  /** Moves virtual time on by `ms`. */
  const advance = (ms: number): void => {
    scheduler.schedule(() => undefined, ms);
    scheduler.flush();
  };
  return { scheduler, state, discovery, advance };
}

describe('cachedDiscovery', () => {
  it('fetches on first use only, and shares one fetch between concurrent look-ups', async () => {
    const { state, discovery } = harness();
    const [byKind, byName] = await Promise.all([discovery.resourceForKind('v1', 'Pod'), discovery.resourceForName('po')]);
    expect([byKind.resource.plural, byName.resource.plural]).toEqual(['pods', 'pods']);
    await discovery.resourceForName('pods');
    expect(state.fetches).toBe(1);
  });

  it('finds a resource created after the first fetch once the table is minRefreshInterval old, and fetches at most once per interval for a name that never comes', async () => {
    const { scheduler, state, discovery, advance } = harness(30_000);
    await discovery.resources();
    state.table = [pods, gizmos];
    advance(29_999);
    await expect(discovery.resourceForKind('example.org/v1', 'Gizmo')).rejects.toThrow(ResourceGoneError);
    expect(state.fetches).toBe(1);
    advance(1);
    expect((await discovery.resourceForKind('example.org/v1', 'Gizmo')).resource.plural).toBe('gizmos');
    expect(state.fetches).toBe(2);

    // A name nobody serves, asked for every second for two minutes from the fetch at 30 s: one
    // fetch at 60 s, 90 s and 120 s, none in between.
    const fetchedAt: number[] = [];
    for (let second = 0; second < 120; second += 1) {
      const before = state.fetches;
      await discovery.resourceForName('widgets').catch(() => undefined);
      if (state.fetches > before) fetchedAt.push(scheduler.now());
      advance(1_000);
    }
    expect(fetchedAt).toEqual([60_000, 90_000, 120_000]);
  });

  it('names what it did not find in a ResourceGoneError', async () => {
    const { discovery } = harness();
    await expect(discovery.resourceForKind('example.org/v1', 'Gizmo')).rejects.toThrow('the server serves no resource of kind Gizmo in example.org/v1 (discovery found none)');
    await expect(discovery.resourceForName('gz')).rejects.toThrow('the server serves no resource named "gz" (discovery found none)');
  });

  it('refetches on every miss with a minRefreshInterval of 0', async () => {
    const { state, discovery } = harness(0);
    await discovery.resources();
    await discovery.resourceForName('gz').catch(() => undefined);
    await discovery.resourceForName('gz').catch(() => undefined);
    expect(state.fetches).toBe(3);
  });

  it('does not cache a failed fetch: the next look-up tries again', async () => {
    const { state, discovery } = harness();
    state.failNext = new NetworkError('GET /api failed: connect ECONNREFUSED', 'ECONNREFUSED');
    await expect(discovery.resourceForName('po')).rejects.toBeInstanceOf(NetworkError);
    expect((await discovery.resourceForName('po')).resource.plural).toBe('pods');
    expect(state.fetches).toBe(2);
  });

  it('forgets the table on invalidate(), whatever its age', async () => {
    const { state, discovery } = harness();
    await discovery.resources();
    state.table = [pods, gizmos];
    discovery.invalidate();
    expect((await discovery.resources()).map((found) => found.resource.plural)).toEqual(['pods', 'gizmos']);
    expect(state.fetches).toBe(2);
  });

  it('refuses a negative interval at once', () => {
    expect(() => cachedDiscovery(async () => [], { minRefreshInterval: -1 })).toThrow(RangeError);
  });
});

describe('isAggregatedDiscovery', () => {
  it('tells an aggregated answer by its Content-Type, as client-go does', () => {
    expect(isAggregatedDiscovery('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList')).toBe(true);
    expect(isAggregatedDiscovery('application/json; g=apidiscovery.k8s.io; v=v2beta1; as=APIGroupDiscoveryList')).toBe(true);
    expect(isAggregatedDiscovery('application/json')).toBe(false);
    expect(isAggregatedDiscovery('application/json;g=apidiscovery.k8s.io;v=v1;as=APIGroupDiscoveryList')).toBe(false);
    expect(isAggregatedDiscovery(undefined)).toBe(false);
  });
});
