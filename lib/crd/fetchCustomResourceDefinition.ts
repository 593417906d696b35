import type { KubeConfig } from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { ProtocolError } from '../base/errors';
import { customResourceDefinitions } from '../resources/builtins';
import { resourcePath } from '../resources/resource';
import { statusErrorFromResponse } from '../sources/statusError';
import { isJsonContentType, kubeRequest, readBody, readText } from '../sources/transport';

/**
 * The longest CRD read, in characters: etcd stores objects of up to 1.5 MiB, and the JSON the API
 * server answers with may be indented; this leaves room for both.
 */
const MAX_CRD_CHARS = 1 << 24;

/** Options of {@link fetchCustomResourceDefinition}. */
export interface FetchCustomResourceDefinitionOptions {
  /** Aborting it aborts the request. */
  readonly signal?: AbortSignal;
}

/**
 * Reads one CustomResourceDefinition from the cluster a `KubeConfig` points at
 * (`GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions/<name>`), through the library's
 * own transport: the kubeconfig's TLS material, credentials and proxy, as an informer's requests.
 * Resolves with the object as the API server sent it, for {@link crdToTypeScript}.
 *
 * ## Example
 * ```ts
 * import { KubeConfig } from '@kubernetes/client-node';
 * import { crdToTypeScript, fetchCustomResourceDefinition } from 'rx-informer';
 *
 * const kubeConfig = new KubeConfig();
 * kubeConfig.loadFromDefault();
 * const crd = await fetchCustomResourceDefinition(kubeConfig, 'certificates.cert-manager.io');
 * console.log(crdToTypeScript([crd]));
 * ```
 *
 * @param kubeConfig the cluster and credentials.
 * @param name the CRD's name, `<plural>.<group>`.
 * @param options an abort signal.
 * @returns the CustomResourceDefinition, parsed.
 * @throws StatusError when the server refuses (404 for a CRD not installed, 403 without `get` on
 * customresourcedefinitions), NetworkError when it cannot be reached, ConfigError for an unusable
 * kubeconfig, ProtocolError for a body that is not a JSON object.
 */
export async function fetchCustomResourceDefinition(kubeConfig: KubeConfig, name: string, options: FetchCustomResourceDefinitionOptions = {}): Promise<unknown> {
  const path = resourcePath(customResourceDefinitions, { name });
  const response = await kubeRequest(kubeConfig, { path, query: '', signal: options.signal ?? new AbortController().signal });
  const code = response.statusCode ?? 0;
  if (code >= 400) throw statusErrorFromResponse(code, response.headers, await readBody(response, path, 64 * 1024), `GET ${path}`);
  if (!isJsonContentType(response.headers['content-type'])) {
    response.destroy();
    throw new ProtocolError('non-json-body', `GET ${path} answered ${response.headers['content-type'] ?? 'no content type'}, not JSON`);
  }
  const text = await readText(response, path, MAX_CRD_CHARS);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ProtocolError('malformed-json', `GET ${path} answered with a body that is not JSON`, text);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new ProtocolError('malformed-json', `GET ${path} answered with JSON that is not an object`, text);
  return parsed;
}
