import { silentLogger } from '../../lib/base/logger';
import { Registry } from 'prom-client';
import type { Subscription } from 'rxjs';
import { informerFactory } from '../../lib/factory/factory';
import { informer } from '../../lib/informer/informer';
import { waitForSync } from '../../lib/informer/waitForSync';
import { registerInformerMetrics, registerWorkqueueMetrics } from '../../lib/prometheus/index';
import { pods, type Pod } from '../../lib/resources/builtins';
import { startApiServer, type ApiServer } from '../../apiserver/src';
import { changedKeys } from '../../lib/workqueue/changedKeys';
import { reconcile } from '../../lib/workqueue/reconcile';
import { eventually } from '../support/eventually';

/**
 * An informer and a reconcile queue over HTTP against the loopback server, in real time, scraped
 * through a real prom-client registry after a known sequence: a list, watch events, a watch that
 * ends, a 410 that relists, a reconcile that fails once and is retried.
 */

function pod(name: string): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'default', name } };
}

/** The scraped value of one series (`metric{labels}` exactly as exposed), or undefined. */
function valueOf(scraped: string, series: string): number | undefined {
  const line = scraped.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('metrics over HTTP, scraped through prom-client', () => {
  let server: ApiServer;
  let running: Subscription[];
  beforeEach(async () => {
    server = await startApiServer();
    running = [];
  });
  afterEach(async () => {
    running.forEach((subscription) => subscription.unsubscribe());
    await server.close();
  });

  it('counts the list, the watch events, the 410 relist and the reconcile retry', async () => {
    for (const name of ['p1', 'p2', 'p3']) server.store.create(pods, pod(name));
    // The first watch ends cleanly after 3 events; the re-watch that follows is answered 410.
    server.faults.inject({ kind: 'closeAfterEvents', events: 3 }, { verb: 'watch', resource: 'pods' });
    server.faults.inject({ kind: 'status', code: 410, reason: 'Expired', message: 'too old resource version' }, { verb: 'watch', resource: 'pods' });

    const registry = new Registry();
    const podInformer = informer(server.kubeConfig, pods, { namespace: 'default', streamingList: false, backoff: { initialMs: 20, jitter: 'none' }, logger: silentLogger });
    running.push(registerInformerMetrics(registry, podInformer));
    const queueMetrics = registerWorkqueueMetrics(registry, { name: 'pods' });
    running.push({ unsubscribe: () => queueMetrics.unregister() } as Subscription);

    const attempts = new Map<string, number>();
    const outcomes: string[] = [];
    running.push(
      podInformer.informer$
        .pipe(
          changedKeys(),
          reconcile(
            async (key) => {
              const attempt = (attempts.get(key) ?? 0) + 1;
              attempts.set(key, attempt);
              if (key === 'default/p2' && attempt === 1) throw new Error('p2 is not ready yet');
            },
            { name: 'pods', metrics: queueMetrics },
          ),
        )
        .subscribe((event) => event.type !== 'queue' && outcomes.push(`${event.type} ${event.key}`)),
    );

    // The initial list: three keys reconciled, p2 after one retry.
    await eventually(() => expect(outcomes.filter((o) => o.startsWith('reconciled'))).toHaveLength(3));
    let scraped = await registry.metrics();
    expect(valueOf(scraped, 'reflector_lists_total{name="pods@default"}')).toBe(1);
    expect(valueOf(scraped, 'reflector_items_per_list_sum{name="pods@default"}')).toBe(3);
    expect(valueOf(scraped, 'reflector_watches_total{name="pods@default"}')).toBe(1);
    expect(valueOf(scraped, 'workqueue_retries_total{name="pods"}')).toBe(1);
    // p1, p2, p3, and p2 again after its failure.
    expect(valueOf(scraped, 'workqueue_adds_total{name="pods"}')).toBe(4);
    expect(valueOf(scraped, 'workqueue_work_duration_seconds_count{name="pods"}')).toBe(4);
    expect(valueOf(scraped, 'workqueue_queue_duration_seconds_count{name="pods"}')).toBe(4);
    expect(valueOf(scraped, 'workqueue_depth{name="pods"}')).toBe(0);
    expect(valueOf(scraped, 'workqueue_unfinished_work_seconds{name="pods"}')).toBe(0);

    // Three watch events end the first watch; the re-watch meets the 410 and the informer relists.
    server.store.create(pods, pod('p4'));
    server.store.update(pods, { ...pod('p4'), metadata: { ...pod('p4').metadata, labels: { ready: 'true' } } });
    const deleted = server.store.delete(pods, 'default', 'p1');
    const requests = (verb: string): number => server.requests.entries.filter((r) => r.verb === verb && r.resource === 'pods').length;
    await eventually(() => expect({ list: requests('list'), watch: requests('watch') }).toEqual({ list: 2, watch: 3 }));
    await eventually(() => expect(attempts.get('default/p1')).toBe(2));

    scraped = await registry.metrics();
    expect(valueOf(scraped, 'reflector_lists_total{name="pods@default"}')).toBe(2);
    expect(valueOf(scraped, 'rx_informer_relists_total{name="pods@default",cause="expired"}')).toBe(1);
    expect(valueOf(scraped, 'rx_informer_relists_total{name="pods@default",cause="error"}')).toBe(0);
    expect(valueOf(scraped, 'rx_informer_watch_events_total{name="pods@default",type="ADDED"}')).toBe(1);
    expect(valueOf(scraped, 'rx_informer_watch_events_total{name="pods@default",type="MODIFIED"}')).toBe(1);
    expect(valueOf(scraped, 'rx_informer_watch_events_total{name="pods@default",type="DELETED"}')).toBe(1);
    // The first watch (3 events, closed) and the one answered 410 (none) have ended; the third runs.
    expect(valueOf(scraped, 'reflector_watches_total{name="pods@default"}')).toBe(3);
    expect(valueOf(scraped, 'reflector_watch_duration_seconds_count{name="pods@default"}')).toBe(2);
    expect(valueOf(scraped, 'reflector_items_per_watch_sum{name="pods@default"}')).toBe(3);
    expect(valueOf(scraped, 'reflector_short_watches_total{name="pods@default"}')).toBe(0);
    // The relist found p2, p3 and p4.
    expect(valueOf(scraped, 'reflector_items_per_list_count{name="pods@default"}')).toBe(2);
    expect(valueOf(scraped, 'reflector_items_per_list_sum{name="pods@default"}')).toBe(6);
    expect(valueOf(scraped, 'reflector_last_resource_version{name="pods@default"}')).toBe(Number(deleted.metadata.resourceVersion));
    expect(valueOf(scraped, 'workqueue_retries_total{name="pods"}')).toBe(1);
  });

  it("records a factory's informer registered before start(), from its first list", async () => {
    server.store.create(pods, pod('p1'));
    const factory = informerFactory(server.kubeConfig);
    const podInformer = factory.informerFor(pods);
    const registry = new Registry();
    running.push(registerInformerMetrics(registry, podInformer));
    expect(valueOf(await registry.metrics(), 'reflector_lists_total{name="pods"}')).toBe(0);
    factory.start();
    try {
      await waitForSync([podInformer], { timeout: 10_000 });
      const scraped = await registry.metrics();
      expect(valueOf(scraped, 'reflector_lists_total{name="pods"}')).toBe(1);
      expect(valueOf(scraped, 'reflector_items_per_list_sum{name="pods"}')).toBe(1);
    } finally {
      await factory.shutdown();
    }
  });
});
