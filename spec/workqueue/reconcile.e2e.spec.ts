import { silentLogger } from '../../lib/base/logger';
import type { Subscription } from 'rxjs';
import { informer } from '../../lib/informer/informer';
import { pods, type Pod } from '../../lib/resources/builtins';
import type { Snapshot } from '../../lib/store/snapshot';
import { createChurn, startApiServer, type ApiServer } from '../../apiserver/src';
import { hashString } from '../../apiserver/src/random';
import { changedKeys } from '../../lib/workqueue/changedKeys';
import { reconcile, type QueueStats } from '../../lib/workqueue/reconcile';
import { eventually } from '../support/eventually';
import { describeEachServerVersion } from '../support/serverVersions';

/**
 * reconcile() behind a real informer over HTTP, in real time, while the loopback server churns
 * pods: no key is ever reconciled twice at once, failures come back, and once the churn stops
 * every key's last reconcile has seen its final state.
 */

describeEachServerVersion('reconcile() over an informer against the loopback server', (serverVersion) => {
  let server: ApiServer;
  let running: Subscription[];
  beforeEach(async () => {
    server = await startApiServer({ serverVersion });
    running = [];
  });
  afterEach(async () => {
    running.forEach((subscription) => subscription.unsubscribe());
    await server.close();
  });

  it('reconciles every key to its final state under churn, one worker per key, retrying failures', async () => {
    const churn = createChurn(server.store, { pods: 60, namespaces: 3, managedFields: false, seed: 7 });
    churn.populate();
    const podInformer = informer(server.kubeConfig, pods, { logger: silentLogger });
    let latest: Snapshot<Pod> | undefined;
    running.push(podInformer.informer$.subscribe((snapshot) => (latest = snapshot)));

    const inFlight = new Set<string>();
    const overlaps: string[] = [];
    const seen = new Map<string, string>();
    const attempts = new Map<string, number>();
    let failures = 0;
    let queue: QueueStats | undefined;
    const work$ = podInformer.informer$.pipe(
      changedKeys(),
      reconcile(
        async (key) => {
          if (inFlight.has(key)) overlaps.push(key);
          inFlight.add(key);
          try {
            const attempt = (attempts.get(key) ?? 0) + 1;
            attempts.set(key, attempt);
            const resourceVersion = latest?.get(key)?.metadata.resourceVersion ?? 'gone';
            await new Promise((resolve) => setTimeout(resolve, hashString(key) % 4));
            // One key in five fails its first attempt.
            if (attempt === 1 && hashString(key) % 5 === 0) throw new Error(`first attempt at ${key}`);
            seen.set(key, resourceVersion);
          } finally {
            inFlight.delete(key);
          }
        },
        { concurrency: 4 },
      ),
    );
    running.push(
      work$.subscribe((event) => {
        if (event.type === 'failed') failures += 1;
        if (event.type === 'queue') queue = event;
      }),
    );

    for (let burst = 0; burst < 10; burst++) {
      for (let i = 0; i < 30; i++) churn.step();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const final = server.store.list(pods);
    const finalVersions = new Map(final.map((pod) => [`${pod.metadata.namespace}/${pod.metadata.name}`, pod.metadata.resourceVersion!]));
    // Settled: the cache at the server's version, the queue drained, every key reconciled at its final version.
    await eventually(
      () => {
        expect(latest?.resourceVersion).toBe(server.store.resourceVersion);
        expect(queue).toMatchObject({ depth: 0, inFlight: 0, waiting: 0 });
        expect([...finalVersions].filter(([key, version]) => seen.get(key) !== version).map(([key, version]) => ({ key, want: version, seen: seen.get(key) }))).toEqual([]);
      },
      { timeoutMs: 15_000 },
    );

    expect(overlaps).toEqual([]);
    expect(failures).toBeGreaterThan(0);
    expect(queue).toMatchObject({ depth: 0, inFlight: 0, waiting: 0, failing: 0 });
    // Keys that were deleted were last reconciled with the object gone.
    for (const [key, version] of seen) if (!finalVersions.has(key)) expect(version).toBe('gone');
    // Far fewer reconciles than changes: a key waiting in the queue is there once.
    const changes = churn.stats.creates + churn.stats.updates + churn.stats.deletes;
    expect([...attempts.values()].reduce((a, b) => a + b, 0)).toBeLessThan(60 + changes);
  });
});
