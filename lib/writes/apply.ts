import type { KubeConfig } from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import type { Observable } from 'rxjs';
import type { KubeObject } from '../base/object';
import { apiVersionOf, resourcePath, type Resource } from '../resources/resource';
import { encodeQuery } from '../sources/transport';
import { sendWrite } from './writeRequest';

/**
 * Server-side apply (KEP-555), the client half: a partial object sent as
 * `application/apply-patch+yaml` (JSON is YAML) with a field manager. The API server merges it
 * into the stored object, records in `metadata.managedFields` that the manager owns each field it
 * sent, and refuses (409) to change a field another manager owns unless forced.
 */

/** `T` with every member optional, all the way down: the fields a manager has an opinion about. */
export type PartialObject<T> = T extends readonly (infer Item)[]
  ? readonly PartialObject<Item>[]
  : T extends object
    ? { readonly [K in keyof T]?: PartialObject<T[K]> }
    : T;

/**
 * What {@link apply} sends: the fields this manager owns, nothing else (a field left out is one
 * it gives up, and the server removes it unless another manager owns it too). `metadata.name` is
 * required, and `metadata.namespace` for a namespaced resource; `apiVersion` and `kind` default
 * to the resource's. List items need their keys (a container its `name`, a port its
 * `containerPort` and `protocol`) for the server to know which item a field belongs to.
 */
export type ApplyConfiguration<T extends KubeObject> = PartialObject<Omit<T, 'metadata' | 'apiVersion' | 'kind'>> & {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: PartialObject<Omit<T['metadata'], 'name' | 'namespace'>> & { readonly name: string; readonly namespace?: string };
};

/** Options of {@link apply} and {@link applyStatus}. */
export interface ApplyOptions {
  /**
   * Who owns the fields sent: a stable name per controller (`example.com/widget-controller`), the
   * same across restarts and replicas, or ownership moves around and every apply conflicts with
   * the last. Required.
   */
  readonly fieldManager: string;
  /**
   * Take fields another manager owns instead of failing with an {@link ApplyConflictError}; they
   * become this manager's alone (`kubectl apply --server-side --force-conflicts`). Default false.
   * Controllers usually force the fields they own by design (controller-runtime's
   * `client.ForceOwnership`, kube-rs's `PatchParams::apply(..).force()`).
   */
  readonly force?: boolean;
  /** `true` sends `dryRun=All`: validated and admitted, answered, never stored. */
  readonly dryRun?: boolean;
  /** What the server does with unknown or duplicate fields: `Strict` fails, `Warn` (its default) warns, `Ignore` drops them. */
  readonly fieldValidation?: 'Ignore' | 'Warn' | 'Strict';
}

/** Server-side apply's media type; a JSON body is valid YAML (`kubectl apply --server-side` sends YAML, client-go JSON). */
const APPLY_PATCH = 'application/apply-patch+yaml';

/**
 * Applies a partial object with a field manager (server-side apply), creating the object when the
 * name is free. Emits the object as stored, once.
 *
 * 1. The request is a PATCH of `resource`'s object named by `metadata.name` (and
 *    `metadata.namespace`), `Content-Type: application/apply-patch+yaml`, the object as JSON,
 *    `?fieldManager=...` and `&force=true` when forced: the same for built-ins and custom
 *    resources.
 * 2. Fields another manager owns, with different values, fail the apply with an
 *    {@link ApplyConflictError} naming each manager and field (409), unless `force`.
 * 3. A `metadata.resourceVersion` in the object is a precondition: a newer object fails it with a
 *    {@link ConflictError}. Leave it out to apply whatever the version (the usual case).
 * 4. Changes under `status` are ignored by a resource with a status subresource: use
 *    {@link applyStatus}.
 * 5. Cold: subscribing sends; unsubscribing aborts the request.
 *
 * ## Example
 * ```ts
 * import { lastValueFrom } from 'rxjs';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * import { configMaps } from 'rx-informer';
 * import { apply, ApplyConflictError } from 'rx-informer/writes';
 *
 * declare const kubeConfig: KubeConfig;
 * try {
 *   await lastValueFrom(
 *     apply(kubeConfig, configMaps, { metadata: { name: 'web-settings', namespace: 'shop' }, data: { mode: 'fast' } }, { fieldManager: 'example.com/settings' }),
 *   );
 * } catch (error) {
 *   if (error instanceof ApplyConflictError) console.error(error.conflicts); // [{ manager: 'kubectl', field: '.data.mode', ... }]
 *   else throw error;
 * }
 * ```
 *
 * @param kubeConfig the cluster and credentials to write with.
 * @param resource the object's resource (built in, or a custom resource from `defineResource`).
 * @param object the fields this manager owns.
 * @param options the field manager, force, dry run, field validation.
 * @returns a cold Observable of the stored object: one value, then complete.
 * @throws TypeError when `fieldManager` or `metadata.name` is empty, or a namespaced resource's
 *   object has no `metadata.namespace` (checked when called).
 */
export function apply<T extends KubeObject>(kubeConfig: KubeConfig, resource: Resource<T>, object: ApplyConfiguration<T>, options: ApplyOptions): Observable<T> {
  return applyTo(kubeConfig, resource, object, options, undefined);
}

/**
 * {@link apply} through the `status` subresource: the manager's opinion of the status (a
 * controller's conditions, its `observedGeneration`). Only `status` (and the object's identity)
 * counts; the server ignores the rest. Fields are owned per subresource: a status field another
 * manager applied conflicts as in {@link apply}.
 *
 * ## Example
 * ```ts
 * import { lastValueFrom } from 'rxjs';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * import { defineResource, type KubeObject } from 'rx-informer';
 * import { applyStatus, setCondition, type Condition } from 'rx-informer/writes';
 *
 * interface Widget extends KubeObject {
 *   readonly status?: { readonly conditions?: readonly Condition[]; readonly observedGeneration?: number };
 * }
 * const widgets = defineResource<Widget>({ group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget', namespaced: true });
 * declare const kubeConfig: KubeConfig;
 * declare const widget: Widget;
 *
 * const conditions = setCondition(widget.status?.conditions, { type: 'Ready', status: 'True', reason: 'Available', message: '', observedGeneration: widget.metadata.generation });
 * await lastValueFrom(
 *   applyStatus(kubeConfig, widgets, { metadata: { name: widget.metadata.name, namespace: widget.metadata.namespace }, status: { conditions } }, { fieldManager: 'example.com/widgets', force: true }),
 * );
 * ```
 *
 * @param kubeConfig the cluster and credentials to write with.
 * @param resource the object's resource; it must have a status subresource.
 * @param object the object's identity and the status fields this manager owns.
 * @param options as for {@link apply}.
 * @returns a cold Observable of the stored object: one value, then complete.
 * @throws TypeError as {@link apply}.
 */
export function applyStatus<T extends KubeObject>(kubeConfig: KubeConfig, resource: Resource<T>, object: ApplyConfiguration<T>, options: ApplyOptions): Observable<T> {
  return applyTo(kubeConfig, resource, object, options, 'status');
}

function applyTo<T extends KubeObject>(
  kubeConfig: KubeConfig,
  resource: Resource<T>,
  object: ApplyConfiguration<T>,
  options: ApplyOptions,
  subresource: 'status' | undefined,
): Observable<T> {
  const { name, namespace } = object.metadata;
  if (typeof options.fieldManager !== 'string' || options.fieldManager === '') throw new TypeError('apply needs a fieldManager: the name that owns the fields it sends');
  if (typeof name !== 'string' || name === '') throw new TypeError(`apply needs metadata.name: server-side apply names the ${resource.kind} it writes`);
  if (resource.namespaced && (namespace === undefined || namespace === '')) throw new TypeError(`apply needs metadata.namespace: ${resource.plural} are namespaced`);
  const body = { ...object, apiVersion: object.apiVersion ?? apiVersionOf(resource), kind: object.kind ?? resource.kind };
  return sendWrite<T>(kubeConfig, {
    method: 'PATCH',
    path: resourcePath(resource, { namespace, name }) + (subresource === undefined ? '' : `/${subresource}`),
    query: encodeQuery({
      fieldManager: options.fieldManager,
      force: options.force === true ? true : undefined,
      dryRun: options.dryRun === true ? 'All' : undefined,
      fieldValidation: options.fieldValidation,
    }),
    contentType: APPLY_PATCH,
    body: JSON.stringify(body),
    kind: 'apply',
  });
}
