/**
 * `rx-informer/testing`: small in-process helpers for tests that need no API server.
 *
 * The loopback API server (`startApiServer`), its store and the list/watch and Lease interfaces
 * over that store (`createClusterStore`, `storeListerWatcher`, `storeLeaseClient`) are a package
 * of their own, `rx-informer-apiserver`: install it as a devDependency beside rx-informer.
 */
export { skewedScheduler, type ClockSkew } from './skewedScheduler';
