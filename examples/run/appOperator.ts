/**
 * Runs examples/appOperator.ts against the current kubeconfig context until Ctrl-C:
 * `npx ts-node examples/run/appOperator.ts [namespace]`.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { main } from '../appOperator';

const kubeConfig = new KubeConfig();
kubeConfig.loadFromDefault();
const stop = new AbortController();
process.once('SIGINT', () => stop.abort());
main(kubeConfig, { namespace: process.argv[2], signal: stop.signal }).catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
