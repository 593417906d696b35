import { VirtualAction, VirtualTimeScheduler } from 'rxjs';
import { pods } from '../../lib/resources/builtins';
import { startApiServer, type ApiServer, type ApiServerOptions } from '../../apiserver/src/server';
import { NEWEST_SERVER_VERSION, OLDEST_SERVER_VERSION, type ServerVersion } from '../../apiserver/src/serverVersion';
import { get, openWatch, type WatchEvent } from './httpHelpers';

/**
 * The watch cache's window apart from etcd's: a watch can only start inside the watch cache's
 * recent history, while an Exact list is served from etcd, with the state as it was, until etcd
 * compacts that version. The same in every version.
 */

let server: ApiServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

const names = (reply: { json: { items: { metadata: { name: string } }[] } }): string[] => reply.json.items.map((item) => item.metadata.name);

/** Creates pods p1..pN, returning the resourceVersion after each. */
function createPods(target: ApiServer, count: number, from = 1): string[] {
  const versions: string[] = [];
  for (let i = from; i < from + count; i++) {
    target.store.create(pods, { metadata: { name: `p${i}`, namespace: 'ns' } });
    versions.push(target.store.resourceVersion);
  }
  return versions;
}

/** The events of a watch from `rv` that the server ends by itself (an ERROR), or its first `n` events. */
async function watchFrom(target: ApiServer, rv: string, n = 1): Promise<WatchEvent[]> {
  const stream = await openWatch(target, `/api/v1/namespaces/ns/pods?watch=1&resourceVersion=${rv}`);
  await stream.until((s) => s.lines.length >= n || s.outcome !== 'open', `${n} watch lines or the end of the watch`);
  stream.close();
  return stream.events.slice(0, n);
}

function tooOld(rv: string, oldest: string): WatchEvent[] {
  return [{ type: 'ERROR', object: expect.objectContaining({ code: 410, reason: 'Expired', message: `too old resource version: ${rv} (${oldest})` }) }];
}

describe.each([OLDEST_SERVER_VERSION, NEWEST_SERVER_VERSION])('Kubernetes %s', (serverVersion: ServerVersion) => {
  async function start(options: ApiServerOptions): Promise<ApiServer> {
    server = await startApiServer({ serverVersion, bookmarkIntervalMs: 0, ...options });
    return server;
  }

  describe('a version the watch cache no longer holds (watchCacheCapacity 3 of historyLimit 100)', () => {
    it('answers a watch from it with ERROR 410, naming the oldest version a watch can start from', async () => {
      const target = await start({ watchCacheCapacity: 3, historyLimit: 100 });
      const [v1, v2, v3] = createPods(target, 5);
      // The cache holds p3, p4, p5: a watch can start from v2 (p3's version minus one) on.
      expect(await watchFrom(target, v1!)).toEqual(tooOld(v1!, v2!));
      expect((await watchFrom(target, v2!)).map((event) => event.object.metadata.name)).toEqual(['p3']);
      expect((await watchFrom(target, v3!)).map((event) => event.object.metadata.name)).toEqual(['p4']);
    });

    it('serves an Exact list at it from etcd, with the state as it was then', async () => {
      const target = await start({ watchCacheCapacity: 3, historyLimit: 100 });
      const [v1] = createPods(target, 5);
      target.store.delete(pods, 'ns', 'p1');
      for (const query of [`resourceVersion=${v1}&resourceVersionMatch=Exact`, `resourceVersion=${v1}&limit=500`]) {
        const reply = await get(target, `/api/v1/namespaces/ns/pods?${query}`);
        expect([query, reply.json.metadata.resourceVersion, names(reply)]).toEqual([query, v1, ['p1']]);
      }
    });

    it('serves a NotOlderThan list at it (no limit, or an explicit match) with the current state', async () => {
      const target = await start({ watchCacheCapacity: 3, historyLimit: 100 });
      const [v1] = createPods(target, 5);
      for (const query of [`resourceVersion=${v1}`, `resourceVersion=${v1}&resourceVersionMatch=NotOlderThan&limit=500`]) {
        const reply = await get(target, `/api/v1/namespaces/ns/pods?${query}`);
        expect([query, reply.json.metadata.resourceVersion, names(reply)]).toEqual([query, target.store.resourceVersion, ['p1', 'p2', 'p3', 'p4', 'p5']]);
      }
    });
  });

  it('drops events older than watchCacheWindowMs from the watch cache as new ones arrive', async () => {
    const scheduler = new VirtualTimeScheduler(VirtualAction, 0);
    const target = await start({ watchCacheWindowMs: 1_000, scheduler, etcdCompactionIntervalMs: 0 });
    const [v1, v2] = createPods(target, 2);
    scheduler.frame = 900;
    expect((await watchFrom(target, v1!)).map((event) => event.object.metadata.name)).toEqual(['p2']);
    scheduler.frame = 1_950;
    // p1 (recorded at 0) is stale now; p2 (at 0) too; p3, just recorded, stays.
    const [v3] = createPods(target, 1, 3);
    expect(await watchFrom(target, v1!)).toEqual(tooOld(v1!, v2!));
    expect((await watchFrom(target, v2!)).map((event) => event.object.metadata.name)).toEqual(['p3']);
    expect(v3).toBe(String(Number(v2) + 1));
  });

  describe('etcd compaction', () => {
    it('store.compact(): an Exact list and a watch from before it both get 410', async () => {
      const target = await start({});
      const [v1] = createPods(target, 2);
      target.store.compact();
      const exact = await get(target, `/api/v1/namespaces/ns/pods?resourceVersion=${v1}&resourceVersionMatch=Exact`);
      expect([exact.status, exact.json.reason, exact.json.message]).toEqual([410, 'Expired', 'The resourceVersion for the provided list is too old.']);
      expect(await watchFrom(target, v1!)).toEqual(tooOld(v1!, target.store.resourceVersion));
    });

    it('store.compact({ keepWatchCache: true }), as etcd compacts: the Exact list gets 410, the watch is still served', async () => {
      const target = await start({});
      const [v1] = createPods(target, 2);
      target.store.compact({ keepWatchCache: true });
      expect((await get(target, `/api/v1/namespaces/ns/pods?resourceVersion=${v1}&limit=10`)).status).toBe(410);
      expect((await watchFrom(target, v1!)).map((event) => event.object.metadata.name)).toEqual(['p2']);
    });

    it('compacts every etcdCompactionIntervalMs at the version the previous run saw, leaving the watch cache', async () => {
      const scheduler = new VirtualTimeScheduler(VirtualAction, 0);
      const target = await start({ etcdCompactionIntervalMs: 1_000, scheduler });
      const exactStatus = async (rv: string): Promise<number> => (await get(target, `/api/v1/namespaces/ns/pods?resourceVersion=${rv}&resourceVersionMatch=Exact`)).status;
      const [a1, a2] = createPods(target, 2);
      scheduler.maxFrames = 1_000;
      scheduler.flush(); // the first run only notes where etcd is: a2
      expect(await exactStatus(a1!)).toBe(200);
      const [b1] = createPods(target, 1, 3);
      scheduler.maxFrames = 2_000;
      scheduler.flush(); // compacts at a2
      expect([await exactStatus(a1!), await exactStatus(a2!), await exactStatus(b1!)]).toEqual([410, 200, 200]);
      expect((await watchFrom(target, a1!)).map((event) => event.object.metadata.name)).toEqual(['p2']);
    });
  });

  it('store.resetWatchCache(), as a restart does: watches from before it get 410, Exact lists are still served', async () => {
    const target = await start({});
    const [v1] = createPods(target, 2);
    target.store.resetWatchCache();
    const now = target.store.resourceVersion;
    expect(await watchFrom(target, v1!)).toEqual(tooOld(v1!, now));
    expect(names(await get(target, `/api/v1/namespaces/ns/pods?resourceVersion=${v1}&resourceVersionMatch=Exact`))).toEqual(['p1']);
    const [v3] = createPods(target, 1, 3);
    expect((await watchFrom(target, now)).map((event) => [event.object.metadata.name, event.object.metadata.resourceVersion])).toEqual([['p3', v3]]);
  });

  it('answers an Exact list from before the history it keeps (historyLimit) with 410', async () => {
    const target = await start({ historyLimit: 2 });
    const [v1] = createPods(target, 4);
    expect((await get(target, `/api/v1/namespaces/ns/pods?resourceVersion=${v1}&resourceVersionMatch=Exact`)).status).toBe(410);
  });
});
