/**
 * The kubeconfig of `--kubeconfig` / `--context`, checked up front so that a typo is one clear
 * line, not a stream of retries.
 */
import type { KubeConfig } from '@kubernetes/client-node';

/** Where to read the kubeconfig from and which context to use. */
export interface KubeConfigChoice {
  /** A kubeconfig file; default `$KUBECONFIG` or `~/.kube/config`. */
  readonly kubeconfig: string | undefined;
  /** A context of it; default its current context. */
  readonly context: string | undefined;
}

/**
 * Loads `choice` into `kubeConfig` (a fresh client-node `KubeConfig`) and selects the context.
 * Throws an `Error` whose message says what is wrong: an unreadable file, an unknown context
 * (naming the ones there are), no current context.
 */
export function loadKubeConfig(kubeConfig: KubeConfig, choice: KubeConfigChoice): KubeConfig {
  try {
    if (choice.kubeconfig !== undefined) kubeConfig.loadFromFile(choice.kubeconfig);
    else kubeConfig.loadFromDefault();
  } catch (error) {
    throw new Error(`cannot read the kubeconfig ${choice.kubeconfig ?? '(default)'}: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (choice.context !== undefined) {
    if (kubeConfig.getContextObject(choice.context) === null) {
      const known = kubeConfig.getContexts().map((context) => context.name);
      throw new Error(`no context "${choice.context}" in the kubeconfig (it has: ${known.length === 0 ? 'none' : known.join(', ')})`);
    }
    kubeConfig.setCurrentContext(choice.context);
  }
  if (kubeConfig.getCurrentCluster() === null) throw new Error('the kubeconfig has no current context with a cluster; pass --context NAME');
  return kubeConfig;
}
