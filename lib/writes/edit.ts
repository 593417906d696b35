import { enablePatches, Immer, type Draft, type Patch } from 'immer';
import type { KubeObject } from '../base/object';
import { mergePatchOf, toJsonPatch, type JsonPatchOperation, type MergePatch } from './patches';

/**
 * A cached object is shared (by every snapshot, every subscriber and, with `shareUnchanged`, by
 * several versions of itself and by other objects) and may be frozen: it is never written. An
 * edit derives a new object with immer and the writes that take the server from the old version
 * to the new one.
 */

/**
 * What a recipe receives: the object as a mutable draft (immer's `Draft`, every `readonly`
 * removed). Change it in place; the object it stands for is never touched.
 */
export type EditDraft<T> = Draft<T>;

/** Options of {@link edit}. */
export interface EditOptions {
  /**
   * Whether the resource has a `status` subresource, so that changes under `status` are written
   * through it (the object's own endpoint ignores them) and changes elsewhere through the object
   * (its `status` endpoint ignores those). Default true: every built-in with a status, and custom
   * resources whose CRD declares `subresources: { status: {} }`. Set false for a custom resource
   * without one: its status is then written with the rest.
   */
  readonly statusSubresource?: boolean;
}

/**
 * One request that writes part of an edit: the same change as a JSON Patch and as a merge patch,
 * for the object itself or its `status` subresource. Both carry the resourceVersion the edit
 * started from as a precondition, so a write over a newer version fails (409 or 422: a
 * {@link ConflictError}) instead of overwriting what it never saw.
 */
export interface Write {
  /** `'status'` for the status subresource's endpoint (`.../pods/name/status`), undefined for the object's. */
  readonly subresource: 'status' | undefined;
  /**
   * RFC 6902 operations (`Content-Type: application/json-patch+json`), starting with `{ op: 'test',
   * path: '/metadata/resourceVersion', value }` when the object had a resourceVersion. Precise:
   * it names each changed path, and a list item by its index.
   */
  readonly jsonPatch: readonly JsonPatchOperation[];
  /**
   * The RFC 7386 merge patch (`Content-Type: application/merge-patch+json`) of the same change,
   * with `metadata.resourceVersion` as its precondition. Coarser: it replaces a changed list
   * whole and reads `null` as "delete".
   */
  readonly mergePatch: MergePatch;
}

/** An edit of an object: the new version, the one it came from, and the writes between them. */
export interface Edit<T> {
  /** The object the edit started from, untouched. */
  readonly before: T;
  /**
   * The edited object. It shares every subtree the recipe left alone with `before` (and is
   * `before` itself when nothing changed); the parts the recipe made are new and not frozen.
   */
  readonly object: T;
  /**
   * What to send, in order: none when nothing changed, one for a change confined to `status` or
   * to the rest, two (the object's first, then its status) for a change to both. The second's
   * precondition is `before`'s resourceVersion; once the first has answered, send it at the
   * version that answer carries ({@link atResourceVersion}; {@link writeEdit} does).
   */
  readonly writes: readonly Write[];
}

// Our own instance: a user's immer settings stay theirs, and nothing the edit did not make is
// frozen (immer's default would deep-freeze the result, and with it the cached object's shared
// subtrees, were the cache not frozen already).
const immer = new Immer({ autoFreeze: false });
let patchesEnabled = false;

/**
 * Edits an object you must not mutate (one from the cache) with an immer recipe, and returns the
 * edited object with the writes that take the server there.
 *
 * 1. `recipe` changes a draft in place; whatever it returns is ignored.
 * 2. The object is never written, frozen or not: the result shares what did not change and copies
 *    only the paths the recipe touched.
 * 3. The writes start with a precondition on `metadata.resourceVersion`: an object changed on the
 *    server since it was read fails the write with a {@link ConflictError}, which a work queue
 *    retries with the newer version. An object without a resourceVersion (never read from a
 *    server) gets none, and its writes are unconditional.
 * 4. Changes under `status` go to the status subresource (unless `statusSubresource: false`), the
 *    rest to the object.
 *
 * Cost: a draft per object and array the recipe reads through, and a copy of each one it writes
 * (docs/PERFORMANCE.md, "Edits: immer against a hand-written copy").
 *
 * ## Example
 * ```ts
 * import { lastValueFrom } from 'rxjs';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * import { deployments, type Deployment } from 'rx-informer';
 * import { edit, writeEdit } from 'rx-informer/writes';
 *
 * declare const kubeConfig: KubeConfig;
 * declare const cached: Deployment;
 *
 * const scaled = edit(cached, (draft) => {
 *   draft.spec!.replicas = 3;
 *   (draft.metadata.labels ??= {})['scaled-by'] = 'autoscaler';
 * });
 * // scaled.writes[0].jsonPatch:
 * // [{ op: 'test', path: '/metadata/resourceVersion', value: '41' },
 * //  { op: 'replace', path: '/spec/replicas', value: 3 },
 * //  { op: 'add', path: '/metadata/labels/scaled-by', value: 'autoscaler' }]
 * const stored = await lastValueFrom(writeEdit(kubeConfig, deployments, scaled));
 * ```
 *
 * @param object the object to edit, left untouched.
 * @param recipe changes the draft in place.
 * @param options whether the resource has a status subresource (default true).
 * @returns the edited object and its writes.
 */
export function edit<T extends KubeObject>(object: T, recipe: (draft: EditDraft<T>) => void, options: EditOptions = {}): Edit<T> {
  if (!patchesEnabled) {
    enablePatches();
    patchesEnabled = true;
  }
  const [next, patches] = immer.produceWithPatches(object, (draft: Draft<T>) => {
    recipe(draft);
  }) as unknown as readonly [T, Patch[], Patch[]];
  if (patches.length === 0) return { before: object, object, writes: [] };
  const statusApart = options.statusSubresource ?? true;
  const resourceVersion = object.metadata.resourceVersion;
  const writes: Write[] = [];
  const main = statusApart ? patches.filter((patch) => patch.path[0] !== 'status') : patches;
  const status = statusApart ? patches.filter((patch) => patch.path[0] === 'status') : [];
  if (main.length > 0) {
    const mergePatch = statusApart ? mergePatchOf(withoutStatus(object), withoutStatus(next)) : mergePatchOf(object, next);
    pushWrite(writes, undefined, toJsonPatch(main, object), mergePatch, resourceVersion);
  }
  if (status.length > 0) {
    const statusPatch = mergePatchOf(statusOf(object), statusOf(next));
    pushWrite(writes, 'status', toJsonPatch(status, object), statusPatch === undefined ? undefined : { status: statusPatch }, resourceVersion);
  }
  return { before: object, object: next, writes };
}

function pushWrite(writes: Write[], subresource: 'status' | undefined, operations: JsonPatchOperation[], mergePatch: unknown, resourceVersion: string | undefined): void {
  // Operations that cancel out in JSON (a member set to undefined where there was none) leave nothing to send.
  if (operations.length === 0 || mergePatch === undefined) return;
  writes.push(atResourceVersion({ subresource, jsonPatch: operations, mergePatch: mergePatch as MergePatch }, resourceVersion));
}

function withoutStatus(object: KubeObject): KubeObject {
  const { status: _status, ...rest } = object as KubeObject & { status?: unknown };
  return rest;
}

function statusOf(object: KubeObject): unknown {
  return (object as KubeObject & { status?: unknown }).status;
}

const RESOURCE_VERSION_PATH = '/metadata/resourceVersion';

/**
 * The same write with its precondition at `resourceVersion`: the JSON Patch's leading `test` and
 * the merge patch's `metadata.resourceVersion` say that version (added when missing, removed when
 * `resourceVersion` is undefined). For the second write of an edit, once the first has answered:
 * the server's object is then at the version that answer carries, and anyone else's change since
 * still fails the write.
 *
 * ## Example
 * ```ts
 * const [spec, status] = change.writes;
 * const stored = await coreV1.patchNamespacedPod({ name, namespace, body: spec.jsonPatch });
 * await coreV1.patchNamespacedPodStatus({ name, namespace, body: atResourceVersion(status, stored.metadata?.resourceVersion).jsonPatch });
 * ```
 */
export function atResourceVersion(write: Write, resourceVersion: string | undefined): Write {
  const operations = write.jsonPatch[0]?.op === 'test' && write.jsonPatch[0].path === RESOURCE_VERSION_PATH ? write.jsonPatch.slice(1) : write.jsonPatch;
  const { metadata, ...rest } = write.mergePatch as { metadata?: Readonly<Record<string, unknown>> };
  const { resourceVersion: _previous, ...otherMetadata } = metadata ?? {};
  const newMetadata = resourceVersion === undefined ? otherMetadata : { ...otherMetadata, resourceVersion };
  return {
    subresource: write.subresource,
    jsonPatch: resourceVersion === undefined ? operations : [{ op: 'test', path: RESOURCE_VERSION_PATH, value: resourceVersion }, ...operations],
    mergePatch: Object.keys(newMetadata).length === 0 ? rest : { metadata: newMetadata, ...rest },
  };
}
