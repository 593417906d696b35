import { field, FieldSet, pathString, type FieldPath } from './fieldPath';
import type { FieldType } from './fieldTypes';
import { compareObjects, excludeFields, fieldSetOf, jsonEqual, mergeObjects, removeFields, validationErrors, type Comparison } from './typedValue';

/**
 * Field ownership, as the API server's field manager records it in `metadata.managedFields`
 * (apimachinery `pkg/util/managedfields/internal`, merging by sigs.k8s.io/structured-merge-diff
 * `merge/update.go`). One entry per manager: `operation: Apply` for a server-side apply (keyed by
 * manager and subresource), `Update` for any other write (keyed by manager, API version and
 * subresource), each with the fields it owns as `fieldsV1`.
 *
 * The wrappers of `NewDefaultFieldManager` (`internal/fieldmanager.go`), outermost first, and where
 * each lives here:
 * - version check (`versioncheck.go`): the applied object's apiVersion and kind must be the
 *   resource's — {@link applyFields};
 * - last-applied updater and manager (`lastappliedupdater.go`, `lastappliedmanager.go`): `kubectl
 *   apply --server-side` over an object kubectl applied client-side takes over the fields its
 *   `last-applied-configuration` annotation names without conflicts, and keeps that annotation
 *   current — {@link applyFields};
 * - skip-non-applied (`skipnonapplied.go`): an update of an object that has no managed fields
 *   records none; the first apply to one first gives its existing fields to `before-first-apply`;
 * - cap managers (`capmanagers.go`): more than 10 Update entries merge the oldest into
 *   `ancient-changes`;
 * - build manager info (`buildmanagerinfo.go`): the entry's identity, `unknown` for an empty name;
 * - managed fields updater (`managedfieldsupdater.go`): an operation that changed fields takes them
 *   and stamps its entry's `time`, merged with the manager's earlier fields;
 * - strip meta (`stripmeta.go`): apiVersion, kind and the metadata the server sets are never owned;
 * - structured merge (`structuredmerge.go`, SMD `Updater`): the fields an update changed move to its
 *   manager; an apply merges, prunes what the applier owned and dropped, and refuses to take fields
 *   others own with other values unless forced.
 */

/** `metav1.ManagedFieldsEntry` as it travels. */
export interface ManagedFieldsEntry {
  readonly manager?: string;
  readonly operation?: 'Apply' | 'Update';
  readonly apiVersion?: string;
  readonly time?: string;
  readonly fieldsType?: string;
  readonly fieldsV1?: unknown;
  readonly subresource?: string;
}

/** One manager's entry while a write is computed. */
interface Owner {
  readonly manager: string;
  readonly operation: 'Apply' | 'Update';
  readonly apiVersion: string;
  readonly subresource: string | undefined;
  readonly set: FieldSet;
  readonly time: string | undefined;
}

/** The entries by manager identity (`BuildManagerIdentifier`). */
type Managed = Map<string, Owner>;

/** What a write needs to know of its resource and endpoint. */
export interface FieldManagerScope {
  /** The types of the resource's fields. */
  readonly type: FieldType;
  /** `group/version` (`v1` for the core group). */
  readonly apiVersion: string;
  readonly kind: string;
  /** `status` for writes through the status subresource. */
  readonly subresource: 'status' | undefined;
  /** Fields the endpoint's strategy resets (`GetResetFields`): nobody owns them through it. */
  readonly resetFields: FieldSet;
  /** The object an empty `New()` of the kind serializes to, what a create compares against. */
  readonly emptyObject: () => Record<string, unknown>;
  /** Now, as RFC 3339 seconds. */
  readonly now: () => string;
}

/** `kubectl.kubernetes.io/last-applied-configuration`. */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

const BEFORE_FIRST_APPLY = 'before-first-apply';
const ANCIENT_CHANGES = 'ancient-changes';
const CURRENT_OPERATION = 'current-operation';
const MAX_UPDATE_MANAGERS = 10;

/** `stripmeta.go`: never owned (the set difference, not the subtrees). */
const STRIPPED = FieldSet.of(
  [field('apiVersion')],
  [field('kind')],
  [field('metadata')],
  ...['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'managedFields', 'resourceVersion'].map((name) => [field('metadata'), field(name)]),
);

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function metadataOf(object: Json): Json {
  return isObject(object['metadata']) ? object['metadata'] : {};
}

/** `BuildManagerIdentifier`: the entry without fields and time, and without apiVersion for appliers. */
function identity(manager: string, operation: 'Apply' | 'Update', apiVersion: string, subresource: string | undefined): string {
  return JSON.stringify({
    manager,
    operation,
    ...(operation === 'Apply' || apiVersion === '' ? {} : { apiVersion }),
    ...(subresource === undefined || subresource === '' ? {} : { subresource }),
  });
}

/** The field manager's own errors; the request answers them as the API server does. */
export class FieldManagerError extends Error {
  constructor(
    readonly kind: 'badRequest' | 'internal',
    message: string,
  ) {
    super(message);
    this.name = 'FieldManagerError';
  }
}

/** One field another manager owns with another value. */
export interface Conflict {
  /** The manager's identity (JSON). */
  readonly manager: string;
  readonly path: FieldPath;
}

/** An apply refused for the fields other managers own (`merge.Conflicts`). */
export class ApplyConflicts extends Error {
  constructor(readonly conflicts: readonly Conflict[]) {
    super(conflictMessage(conflicts));
    this.name = 'ApplyConflicts';
  }

  /** `metav1.StatusCause`s: one per field, `conflict with "manager"` (`internal/conflict.go`). */
  causes(): { reason: string; message: string; field: string }[] {
    return this.conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${printManager(c.manager)}`, field: pathString(c.path) }));
  }
}

/** `printManager`: the name quoted, its subresource, and `using <apiVersion>` for an updater. */
function printManager(id: string): string {
  let entry: ManagedFieldsEntry;
  try {
    entry = JSON.parse(id) as ManagedFieldsEntry;
  } catch {
    return JSON.stringify(id);
  }
  let text = JSON.stringify(entry.manager ?? '');
  if (entry.subresource !== undefined && entry.subresource !== '') text = `${text} with subresource ${JSON.stringify(entry.subresource)}`;
  if (entry.operation === 'Update') return `${text} using ${entry.apiVersion ?? ''}${entry.time === undefined ? '' : ` at ${entry.time}`}`;
  return text;
}

/** `getConflictMessage`: one conflict in a line, several grouped by manager in manager order. */
function conflictMessage(conflicts: readonly Conflict[]): string {
  if (conflicts.length === 1) return `Apply failed with 1 conflict: conflict with ${printManager(conflicts[0]!.manager)}: ${pathString(conflicts[0]!.path)}`;
  const byManager = new Map<string, FieldPath[]>();
  for (const c of conflicts) byManager.set(c.manager, [...(byManager.get(c.manager) ?? []), c.path]);
  const lines: string[] = [];
  for (const manager of [...byManager.keys()].sort()) {
    lines.push(`conflicts with ${printManager(manager)}:`);
    for (const path of byManager.get(manager)!) lines.push(`- ${pathString(path)}`);
  }
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
}

/**
 * `DecodeManagedFields`: entries by identity.
 * @throws Error naming the first entry that is not valid
 */
function decode(entries: unknown): Managed {
  const managed: Managed = new Map();
  if (entries === undefined || entries === null) return managed;
  if (!Array.isArray(entries)) throw new Error('managedFields must be a list');
  entries.forEach((raw: unknown, index) => {
    const entry = (isObject(raw) ? raw : {}) as ManagedFieldsEntry;
    if (entry.operation !== 'Apply' && entry.operation !== 'Update') throw new Error('operation must be `Apply` or `Update`');
    if (typeof entry.apiVersion !== 'string' || entry.apiVersion === '') throw new Error('apiVersion must not be empty');
    if (entry.fieldsType === undefined || entry.fieldsType === '') throw new Error(`missing fieldsType in managed fields entry ${index}`);
    if (entry.fieldsType !== 'FieldsV1') throw new Error(`invalid fieldsType ${JSON.stringify(entry.fieldsType)} in managed fields entry ${index}`);
    const manager = typeof entry.manager === 'string' ? entry.manager : '';
    const subresource = typeof entry.subresource === 'string' && entry.subresource !== '' ? entry.subresource : undefined;
    const set = entry.fieldsV1 === undefined || entry.fieldsV1 === null ? new FieldSet() : FieldSet.fromFieldsV1(entry.fieldsV1);
    managed.set(identity(manager, entry.operation, entry.apiVersion, subresource), {
      manager,
      operation: entry.operation,
      apiVersion: entry.apiVersion,
      subresource,
      set,
      time: typeof entry.time === 'string' ? entry.time : undefined,
    });
  });
  return managed;
}

function seconds(time: string | undefined): number {
  const at = time === undefined ? NaN : Date.parse(time);
  return Number.isNaN(at) ? 0 : Math.floor(at / 1000);
}

/** `encodeManagedFields`: sorted by operation, time (seconds), manager, apiVersion, subresource; none when empty. */
function encode(managed: Managed): ManagedFieldsEntry[] | undefined {
  if (managed.size === 0) return undefined;
  const owners = [...managed.values()].sort(
    (p, q) =>
      compare(p.operation, q.operation) ||
      seconds(p.time) - seconds(q.time) ||
      compare(p.manager, q.manager) ||
      compare(p.apiVersion, q.apiVersion) ||
      compare(p.subresource ?? '', q.subresource ?? ''),
  );
  return owners.map((o) => ({
    manager: o.manager,
    operation: o.operation,
    apiVersion: o.apiVersion,
    ...(o.time === undefined ? {} : { time: o.time }),
    fieldsType: 'FieldsV1',
    fieldsV1: o.set.toFieldsV1(),
    ...(o.subresource === undefined ? {} : { subresource: o.subresource }),
  }));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The object with `managedFields` set, or without the member when there are none. */
function withManagedFields<T extends Json>(object: T, managed: Managed): T {
  const { managedFields: _old, ...metadata } = metadataOf(object);
  const entries = encode(managed);
  return { ...object, metadata: entries === undefined ? metadata : { ...metadata, managedFields: entries } };
}

function withoutManagedFields(object: Json): Json {
  if (!isObject(object['metadata']) || !('managedFields' in object['metadata'])) return object;
  const { managedFields: _old, ...metadata } = object['metadata'];
  return { ...object, metadata };
}

/** `isResetManagedFields`: `[]` or `[{}]` asks for the managed fields to be cleared. */
function isReset(entries: unknown): boolean {
  if (!Array.isArray(entries)) return false;
  if (entries.length === 0) return true;
  return entries.length === 1 && isObject(entries[0]) && Object.keys(entries[0]).length === 0;
}

/**
 * The object as its Go type serializes it: the members of the empty object it lacks (structs that
 * are `{}`, nil lists that are null) filled in, so that a write compares as a typed one does.
 */
function typedShape(object: Json, empty: Json): Json {
  const out: Json = { ...object };
  for (const [name, value] of Object.entries(empty)) {
    if (!(name in out)) out[name] = value;
    else if (isObject(value) && isObject(out[name])) out[name] = typedShape(out[name] as Json, value);
  }
  return out;
}

/** The structured merge of an update: the fields it changed become `manager`'s (`Updater.Update`). */
function structuredUpdate(scope: FieldManagerScope, live: Json, next: Json, managed: Managed, manager: string, apiVersion: string): Managed {
  const empty = scope.emptyObject();
  const comparison = excludeFields(compareObjects(typedShape(withoutManagedFields(live), empty), typedShape(withoutManagedFields(next), empty), scope.type), scope.resetFields);
  const out = takeFields(managed, comparison, manager, true);
  const previous = out.get(manager)?.set ?? new FieldSet();
  const set = previous.difference(comparison.removed).union(comparison.modified).union(comparison.added).recursiveDifference(scope.resetFields);
  if (set.empty) out.delete(manager);
  else out.set(manager, { manager, operation: 'Update', apiVersion, subresource: scope.subresource, set, time: undefined });
  return out;
}

/**
 * `Updater.update`: other managers lose the fields this change modified or added (conflicts,
 * refused unless `force`) and the fields it removed; managers left with nothing go.
 * @throws ApplyConflicts when not forced and another manager owns a changed field
 */
function takeFields(managed: Managed, comparison: Comparison, workflow: string, force: boolean): Managed {
  const changed = comparison.modified.union(comparison.added);
  const conflicts: Conflict[] = [];
  const out: Managed = new Map();
  for (const [id, owner] of managed) {
    if (id === workflow) {
      out.set(id, owner);
      continue;
    }
    const taken = owner.set.intersection(changed);
    if (!taken.empty) for (const path of taken.paths()) conflicts.push({ manager: id, path });
    const kept = owner.set.difference(taken).difference(comparison.removed);
    if (!kept.empty) out.set(id, { ...owner, set: kept });
  }
  if (!force && conflicts.length > 0) throw new ApplyConflicts(conflicts.sort((a, b) => compare(a.manager, b.manager)));
  return out;
}

/** `stripMetaManager.stripFields` for one manager. */
function strip(managed: Managed, id: string): void {
  const owner = managed.get(id);
  if (owner === undefined) return;
  const set = owner.set.difference(STRIPPED);
  if (set.empty) managed.delete(id);
  else managed.set(id, { ...owner, set });
}

/** `managedFieldsUpdater.Update` over strip meta and the structured merge: the result under `id`, stamped when it took fields. */
function recordUpdate(scope: FieldManagerScope, live: Json, next: Json, managed: Managed, id: string): Managed {
  const out = structuredUpdate(scope, live, next, managed, CURRENT_OPERATION, scope.apiVersion);
  strip(out, CURRENT_OPERATION);
  const current = out.get(CURRENT_OPERATION);
  if (current !== undefined) {
    out.delete(CURRENT_OPERATION);
    const { manager, subresource } = JSON.parse(id) as { manager: string; subresource?: string };
    const previous = out.get(id);
    out.set(id, {
      manager,
      operation: 'Update',
      apiVersion: scope.apiVersion,
      subresource,
      set: previous === undefined ? current.set : current.set.union(previous.set),
      time: scope.now(),
    });
  }
  return capUpdateManagers(out);
}

/** `capManagersManager`: past 10 Update entries, the oldest merge into one `ancient-changes` entry per API version. */
function capUpdateManagers(managed: Managed): Managed {
  const updaters = [...managed.entries()].filter(([, owner]) => owner.operation === 'Update').map(([id]) => id);
  if (updaters.length <= MAX_UPDATE_MANAGERS) return managed;
  updaters.sort((a, b) => seconds(managed.get(a)!.time) - seconds(managed.get(b)!.time) || compare(a, b));
  const firstOfVersion = new Map<string, string>();
  let length = updaters.length;
  for (let i = 0; i < updaters.length && length > MAX_UPDATE_MANAGERS; i++) {
    const id = updaters[i]!;
    const owner = managed.get(id)!;
    const bucket = identity(ANCIENT_CHANGES, 'Update', owner.apiVersion, undefined);
    const first = firstOfVersion.get(owner.apiVersion);
    if (first === undefined) {
      firstOfVersion.set(owner.apiVersion, id);
      continue;
    }
    if (!managed.has(bucket)) {
      const firstOwner = managed.get(first)!;
      managed.delete(first);
      managed.set(bucket, { ...firstOwner, manager: ANCIENT_CHANGES, subresource: undefined });
    }
    const existing = managed.get(bucket)!;
    managed.set(bucket, { ...existing, set: owner.set.union(existing.set), time: owner.time });
    managed.delete(id);
    length--;
  }
  return managed;
}

function updaterIdentity(scope: FieldManagerScope, manager: string): string {
  return identity(manager === '' ? 'unknown' : manager, 'Update', scope.apiVersion, scope.subresource);
}

/**
 * The managed fields of a create (`live` undefined), update or patch that stores `next`
 * (`FieldManager.UpdateNoErrors`): `next` with its `managedFields`. The request's own managed
 * fields are taken when it sends valid ones (not through a subresource), `[]` clears them, and an
 * update of an object without any records none.
 */
export function updateFields<T extends object>(scope: FieldManagerScope, liveValue: T | undefined, nextValue: T, manager: string): T {
  const live = liveValue as unknown as Json | undefined;
  const next = nextValue as unknown as Json;
  const liveObject: Json = live ?? scope.emptyObject();
  let managed: Managed;
  const newEntries = metadataOf(next)['managedFields'];
  const liveManaged = (): Managed => {
    try {
      return decode(metadataOf(liveObject)['managedFields']);
    } catch {
      return new Map();
    }
  };
  if (scope.subresource !== undefined) managed = liveManaged();
  else if (isReset(newEntries)) managed = new Map();
  else {
    try {
      managed = decode(newEntries);
    } catch {
      managed = new Map();
    }
    if (managed.size === 0) managed = liveManaged();
  }
  // skipnonapplied.go: an existing object that has no managed fields keeps none.
  if (managed.size === 0 && live !== undefined) return withManagedFields(next, managed) as unknown as T;
  try {
    return withManagedFields(next, recordUpdate(scope, liveObject, next, managed, updaterIdentity(scope, manager))) as unknown as T;
  } catch {
    // UpdateNoErrors: the live object's managed fields stay.
    return withManagedFields(next, liveManaged()) as unknown as T;
  }
}

/** What an apply produced: the object to store (undefined when nothing but ownership changed, or nothing at all), and the managed fields. */
interface Applied {
  readonly object: Json | undefined;
  readonly managed: Managed;
}

/**
 * A server-side apply of `config` by `manager` to `live` (an existing object, or undefined to
 * create one): the merged object with its managed fields (`FieldManager.Apply`). `unchanged` is
 * true when the apply changed neither a field nor an owner.
 * @throws FieldManagerError 400 for a configuration of another kind or with managedFields, 500 for one the types refuse
 * @throws ApplyConflicts when not forced and other managers own fields it sets to other values
 */
export function applyFields(scope: FieldManagerScope, live: Json | undefined, config: Json, manager: string, force: boolean): { readonly object: Json; readonly unchanged: boolean } {
  // An apply that creates merges into nothing (the API server's empty object converts back to nothing but defaults).
  const liveObject: Json = live ?? {};
  let managed: Managed;
  try {
    managed = decode(metadataOf(liveObject)['managedFields']);
  } catch (error) {
    throw new FieldManagerError('internal', `failed to decode managed fields: ${(error as Error).message}`);
  }
  // versioncheck.go
  const gvk = groupVersionKind(config);
  if (gvk.apiVersion !== scope.apiVersion || gvk.kind !== scope.kind) throw new FieldManagerError('badRequest', `invalid object type: ${gvk.text}`);
  const run = (forced: boolean): Applied => applyFirst(scope, liveObject, config, managed, manager, forced);
  let applied: Applied;
  try {
    applied = run(force);
  } catch (error) {
    // lastappliedmanager.go: kubectl's own apply takes over what its client-side apply set.
    if (!(error instanceof ApplyConflicts) || manager !== 'kubectl') throw error;
    const allowed = allowedByLastApplied(scope, liveObject);
    if (allowed === undefined) throw error;
    const remaining = error.conflicts.filter((c) => !allowed.has(c.path));
    if (remaining.length > 0) throw new ApplyConflicts(remaining);
    applied = run(true);
  }
  const before = withoutManagedFields(liveObject);
  let object = applied.object ?? before;
  // lastappliedupdater.go: kubectl's annotation follows what kubectl applies.
  if (manager === 'kubectl' && typeof metadataOf(object)['annotations'] === 'object' && hasLastApplied(object)) {
    object = withAnnotation(object, LAST_APPLIED_ANNOTATION, lastAppliedOf(config));
  }
  const result = withManagedFields(object, applied.managed);
  return { object: result, unchanged: live !== undefined && jsonEqual(result, live) };
}

/** skipnonapplied.go, then the rest of the chain: the first apply to an object without managed fields first gives its fields to `before-first-apply`. */
function applyFirst(scope: FieldManagerScope, live: Json, config: Json, managed: Managed, manager: string, force: boolean): Applied {
  let current = managed;
  if (current.size === 0) {
    current = recordUpdate(scope, scope.emptyObject(), live, current, identity(BEFORE_FIRST_APPLY, 'Update', scope.apiVersion, scope.subresource));
  }
  const id = identity(manager === '' ? 'unknown' : manager, 'Apply', scope.apiVersion, scope.subresource);
  const { object, managed: out } = structuredApply(scope, live, config, current, id, force);
  strip(out, id);
  const owner = out.get(id);
  if (object !== undefined && owner !== undefined) out.set(id, { ...owner, time: scope.now() });
  return { object, managed: out };
}

/** `structuredMergeManager.Apply` and `Updater.Apply`: merge, prune, take ownership. */
function structuredApply(scope: FieldManagerScope, liveWithFields: Json, config: Json, managed: Managed, id: string, force: boolean): Applied {
  if (metadataOf(config)['managedFields'] !== undefined) throw new FieldManagerError('badRequest', 'metadata.managedFields must be nil');
  const errors = validationErrors(config, scope.type);
  if (errors.length > 0) {
    const meta = metadataOf(config);
    const where = `${String(meta['namespace'] ?? '')}/${String(meta['name'] ?? '')}; ${groupVersionKind(config).text}`;
    const detail = errors.length === 1 ? errors[0]! : ['errors:', ...errors.map((e) => `  ${e}`)].join('\n');
    throw new FieldManagerError('internal', `failed to create typed patch object (${where}): ${detail}`);
  }
  const live = withoutManagedFields(liveWithFields);
  let merged = mergeObjects(live, config, scope.type) as Json;
  const lastSet = managed.get(id);
  const set = fieldSetOf(config, scope.type).recursiveDifference(scope.resetFields);
  const { manager } = JSON.parse(id) as { manager: string };
  const out: Managed = new Map(managed);
  out.set(id, { manager, operation: 'Apply', apiVersion: scope.apiVersion, subresource: scope.subresource, set, time: lastSet?.time });
  if (lastSet !== undefined && !lastSet.set.empty) merged = prune(merged, out, lastSet.set, scope.type);
  const comparison = excludeFields(compareObjects(live, merged, scope.type), scope.resetFields);
  const taken = takeFields(out, comparison, id, force);
  return { object: jsonEqual(live, merged) ? undefined : merged, managed: taken };
}

/**
 * `Updater.prune`: the fields the applier set last time and not this time go, unless a manager
 * (the applier's new configuration included) owns them, or something under them.
 */
function prune(merged: Json, managed: Managed, lastSet: FieldSet, type: FieldType): Json {
  const asObject = (value: unknown): Json => (isObject(value) ? value : {});
  const last = lastSet.withFieldsAsMembers();
  let pruned = asObject(removeFields(merged, last, type));
  // addBackOwnedItems
  let owned = new FieldSet();
  for (const owner of managed.values()) owned = owned.union(owner.set);
  const mergedSet = fieldSetOf(merged, type).withFieldsAsMembers();
  const prunedSet = fieldSetOf(pruned, type).withFieldsAsMembers();
  pruned = asObject(removeFields(merged, mergedSet.difference(prunedSet.union(owned.withFieldsAsMembers())), type));
  // addBackDanglingItems
  const keptSet = fieldSetOf(pruned, type).withFieldsAsMembers();
  return asObject(removeFields(merged, mergedSet.difference(keptSet).intersection(last), type));
}

/** `allowedConflictsFromLastApplied`: fields the annotation sets to what the live object still has. */
function allowedByLastApplied(scope: FieldManagerScope, live: Json): FieldSet | undefined {
  const annotations = metadataOf(live)['annotations'];
  const text = isObject(annotations) ? annotations[LAST_APPLIED_ANNOTATION] : undefined;
  if (typeof text !== 'string' || text === '') return undefined;
  let lastApplied: unknown;
  try {
    lastApplied = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(lastApplied) || lastApplied['apiVersion'] !== scope.apiVersion) return undefined;
  const comparison = compareObjects(lastApplied, withoutManagedFields(live), scope.type);
  return fieldSetOf(lastApplied, scope.type).difference(comparison.modified).difference(comparison.added).difference(comparison.removed);
}

function hasLastApplied(object: Json): boolean {
  const annotations = metadataOf(object)['annotations'];
  const value = isObject(annotations) ? annotations[LAST_APPLIED_ANNOTATION] : undefined;
  return typeof value === 'string' && value !== '';
}

/** `buildLastApplied`: the applied object without the annotation, as Go's encoder writes an unstructured object. */
function lastAppliedOf(config: Json): string {
  const meta = metadataOf(config);
  const annotations = isObject(meta['annotations']) ? { ...meta['annotations'] } : undefined;
  if (annotations !== undefined) delete annotations[LAST_APPLIED_ANNOTATION];
  const { annotations: _old, ...rest } = meta;
  const metadata = annotations === undefined || Object.keys(annotations).length === 0 ? rest : { ...rest, annotations };
  return `${sortedJson({ ...config, metadata })}\n`;
}

function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (isObject(value)) {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${sortedJson(value[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

function withAnnotation(object: Json, key: string, value: string): Json {
  const meta = metadataOf(object);
  return { ...object, metadata: { ...meta, annotations: { ...(isObject(meta['annotations']) ? meta['annotations'] : {}), [key]: value } } };
}

/** The apiVersion and kind of an object, and how Go prints them (`apps/v1, Kind=Deployment`, `/v1, Kind=Pod`). */
function groupVersionKind(object: Json): { readonly apiVersion: string; readonly kind: string; readonly text: string } {
  const apiVersion = typeof object['apiVersion'] === 'string' ? object['apiVersion'] : '';
  const kind = typeof object['kind'] === 'string' ? object['kind'] : '';
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  return { apiVersion, kind, text: `${group}/${version}, Kind=${kind}` };
}
