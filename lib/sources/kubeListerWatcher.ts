import type { KubeConfig } from '@kubernetes/client-node';
import type { Observable } from 'rxjs';
import type { KubeObject } from '../store/object';
import type { Resource } from '../resource';
import { list$ } from './list';
import type { ListerWatcher, ListOptions, ListPage, Scope, WatchEvent, WatchOptions } from './listerWatcher';
import { watch$ } from './watch';

export type { Scope } from './listerWatcher';

/**
 * The ListerWatcher of one resource in one scope, over HTTP: what an informer hands its reflector.
 *
 * The scope (namespace, selectors) is fixed here; each call adds the per-request options
 * (resourceVersion, limit, timeoutSeconds ...). A selector given in those options replaces the
 * scope's one.
 *
 * ## Example
 * ```ts
 * const podsOfWeb = kubeListerWatcher(kubeConfig, pods, { namespace: 'default', labelSelector: 'app=web' });
 * podsOfWeb.list({ resourceVersion: '0' }).subscribe((page) => console.log(page.items.length));
 * podsOfWeb.watch({ resourceVersion: '10245', allowWatchBookmarks: true }).subscribe((event) => console.log(event.type));
 * ```
 * @param kubeConfig the cluster and credentials, as client-node loaded them.
 * @param resource the resource type.
 * @param scope one namespace (default all; ignored for cluster-scoped resources) and selectors.
 */
export function kubeListerWatcher<T extends KubeObject = KubeObject>(
  kubeConfig: KubeConfig,
  resource: Resource<T>,
  scope: Scope = {},
): ListerWatcher<T> {
  const scoped = <O extends ListOptions | WatchOptions>(options: O): O & Scope => ({
    ...options,
    namespace: scope.namespace,
    labelSelector: options.labelSelector ?? scope.labelSelector,
    fieldSelector: options.fieldSelector ?? scope.fieldSelector,
  });
  return {
    list: (options: ListOptions): Observable<ListPage<T>> => list$(kubeConfig, resource, scoped(options)),
    watch: (options: WatchOptions): Observable<WatchEvent<T>> => watch$(kubeConfig, resource, scoped(options)),
  };
}
