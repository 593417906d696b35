import type { ReflectConfig } from '../../lib/reflector/reflect';
import { StatusError } from '../../lib/base/errors';
import { NEWEST_SERVER_VERSION, OLDEST_SERVER_VERSION, startApiServer } from '../../apiserver/src';
import type { ApiServer, RequestRecord, ServerVersion } from '../../apiserver/src';
import { PodMutator, podRequests, ReflectorProbe, serverVersions, waitFor } from './faultHarness';

/**
 * The reflector against the oldest and the newest API server the loopback server models, over real
 * HTTP: what the first sync asks for, and the relist after a 410 when the watch cache no longer
 * holds the informer's version but etcd still does. There a list at that version with `limit` is an
 * Exact read, answered from etcd with the old state, and the watch from it meets the 410 again; the
 * relist must ask "not older than" (no `limit`, or a streaming list), so that the cache converges.
 */

const fast: ReflectConfig = { backoff: { initialMs: 20, maxMs: 200 }, random: () => 0.5 };

/** A streaming list: a watch with sendInitialEvents. */
const isStreamingList = (record: RequestRecord): boolean => record.verb === 'watch' && record.query['sendInitialEvents'] === 'true';

describe.each<[ServerVersion, string]>([
  [OLDEST_SERVER_VERSION, 'refuses streaming lists (422)'],
  [NEWEST_SERVER_VERSION, 'serves streaming lists'],
])('reflect against API server %s, which %s', (serverVersion) => {
  let server: ApiServer;
  let pods: PodMutator;
  let probe: ReflectorProbe | undefined;
  const streams = serverVersion === NEWEST_SERVER_VERSION;

  beforeEach(async () => {
    server = await startApiServer({ serverVersion, watchCacheCapacity: 20 });
    pods = new PodMutator(server);
    pods.seed(8);
  });
  afterEach(async () => {
    probe?.stop();
    probe = undefined;
    await server.close();
  });

  const run = (config: ReflectConfig = {}): ReflectorProbe => (probe = new ReflectorProbe(server.kubeConfig, { ...fast, ...config }));
  const synced = (p: ReflectorProbe): Promise<void> =>
    waitFor(
      () => p.ledger.replaces >= 1 && !p.ledger.replacing && p.lastHealth?.phase === 'watching',
      () => `not synced: ${p.ledger.replaces} replaces, health ${p.lastHealth?.phase} ${p.lastHealth?.lastError?.message ?? ''}`,
    );
  /** The consumer holds exactly the server's pods at the server's versions, and health is clean. */
  const converged = (p: ReflectorProbe): Promise<void> =>
    waitFor(
      () => {
        const mine = p.ledger.versions();
        const theirs = serverVersions(server);
        const same = !p.ledger.replacing && mine.size === theirs.size && [...theirs].every(([key, rv]) => mine.get(key) === rv);
        return same && p.lastHealth?.phase === 'watching' && p.lastHealth.lastError === undefined;
      },
      () => {
        const mine = p.ledger.versions();
        const theirs = serverVersions(server);
        const missing = [...theirs.keys()].filter((key) => !mine.has(key)).length;
        const extra = [...mine.keys()].filter((key) => !theirs.has(key)).length;
        const stale = [...theirs].filter(([key, rv]) => mine.has(key) && mine.get(key) !== rv).length;
        return `cache vs server: missing ${missing}, extra ${extra}, stale ${stale}; health ${p.lastHealth?.phase} attempt ${p.lastHealth?.attempt} ${p.lastHealth?.lastError?.message ?? ''}`;
      },
      5000,
    );
  const saw410 = (p: ReflectorProbe): boolean => p.health.some((h) => h.lastError instanceof StatusError && h.lastError.code === 410);
  /** Deletes 5 pods, creates 3, updates 5: the change the cache must catch up with. */
  const writes = (): void => {
    for (let i = 0; i < 5; i++) pods.removeOldest();
    for (let i = 0; i < 3; i++) pods.create();
    for (let i = 0; i < 5; i++) pods.update(i);
  };
  /** Requests that fill the cache: lists (not their continue pages) and streaming lists. */
  const relists = (): RequestRecord[] =>
    server.requests.entries.filter((r) => r.resource === 'pods' && ((r.verb === 'list' && r.query['continue'] === undefined) || isStreamingList(r)));

  it(streams ? 'syncs by a streaming list and goes on watching on the same stream' : 'is refused a streaming list (422), then lists in pages at "0" at once', async () => {
    const p = run();
    await synced(p);
    await converged(p);
    await waitFor(
      () => podRequests(server, 'watch').length >= (streams ? 1 : 2),
      () => 'no watch after the list',
    );
    const requests = server.requests.entries.filter((r) => r.resource === 'pods');
    if (streams) {
      expect(requests.map((r) => [r.verb, r.status, isStreamingList(r)])).toEqual([['watch', 200, true]]);
    } else {
      expect(requests.map((r) => [r.verb, r.status, isStreamingList(r), r.query['resourceVersion']])).toEqual([
        ['watch', 422, true, ''],
        ['list', 200, false, '0'],
        ['watch', 200, false, String(p.ledger.segments[0]!.replaceRv)],
      ]);
      expect(p.health.every((h) => h.lastError === undefined)).toBe(true);
    }
  });

  it.each([
    ['streaming lists on (the default)', {}],
    ['paged lists', { streamingList: false }],
  ])('converges after an API server restart with writes meanwhile: the re-watch gets 410 and the relist at the last version is answered with the current state (%s)', async (_label, config) => {
    const p = run(config);
    await synced(p);
    const lastSeen = p.ledger.segments[0]!.replaceRv;
    // In one turn: the writes reach the store, and the restart drops the watch before they are
    // sent. The new watch cache starts after them, etcd keeps the history.
    writes();
    await server.restart();
    await converged(p);

    expect(saw410(p)).toBe(true);
    const relist = relists()[relists().length - 1]!;
    expect(relist.query['resourceVersion']).toBe(String(lastSeen));
    if (isStreamingList(relist)) expect(relist.query['resourceVersionMatch']).toBe('NotOlderThan');
    else expect(relist.query['limit']).toBeUndefined();
    expect(p.ledger.violations).toEqual([]);
  });

  it.each([
    ['streaming lists on (the default)', {}],
    ['paged lists', { streamingList: false }],
  ])('converges after being away longer than the watch cache holds while etcd still has the last version (%s)', async (_label, config) => {
    // The next watch after the sync goes silent at once until the server's timeout (1 s) ends it;
    // the writes meanwhile push the informer's version out of the 20-event watch cache.
    const p = run({ ...config, watchTimeoutSeconds: { min: 1, max: 1 } });
    await synced(p);
    const watchesBefore = podRequests(server, 'watch').length;
    server.faults.inject({ kind: 'stall', ms: 3000, afterEvents: 0 }, { verb: 'watch', resource: 'pods' });
    await waitFor(
      () => podRequests(server, 'watch').length > watchesBefore,
      () => 'no new watch',
      3000,
    );
    pods.burst(30);
    await converged(p);

    expect(saw410(p)).toBe(true);
    const relist = relists()[relists().length - 1]!;
    if (isStreamingList(relist)) expect(relist.query['resourceVersionMatch']).toBe('NotOlderThan');
    else expect(relist.query['limit']).toBeUndefined();
    expect(p.ledger.violations).toEqual([]);
  }, 15_000);
});
