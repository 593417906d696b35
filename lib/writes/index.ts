/**
 * rx-informer/writes: writing back from a controller. `edit()` derives a changed object from a
 * cached one with immer and the JSON Patch or merge patch that writes it (a precondition on the
 * resourceVersion first, status changes through the status subresource), `writeEdit()` sends it;
 * `apply()` and `applyStatus()` are server-side apply with a field manager; `setCondition()` and
 * its siblings are `metav1.Condition`'s rules as pure functions.
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
