import type { KubeConfig } from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { asyncScheduler, type SchedulerLike } from 'rxjs';
import { ProtocolError, ResourceGoneError, StatusError } from '../base/errors';
import { findByKind, findByName, groupVersionsOf, resourcesOfAggregated, resourcesOfList, type DiscoveredResource, type GroupVersionToRead } from './discoveryDocuments';
import { statusErrorFromResponse } from './statusError';
import { isJsonContentType, kubeRequest, readBody, readText } from './transport';

export type { DiscoveredResource } from './discoveryDocuments';

/** Options of {@link resourceDiscovery}. */
export interface ResourceDiscoveryOptions {
  /**
   * The least time (ms) between two fetches that look-ups which find nothing cause. Default
   * 30_000; 0 fetches again on every miss.
   */
  readonly minRefreshInterval?: number;
  /** The clock the interval is measured on. Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike;
}

/** Resolves resources by kind or name through the API server's discovery; see {@link resourceDiscovery}. */
export interface ResourceDiscovery {
  /**
   * The resource of `kind` in `apiVersion` (`'apps/v1'`, `'Deployment'`).
   *
   * @throws ResourceGoneError when the server serves no such resource, even after a refresh.
   */
  resourceForKind(apiVersion: string, kind: string): Promise<DiscoveredResource>;
  /**
   * The resource a kubectl-style name names: `po`, `pod`, `pods`, `Pod`, `deployments.apps`,
   * `deployments.v1.apps`.
   *
   * @throws ResourceGoneError when the server serves no such resource, even after a refresh.
   */
  resourceForName(name: string): Promise<DiscoveredResource>;
  /** Every resource the server serves, from the cache (fetched on first use). */
  resources(): Promise<readonly DiscoveredResource[]>;
  /** Forgets what was fetched: the next look-up fetches again (client-go's `Invalidate`). */
  invalidate(): void;
}

/**
 * The cache behind {@link resourceDiscovery}, over any way to fetch the table (client-go's
 * `memory.memCacheClient` with a `DeferredDiscoveryRESTMapper` on top):
 *
 * 1. The table is fetched on first use and kept; concurrent look-ups share one fetch in flight.
 * 2. A look-up that finds nothing fetches again, then looks once more, if the table is at least
 *    `minRefreshInterval` old: a CRD created since is found, and a name that does not exist costs
 *    at most one fetch per interval however often it is asked for. (client-go refetches on a miss
 *    only when the cache is not `Fresh()`, i.e. after `Invalidate()`; the interval bounds the same
 *    retry without the caller having to invalidate.)
 * 3. A failed fetch is not cached: the next look-up tries again.
 */
export function cachedDiscovery(fetchTable: () => Promise<readonly DiscoveredResource[]>, options: ResourceDiscoveryOptions = {}): ResourceDiscovery {
  const minRefreshInterval = options.minRefreshInterval ?? 30_000;
  if (!(minRefreshInterval >= 0)) throw new RangeError(`resourceDiscovery: minRefreshInterval must be 0 or more, got ${minRefreshInterval}`);
  const scheduler = options.scheduler ?? asyncScheduler;
  let table: { readonly resources: readonly DiscoveredResource[]; readonly fetchedAt: number } | undefined;
  let inFlight: Promise<readonly DiscoveredResource[]> | undefined;
  let generation = 0;

  const fetchNow = (): Promise<readonly DiscoveredResource[]> => {
    if (inFlight !== undefined) return inFlight;
    const started = generation;
    const fetching = fetchTable().then((resources) => {
      // An invalidate() while the fetch ran leaves the answer to its callers but does not keep it.
      if (started === generation) table = { resources, fetchedAt: scheduler.now() };
      return resources;
    });
    inFlight = fetching;
    const clear = (): void => {
      if (inFlight === fetching) inFlight = undefined;
    };
    fetching.then(clear, clear);
    return fetching;
  };

  const current = (): Promise<readonly DiscoveredResource[]> => (table !== undefined ? Promise.resolve(table.resources) : fetchNow());

  async function lookUp(find: (resources: readonly DiscoveredResource[]) => DiscoveredResource | undefined, what: string): Promise<DiscoveredResource> {
    const found = find(await current());
    if (found !== undefined) return found;
    if (table === undefined || scheduler.now() - table.fetchedAt >= minRefreshInterval) {
      const again = find(await fetchNow());
      if (again !== undefined) return again;
    }
    throw new ResourceGoneError(`the server serves no ${what} (discovery found none)`);
  }

  return {
    resourceForKind: (apiVersion, kind) => lookUp((resources) => findByKind(resources, apiVersion, kind), `resource of kind ${kind} in ${apiVersion}`),
    resourceForName: (name) => lookUp((resources) => findByName(resources, name), `resource named ${JSON.stringify(name)}`),
    resources: current,
    invalidate() {
      generation += 1;
      table = undefined;
    },
  };
}

/**
 * What client-go's discovery client sends to `/api` and `/apis` (`discovery_client.go`,
 * `acceptDiscoveryFormats`, JSON only): aggregated discovery v2, else v2beta1, else the
 * unaggregated documents.
 */
export const DISCOVERY_ACCEPT =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';

/** The longest discovery document read, in characters: large clusters serve several megabytes. */
const MAX_DISCOVERY_CHARS = 1 << 26;

/**
 * True when a `Content-Type` says the body is an aggregated `APIGroupDiscoveryList`: client-go
 * tells the formats apart by it (`ContentTypeIsGVK`), since the server answers a plain `Accept`
 * clause with the unaggregated document.
 */
export function isAggregatedDiscovery(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const [mediaType = '', ...parameters] = contentType.split(';').map((part) => part.trim());
  const values = new Map(parameters.map((parameter) => [parameter.slice(0, parameter.indexOf('=')).trim(), parameter.slice(parameter.indexOf('=') + 1).trim()]));
  return mediaType.toLowerCase() === 'application/json' && values.get('g') === 'apidiscovery.k8s.io' && values.get('as') === 'APIGroupDiscoveryList' && (values.get('v') === 'v2' || values.get('v') === 'v2beta1');
}

async function getDocument(kubeConfig: KubeConfig, path: string, accept: string): Promise<{ readonly aggregated: boolean; readonly document: unknown }> {
  const signal = new AbortController().signal;
  const response = await kubeRequest(kubeConfig, { path, query: '', signal, headers: { Accept: accept } });
  const code = response.statusCode ?? 0;
  if (code >= 400) throw statusErrorFromResponse(code, response.headers, await readBody(response, path, 64 * 1024), `GET ${path}`);
  const contentType = response.headers['content-type'];
  if (!isJsonContentType(contentType)) {
    response.destroy();
    throw new ProtocolError('non-json-body', `GET ${path} answered ${contentType ?? 'no content type'}, not JSON`);
  }
  const body = await readText(response, path, MAX_DISCOVERY_CHARS);
  try {
    return { aggregated: isAggregatedDiscovery(contentType), document: JSON.parse(body) as unknown };
  } catch {
    throw new ProtocolError('malformed-json', `GET ${path} answered with a body that is not JSON`, body);
  }
}

/**
 * One group version's resources; none when it fails with a status (an aggregated API server that
 * is down answers 503, a group removed since `/apis` was read 404): client-go keeps the other
 * groups and records the failed ones.
 */
async function resourcesOfGroupVersion(kubeConfig: KubeConfig, from: GroupVersionToRead): Promise<DiscoveredResource[]> {
  try {
    return resourcesOfList((await getDocument(kubeConfig, from.path, 'application/json')).document, from);
  } catch (error) {
    if (error instanceof StatusError) return [];
    throw error;
  }
}

/** `/api` or `/apis`: aggregated when the server serves it, else through each group version. */
async function resourcesUnder(kubeConfig: KubeConfig, root: '/api' | '/apis'): Promise<DiscoveredResource[]> {
  const { aggregated, document } = await getDocument(kubeConfig, root, DISCOVERY_ACCEPT);
  if (aggregated) return resourcesOfAggregated(document, root);
  const lists = await Promise.all(groupVersionsOf(document, root).map((from) => resourcesOfGroupVersion(kubeConfig, from)));
  return lists.flat();
}

/**
 * Resolves a kind (`apps/v1` `Deployment`) or a kubectl-style name (`deploy`, `po`,
 * `certificates.cert-manager.io`) to the resource the API server serves, built-in or custom,
 * through its discovery: aggregated discovery (two requests, `/api` and `/apis`) where the server
 * serves it (Kubernetes 1.27 and later), else the unaggregated documents (`/api`, `/apis`, then one
 * request per group version). Requests go through the library's transport with the kubeconfig's
 * credentials, as an informer's.
 *
 * What was fetched is cached and fetched again when a look-up finds nothing, at most once per
 * `minRefreshInterval` (the rules of `cachedDiscovery`, the cache behind it): a CRD created after the first look-up is
 * found by the next one that asks for it.
 *
 * ## Example
 * ```ts
 * import { KubeConfig } from '@kubernetes/client-node';
 * import { informer, resourceDiscovery } from 'rx-informer';
 *
 * const kubeConfig = new KubeConfig();
 * kubeConfig.loadFromDefault();
 * const discovery = resourceDiscovery(kubeConfig);
 * const { resource } = await discovery.resourceForName('deploy');
 * console.log(resource.group, resource.version, resource.plural); // apps v1 deployments
 * const certificates = informer(kubeConfig, (await discovery.resourceForKind('cert-manager.io/v1', 'Certificate')).resource);
 * certificates.informer$.subscribe((snapshot) => console.log(snapshot.list().length, 'certificates'));
 * ```
 *
 * @param kubeConfig the cluster and credentials.
 * @param options the refresh interval and its clock.
 * @throws RangeError at once for a negative `minRefreshInterval`.
 */
export function resourceDiscovery(kubeConfig: KubeConfig, options: ResourceDiscoveryOptions = {}): ResourceDiscovery {
  return cachedDiscovery(async () => {
    const [core, named] = await Promise.all([resourcesUnder(kubeConfig, '/api'), resourcesUnder(kubeConfig, '/apis')]);
    return [...core, ...named];
  }, options);
}
