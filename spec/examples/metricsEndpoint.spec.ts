import { pods, type Pod } from '../../lib/resources/builtins';
import { startApiServer, type ApiServer } from '../../apiserver/src';
import { main, type MetricsEndpoint } from '../../examples/metricsEndpoint';
import { eventually } from '../support/eventually';

const pod = (name: string): Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'default', name } });

/** Scrapes `url` every 20 ms until the text matches `pattern`; fails after 10 s with the last text. */
function scrapeUntil(url: string, pattern: RegExp): Promise<string> {
  return eventually(
    async () => {
      const text = await (await fetch(url)).text();
      expect(text).toMatch(pattern);
      return text;
    },
    { timeoutMs: 10_000, intervalMs: 20 },
  );
}

describe('example: the /metrics endpoint, against the loopback API server', () => {
  let server: ApiServer;
  let endpoint: MetricsEndpoint | undefined;
  beforeEach(async () => {
    server = await startApiServer();
  });
  afterEach(async () => {
    await endpoint?.close();
    await server.close();
  });

  it("serves the informer's and the queue's metrics in the Prometheus text format", async () => {
    server.store.create(pods, pod('one'));
    server.store.create(pods, pod('two'));
    endpoint = await main(server.kubeConfig, { port: 0 });
    const text = await scrapeUntil(endpoint.url, /^workqueue_work_duration_seconds_count\{name="pods"\} 2$/m);
    expect(text).toMatch(/^# TYPE reflector_lists_total counter$/m);
    expect(text).toMatch(/^reflector_lists_total\{name="pods"\} 1$/m);
    expect(text).toMatch(/^reflector_items_per_list_sum\{name="pods"\} 2$/m);
    expect(text).toMatch(/^workqueue_adds_total\{name="pods"\} 2$/m);

    server.store.create(pods, pod('three'));
    await scrapeUntil(endpoint.url, /^rx_informer_watch_events_total\{name="pods",type="ADDED"\} 1$/m);
    expect((await fetch(endpoint.url.replace('/metrics', '/other'))).status).toBe(404);
  });
});
