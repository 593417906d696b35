import type { KubeConfig } from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { concatMap, defer, Observable, of } from 'rxjs';
import type { KubeObject } from '../base/object';
import { resourcePath, type Resource } from '../resources/resource';
import { encodeQuery } from '../sources/transport';
import { atResourceVersion, type Edit, type Write } from './edit';
import { sendWrite } from './writeRequest';

/** Options of {@link writeEdit}. */
export interface WriteEditOptions {
  /**
   * Which of a write's two forms to send: `'json'` (default), the JSON Patch, precise to the
   * path and to the list index; or `'merge'`, the merge patch, which replaces changed lists whole
   * (custom resources take no strategic merge patch, so a merge patch is the other choice that
   * works for every resource).
   */
  readonly patchType?: 'json' | 'merge';
  /** The field manager recorded in `managedFields` for the write. Default: the server's (the user agent, `rx-informer`). */
  readonly fieldManager?: string;
  /** `true` sends the writes with `dryRun=All`: validated and admitted, answered, never stored. */
  readonly dryRun?: boolean;
}

const CONTENT_TYPES = { json: 'application/json-patch+json', merge: 'application/merge-patch+json' } as const;

/**
 * Sends an {@link Edit}'s writes through a KubeConfig, in order, and emits the object as the last
 * write left it, once; with no writes it emits `edit.object` without a request.
 *
 * 1. Each write is a PATCH of the object (or its `status` subresource), with the sources'
 *    transport: the KubeConfig's credentials, TLS and proxy, per request.
 * 2. A second write (an edit of both the object and its status) is sent at the resourceVersion
 *    the first one's answer carries ({@link atResourceVersion}).
 * 3. A write over a version newer than the edit's fails with a {@link ConflictError}; any other
 *    failure is the sources' typed error (`StatusError`, `NetworkError`, `ConfigError`). When the
 *    second write fails, the first has been made.
 * 4. Cold: subscribing sends; unsubscribing aborts the request in flight.
 *
 * ## Example
 * ```ts
 * import { lastValueFrom } from 'rxjs';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * import { pods, type Pod } from 'rx-informer';
 * import { edit, writeEdit } from 'rx-informer/writes';
 *
 * declare const kubeConfig: KubeConfig;
 * declare const cached: Pod;
 * const labelled = edit(cached, (draft) => {
 *   (draft.metadata.labels ??= {})['tier'] = 'web';
 * });
 * const pod = await lastValueFrom(writeEdit(kubeConfig, pods, labelled, { fieldManager: 'tier-labeller' }));
 * ```
 *
 * @param kubeConfig the cluster and credentials to write with.
 * @param resource the resource the object belongs to: its URL.
 * @param change the edit, from {@link edit}.
 * @param options the patch type, field manager, dry run.
 * @returns a cold Observable of the stored object: one value, then complete.
 */
export function writeEdit<T extends KubeObject>(kubeConfig: KubeConfig, resource: Resource<T>, change: Edit<T>, options: WriteEditOptions = {}): Observable<T> {
  const [first, ...rest] = change.writes;
  if (first === undefined) return of(change.object);
  return rest.reduce<Observable<T>>(
    (previous, write) => previous.pipe(concatMap((stored) => sendEditWrite(kubeConfig, resource, change.before, atResourceVersion(write, stored.metadata.resourceVersion), options))),
    defer(() => sendEditWrite(kubeConfig, resource, change.before, first, options)),
  );
}

function sendEditWrite<T extends KubeObject>(kubeConfig: KubeConfig, resource: Resource<T>, object: T, write: Write, options: WriteEditOptions): Observable<T> {
  const patchType = options.patchType ?? 'json';
  const path = resourcePath(resource, { namespace: object.metadata.namespace, name: object.metadata.name }) + (write.subresource === undefined ? '' : `/${write.subresource}`);
  return sendWrite<T>(kubeConfig, {
    method: 'PATCH',
    path,
    query: encodeQuery({ fieldManager: options.fieldManager, dryRun: options.dryRun === true ? 'All' : undefined }),
    contentType: CONTENT_TYPES[patchType],
    body: JSON.stringify(patchType === 'json' ? write.jsonPatch : write.mergePatch),
    kind: patchType === 'json' ? 'json-patch' : 'merge-patch',
  });
}
