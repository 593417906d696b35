/**
 * Serves examples/metricsEndpoint.ts's `/metrics` for the current kubeconfig context until Ctrl-C:
 * `npx ts-node examples/run/metricsEndpoint.ts [port]`, then `curl localhost:9090/metrics`.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { main } from '../metricsEndpoint';

const kubeConfig = new KubeConfig();
kubeConfig.loadFromDefault();
main(kubeConfig, { port: process.argv[2] === undefined ? 9090 : Number(process.argv[2]) }).then(
  (endpoint) => {
    console.log(`serving ${endpoint.url}`);
    process.once('SIGINT', () => void endpoint.close());
  },
  (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  },
);
