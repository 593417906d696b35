/**
 * Runs examples/configMapPerDeployment.ts against the current kubeconfig context until Ctrl-C:
 * `npx ts-node examples/run/configMapPerDeployment.ts [namespace]`.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { main } from '../configMapPerDeployment';

const kubeConfig = new KubeConfig();
kubeConfig.loadFromDefault();
const stop = new AbortController();
process.once('SIGINT', () => stop.abort());
main(kubeConfig, { namespace: process.argv[2], signal: stop.signal }).catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
