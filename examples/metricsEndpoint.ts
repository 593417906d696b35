/**
 * A /metrics endpoint: a pod informer and a reconcile queue, their metrics exported through
 * prom-client under client-go's names (`reflector_*`, `workqueue_*`) plus relists by cause and
 * watch events by type, served on a small HTTP server for Prometheus to scrape.
 *
 * Run: `npx ts-node examples/run/metricsEndpoint.ts [port]` (current kubeconfig context), then
 * `curl localhost:9090/metrics`. Ctrl-C stops.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { Subscription } from 'rxjs';
import { dropManagedFields, informer, pods } from 'rx-informer';
import { changedKeys, reconcile } from 'rx-informer/workqueue';
import { registerInformerMetrics, registerWorkqueueMetrics } from 'rx-informer/prometheus';

/** Options of {@link main}. */
export interface MetricsEndpointOptions {
  /** The port to serve /metrics on; 0 picks a free one. Default 9090. */
  readonly port?: number;
  /** Watch one namespace. Default: all namespaces. */
  readonly namespace?: string;
}

/** The running endpoint. */
export interface MetricsEndpoint {
  /** Where /metrics is served: `http://127.0.0.1:<port>/metrics`. */
  readonly url: string;
  /** Stops the informer, the queue and the HTTP server. */
  close(): Promise<void>;
}

/** Starts the informer, the queue (which only logs each key) and the endpoint. */
export async function main(kubeConfig: KubeConfig, options: MetricsEndpointOptions = {}): Promise<MetricsEndpoint> {
  const registry = new Registry();
  const podInformer = informer(kubeConfig, pods, { namespace: options.namespace, transform: dropManagedFields });
  const queueMetrics = registerWorkqueueMetrics(registry, { name: 'pods' });
  const running = new Subscription();
  // Registered before the informer starts, so the first list is counted too.
  running.add(registerInformerMetrics(registry, podInformer));
  running.add(
    podInformer.informer$
      .pipe(
        changedKeys(),
        reconcile((key) => void key, { name: 'pods', metrics: queueMetrics }),
      )
      .subscribe(),
  );
  running.add(() => queueMetrics.unregister());

  const server = createServer((request, response) => {
    if (request.url !== '/metrics') {
      response.writeHead(404).end();
      return;
    }
    registry.metrics().then(
      (text) => response.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (error: unknown) => response.writeHead(500).end(String(error)),
    );
  });
  await listen(server, options.port ?? 9090);
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/metrics`,
    close: async () => {
      running.unsubscribe(); // aborts the watch
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
}
