/**
 * Runs one replica of examples/teamNamespaces.ts against the current kubeconfig context until
 * Ctrl-C or SIGTERM, which hand over the Lease: `npx ts-node examples/run/teamNamespaces.ts [identity]`.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { main } from '../teamNamespaces';

const kubeConfig = new KubeConfig();
kubeConfig.loadFromDefault();
const stop = new AbortController();
process.once('SIGINT', () => stop.abort());
process.once('SIGTERM', () => stop.abort());
main(kubeConfig, { identity: process.argv[2], signal: stop.signal }).catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
