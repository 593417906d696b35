/**
 * `rx-informer-apiserver`: a loopback Kubernetes API server speaking the real list/watch protocol,
 * with an in-process store, scriptable faults, a request log and a churn generator, for testing
 * informers and controllers without a cluster; and rx-informer's list/watch and Lease interfaces
 * over that store, for tests in virtual time with no HTTP at all.
 *
 * The in-process helpers that need no server (`skewedScheduler`) stay in `rx-informer/testing`.
 */
export { startApiServer, type ApiServer, type ApiServerOptions } from './server';
export {
  SERVER_VERSIONS,
  OLDEST_SERVER_VERSION,
  NEWEST_SERVER_VERSION,
  serverProfile,
  defaultServerProfile,
  isServerVersion,
  type ServerVersion,
  type ServerProfile,
  type WatchListSupport,
  type AggregatedDiscoveryVersion,
} from './serverVersion';
export { createClusterStore, type ClusterStore, type CompactOptions, type HistoryLimits } from './clusterStore';
export { ApiStatusError } from './status';
export type { Fault, FaultControls, FaultMatch } from './faults';
export { ANONYMOUS_USER, TOKEN_USER, type DenyRule, type Verb } from './auth';
export type { RequestLog, RequestRecord } from './requestLog';
export { builtinResources, widgets, type ServedResource, type Widget } from './builtinResources';
export { INITIAL_EVENTS_END_ANNOTATION } from './watchHandler';
export { GARBAGE_LINE } from './watchWriter';
export { loadClientNode } from './kubeConfig';
export { testCertificates, type TestCertificates } from './tls';
export * from './churn';
export { storeLeaseClient, type StoreLeaseClientOptions, type LeaseRequest, type LeaseFault, type Latency } from './storeLeaseClient';
export { storeListerWatcher, type StoreListerWatcherOptions } from './storeListerWatcher';
export { LEASE_UPDATE_STRATEGY, type UpdateStrategy } from './builtinResources';
