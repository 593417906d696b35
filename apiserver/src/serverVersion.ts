/**
 * The Kubernetes versions the loopback API server can answer like, and what changed between them
 * for a list/watch client. Each fact is checked in that version's kube-apiserver sources (the
 * `release-1.N` branches of k8s.io/apiserver and k8s.io/apimachinery); the file named beside it
 * is where.
 */

/** Every Kubernetes minor version the loopback server models, oldest first. */
export const SERVER_VERSIONS = ['1.26', '1.27', '1.28', '1.29', '1.30', '1.31', '1.32', '1.33', '1.34', '1.35', '1.36'] as const;

/** A Kubernetes minor version the loopback server can answer like: `'1.26'` ... `'1.36'`. */
export type ServerVersion = (typeof SERVER_VERSIONS)[number];

/** The oldest modelled version: before streaming lists existed. */
export const OLDEST_SERVER_VERSION: ServerVersion = SERVER_VERSIONS[0];

/** The newest modelled version, and the default of `startApiServer`. */
export const NEWEST_SERVER_VERSION: ServerVersion = SERVER_VERSIONS[SERVER_VERSIONS.length - 1]!;

/**
 * How a version's API server answers streaming lists (`sendInitialEvents`, KEP-3157), by its
 * `WatchList` feature gate (`pkg/features/kube_features.go`):
 * - `'unsupported'`: before 1.27 the parameter does not exist. It is ignored (the query decoder
 *   reads only the fields it knows), while `resourceVersionMatch` on a watch is a 422 Invalid
 *   "resourceVersionMatch is forbidden for watch".
 * - `'off'`: 1.27–1.31 (alpha) and 1.33 (beta, switched off again): any `sendInitialEvents` on a
 *   watch is a 422 Invalid "sendInitialEvents is forbidden for watch unless the WatchList feature
 *   gate is enabled".
 * - `'on'`: 1.32 and from 1.34: served; and a watch at resourceVersion "" or "0" that sets neither
 *   `sendInitialEvents` nor `resourceVersionMatch` is turned into one (`SetListOptionsDefaults`).
 */
export type WatchListSupport = 'unsupported' | 'off' | 'on';

/**
 * A version of aggregated discovery (KEP-3352): `APIGroupDiscoveryList` of
 * `apidiscovery.k8s.io/v2beta1` or `v2`, served at `/api` and `/apis` to an `Accept` that asks for it.
 */
export type AggregatedDiscoveryVersion = 'v2' | 'v2beta1';

/** What a version's API server does differently for list and watch. */
export interface ServerProfile {
  readonly version: ServerVersion;
  /**
   * The versions of aggregated discovery served, preferred first (apiserver
   * `endpoints/discovery/aggregated`, `wrapper.go` and `negotiation.go`, and its feature gates):
   * none in 1.26 (`AggregatedDiscoveryEndpoint` alpha, off), `v2beta1` from 1.27 (beta, on), `v2`
   * beside it from 1.30 (GA), `v2` alone from 1.33 (`AggregatedDiscoveryRemoveBetaType` on;
   * kubernetes #134230 locked it in 1.35). Any other `Accept` gets the unaggregated documents.
   */
  readonly aggregatedDiscovery: readonly AggregatedDiscoveryVersion[];
  /** Streaming lists: see {@link WatchListSupport}. */
  readonly watchList: WatchListSupport;
  /**
   * From 1.31 the watch cache pages the lists it serves, except at resourceVersion "0", and it
   * serves `resourceVersionMatch=NotOlderThan` lists with a `limit` that earlier versions sent to
   * etcd (`cacher.go`, `computeListLimit` and `shouldDelegateList`). Seen by a client only in how a
   * too-new resourceVersion is refused: the watch cache waits up to 3 s for it, then answers 504
   * with `Retry-After: 1`; etcd answers 504 at once, without one.
   */
  readonly cachePagesLimitedLists: boolean;
  /**
   * From 1.34 (`ListFromCacheSnapshot`, KEP-4988) the watch cache serves Exact lists from its
   * snapshots, and an Exact list at a resourceVersion the server has not reached waits like any
   * cached list, then answers 504 "Too large resource version". Before, etcd answered it with a
   * 500 "etcdserver: mvcc: required revision is a future revision" (`etcd3/store.go`).
   */
  readonly exactListsWaitForFreshness: boolean;
  /** From 1.33 `/version` also reports the emulated and minimum compatibility versions. */
  readonly reportsEmulationVersion: boolean;
  /**
   * False in every real version: the watch cache ignores `limit` at resourceVersion "0" (up to
   * 1.36 at least), so the informer's first list comes back whole. True only in
   * {@link defaultServerProfile}, which pages such lists as the loopback server always has.
   */
  readonly pagesListsAtResourceVersion0: boolean;
}

/** The minor number of a version (`'1.32'` → 32). */
function minorOf(version: ServerVersion): number {
  return Number(version.slice(2));
}

function aggregatedDiscovery(minor: number): readonly AggregatedDiscoveryVersion[] {
  if (minor < 27) return [];
  if (minor < 30) return ['v2beta1'];
  return minor < 33 ? ['v2', 'v2beta1'] : ['v2'];
}

function watchListSupport(minor: number): WatchListSupport {
  if (minor < 27) return 'unsupported';
  return minor === 32 || minor >= 34 ? 'on' : 'off';
}

/**
 * The behaviours of one version, as the loopback server plays them.
 *
 * ## Example
 * ```ts
 * import { serverProfile } from 'rx-informer-apiserver';
 *
 * const profile = serverProfile('1.33');
 * console.log(profile.watchList); // 'off': a streaming list is answered 422
 * ```
 *
 * @throws RangeError for a version that is not in {@link SERVER_VERSIONS}
 */
export function serverProfile(version: ServerVersion): ServerProfile {
  if (!(SERVER_VERSIONS as readonly string[]).includes(version)) {
    throw new RangeError(`unsupported serverVersion ${JSON.stringify(version)}: expected one of ${SERVER_VERSIONS.join(', ')}`);
  }
  const minor = minorOf(version);
  return {
    version,
    watchList: watchListSupport(minor),
    aggregatedDiscovery: aggregatedDiscovery(minor),
    cachePagesLimitedLists: minor >= 31,
    exactListsWaitForFreshness: minor >= 34,
    reportsEmulationVersion: minor >= 33,
    pagesListsAtResourceVersion0: false,
  };
}

/**
 * What `startApiServer()` answers like when given no `serverVersion`: the newest version, except
 * that lists at resourceVersion "0" are paged by `limit`, as the loopback server has always paged
 * them and no real API server does. Existing tests of paged first lists keep their meaning; pass a
 * `serverVersion` (for instance {@link OLDEST_SERVER_VERSION} and {@link NEWEST_SERVER_VERSION})
 * for a real version's answers.
 *
 * ## Example
 * ```ts
 * import { defaultServerProfile, NEWEST_SERVER_VERSION, serverProfile } from 'rx-informer-apiserver';
 *
 * console.log(defaultServerProfile().pagesListsAtResourceVersion0); // true
 * console.log(serverProfile(NEWEST_SERVER_VERSION).pagesListsAtResourceVersion0); // false
 * ```
 */
export function defaultServerProfile(): ServerProfile {
  return { ...serverProfile(NEWEST_SERVER_VERSION), pagesListsAtResourceVersion0: true };
}

/** Whether `text` names a modelled version (for parsing it from a command line or a config). */
export function isServerVersion(text: string): text is ServerVersion {
  return (SERVER_VERSIONS as readonly string[]).includes(text);
}

/**
 * The `/version` document of a profile. kubectl's version dispatcher picks its binary from
 * `major`/`minor`. The build fields are placeholders that say where they come from.
 */
export function versionDocument(profile: ServerProfile): Readonly<Record<string, string>> {
  const minor = String(minorOf(profile.version));
  return {
    major: '1',
    minor,
    ...(profile.reportsEmulationVersion
      ? { emulationMajor: '1', emulationMinor: minor, minCompatibilityMajor: '1', minCompatibilityMinor: String(Number(minor) - 1) }
      : {}),
    gitVersion: `v1.${minor}.0-rx-informer-loopback`,
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: '2026-01-01T00:00:00Z',
    goVersion: 'go1.24.0',
    compiler: 'gc',
    platform: 'linux/amd64',
  };
}
