/**
 * rx-informer/controller: `controller()`, a builder of controllers over the informer factory (a
 * primary resource, the resources it `owns` and `watches`, predicates) that feeds `reconcile()`
 * and hands each reconcile one consistent view of every cache, after the cache has shown the
 * writes before it; `finalizer()`, a reconciler that guards its primary with a finalizer; the
 * mappers `ownerKeys` and `labelKeys`; and `kubeObjectClient`, the writes a controller makes.
 *
 * This module only re-exports.
 */

export { controller } from './controller';
export type { ControllerBuilder, ControllerSources, OwnsOptions, RelatedKeys, WatchOptions } from './controller';
export type { ControllerEvent, StaleCacheEvent, UnseenWrite, ReadAfterWriteMetricEvent } from './controllerEvents';
export type { ControllerRequest, ControllerReconciler, ControllerSnapshots, ControllerWrites } from './controllerRequest';
export type { ControllerRunOptions } from './controllerRun';
export type { ChangePredicate } from './controllerKeys';
export { finalizer } from './finalizer';
export type { FinalizerHandlers, FinalizerOutcome, FinalizerRequest } from './finalizer';
export { ownerKeys, labelKeys } from './relatedKeys';
export type { OwnerKeysOptions } from './relatedKeys';
export { kubeObjectClient } from './objectClient';
export type { ObjectClient, ObjectPatch, ObjectRef, JsonPatchOperation, DeleteOptions, ServerVersion } from './objectClient';
export { compareResourceVersions, ordersResourceVersions } from './resourceVersions';
