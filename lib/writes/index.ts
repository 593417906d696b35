/**
 * rx-informer/writes: writing back from a controller. `edit()` derives a changed object from a
 * cached one with immer and the JSON Patch or merge patch that writes it (a precondition on the
 * resourceVersion first, status changes through the status subresource), `writeEdit()` sends it;
 * `apply()` and `applyStatus()` are server-side apply with a field manager; `setCondition()` and
 * its siblings are `metav1.Condition`'s rules as pure functions; `eventRecorder()` writes
 * Kubernetes Events with client-go's series and spam filter, never blocking a reconcile.
 *
 * This module only re-exports.
 */

export { edit, atResourceVersion } from './edit';
export type { Edit, EditDraft, EditOptions, Write } from './edit';
export type { JsonPatchOperation, MergePatch } from './patches';
export { writeEdit } from './writeEdit';
export type { WriteEditOptions } from './writeEdit';
export { apply, applyStatus } from './apply';
export type { ApplyConfiguration, ApplyOptions, PartialObject } from './apply';
export { ConflictError, ApplyConflictError } from './writeErrors';
export type { ApplyConflict, ManagedFieldsOperation } from './writeErrors';
export { setCondition, findCondition, isConditionTrue, removeCondition } from './conditions';
export type { Condition, ConditionStatus, ConditionUpdate, SetConditionOptions } from './conditions';
export { eventRecorder, eventRecorderFrom } from './eventRecorder';
export type { EventRecorder, EventRecorderReport, EventRecorderStats } from './eventRecorder';
export type { EventRecorderOptions } from './recorderConfig';
export type { EventDetails, EventReference } from './eventObjects';
export { kubeEventSink } from './eventSink';
export type { EventApi, EventSink } from './eventSink';
