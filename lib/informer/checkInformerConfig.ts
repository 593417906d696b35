import type { KubeConfig } from '@kubernetes/client-node';
import { attributeTo, ConfigError, InformerError } from '../base/errors';
import type { WatchScope } from '../sources/listerWatcher';
import { resolveTarget } from '../sources/transport';
import { parseFieldSelector, parseLabelSelector, SelectorSyntaxError } from '../store/selector';

/**
 * What no retry can fix, checked when an informer is made rather than retried until a sync
 * timeout: a kubeconfig without a usable current context (no context, a context naming a missing
 * cluster or user, a server URL that is not http(s)), and a label or field selector that does not
 * parse. What may be fixed while the informer runs (a file the kubeconfig names, a credential
 * plugin, RBAC, a CRD) is left to the requests, which report it on `health$` and retry.
 *
 * @throws ConfigError attributed to the informer `name` (its message starts with the name).
 */
export function checkInformerConfig(kubeConfig: KubeConfig, name: string, scope: WatchScope): void {
  try {
    resolveTarget(kubeConfig);
    checkSelector('invalid-label-selector', 'labelSelector', scope.labelSelector, parseLabelSelector);
    checkSelector('invalid-field-selector', 'fieldSelector', scope.fieldSelector, parseFieldSelector);
  } catch (error) {
    throw error instanceof InformerError ? attributeTo(error, name) : error;
  }
}

function checkSelector(problem: 'invalid-label-selector' | 'invalid-field-selector', option: string, text: string | undefined, parse: (text: string) => unknown): void {
  if (text === undefined || text === '') return;
  try {
    parse(text);
  } catch (error) {
    if (!(error instanceof SelectorSyntaxError)) throw error;
    throw new ConfigError(problem, error.message.replace(/^invalid selector/, `invalid ${option}`), { cause: error });
  }
}
