import { silentLogger } from '../../lib/base/logger';
import type { Subscription } from 'rxjs';
import type { HandlerEvent } from '../../lib/handlers/resourceHandlers';
import { HandlerQueueOverflowError } from '../../lib/handlers/notifications';
import { informer } from '../../lib/informer/informer';
import { waitForSync } from '../../lib/informer/waitForSync';
import { pods, type Pod } from '../../lib/resources/builtins';
import type { Snapshot } from '../../lib/store/snapshot';
import { startApiServer, type ApiServer } from '../../apiserver/src';
import { describeEachServerVersion } from '../support/serverVersions';
import { eventually, firstSatisfying } from '../support/eventually';

const pod = (name: string, phase: 'Pending' | 'Running' = 'Pending'): Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'default', name }, status: { phase } });

/**
 * A handler stuck on a slow reconcile while many pods change and go, over real HTTP: past its
 * `maxPending` it is told once, and when it is released it catches up to exactly the cache,
 * every delete included.
 */
describeEachServerVersion('a handler that falls behind its maxPending', (serverVersion) => {
  let server: ApiServer;
  beforeEach(async () => {
    server = await startApiServer({ serverVersion });
    for (let i = 0; i < 20; i++) server.store.create(pods, pod(`web-${i}`));
  });
  afterEach(async () => {
    await server.close();
  });

  it('is told once, then receives every change it missed, deletes included, and ends with the cache', async () => {
    const podInformer = informer(server.kubeConfig, pods, { namespace: 'default', logger: silentLogger });
    let latest: Snapshot<Pod> | undefined;
    const running: Subscription = podInformer.informer$.subscribe((snapshot) => (latest = snapshot));
    await waitForSync([podInformer], { timeout: 10_000 });

    const held = new Map<string, Pod>();
    const deleted: string[] = [];
    let release: () => void = () => undefined;
    const stuck = new Promise<void>((resolve) => (release = resolve));
    let updates = 0;
    const events: HandlerEvent<Pod>[] = [];
    const handler = podInformer
      .handle(
        {
          onAdd: (object, { key }) => void held.set(key, object),
          onUpdate: (_old, object, { key }) => {
            held.set(key, object);
            return ++updates === 1 ? stuck : undefined; // the first reconcile hangs
          },
          onDelete: (_object, { key }) => {
            held.delete(key);
            deleted.push(key);
          },
        },
        { maxPending: 3 },
      )
      .subscribe((event) => events.push(event));
    await firstSatisfying(podInformer.handle({}), (event) => expect(event.type).toBe('synced'));

    server.store.update(pods, { ...server.store.get(pods, 'default', 'web-0')!, status: { phase: 'Running' } });
    for (let i = 1; i <= 10; i++) server.store.delete(pods, 'default', `web-${i}`);
    for (let i = 11; i <= 15; i++) server.store.update(pods, { ...server.store.get(pods, 'default', `web-${i}`)!, status: { phase: 'Running' } });
    for (let i = 20; i < 25; i++) server.store.create(pods, pod(`web-${i}`));
    const expectedSize = 20 - 10 + 5;
    await eventually(() => {
      expect(latest?.size).toBe(expectedSize);
      expect(latest?.get('default/web-15')?.status?.phase).toBe('Running');
    });
    expect(events.filter((event) => event.type === 'error')).toHaveLength(1);
    expect(events.find((event) => event.type === 'error')).toMatchObject({ error: expect.any(HandlerQueueOverflowError) });

    release();
    const cache = latest!;
    const holdsCache = (): boolean => held.size === cache.size && [...held].every(([key, object]) => cache.get(key) === object);
    await eventually(
      () => {
        expect([...held.keys()].sort()).toEqual([...cache.keys()].sort());
        expect([...held].filter(([key, object]) => cache.get(key) !== object).map(([key]) => key)).toEqual([]);
      },
      { timeoutMs: 5_000 },
    );
    expect(holdsCache()).toBe(true);
    expect(deleted.sort()).toEqual(Array.from({ length: 10 }, (_, i) => `default/web-${i + 1}`).sort());
    handler.unsubscribe();
    running.unsubscribe();
  });
});
