/**
 * Runs examples/customOperator.ts against the current kubeconfig context:
 * `npx ts-node examples/run/customOperator.ts [namespace]`.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { main } from '../customOperator';

const kubeConfig = new KubeConfig();
kubeConfig.loadFromDefault();
main(kubeConfig, { namespace: process.argv[2] }).catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
