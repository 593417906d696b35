import { KubeConfig } from '@kubernetes/client-node';

/** A KubeConfig for the loopback server (plain HTTP, no credentials). */
export function loopbackKubeConfig(serverUrl: string): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'bench', server: serverUrl, skipTLSVerify: true }],
    users: [{ name: 'bench' }],
    contexts: [{ name: 'bench', cluster: 'bench', user: 'bench' }],
    currentContext: 'bench',
  });
  return kubeConfig;
}
