import type { KubeConfig } from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import type { Observable } from 'rxjs';
import type { KubeObject } from '../base/object';
import type { Resource } from '../resources/resource';
import { list$, type IncrementalDecoding } from './list';
import type { ListerWatcher, ListOptions, ListPage, WatchScope, WatchEvent, WatchOptions } from './listerWatcher';
import { watch$ } from './watch';


/** How {@link kubeListerWatcher}'s requests behave, beyond their scope. */
export interface KubeListerWatcherOptions {
  /** Lists read one page ahead (default true): `readAhead` of {@link list$}'s options. */
  readonly listReadAhead?: boolean;
  /** Leave the server's bytes out of error excerpts. Default: true for core `secrets` only. */
  readonly withholdExcerpts?: boolean;
  /**
   * The `Accept` headers of lists and of watches (`accept` of {@link list$} and {@link watch$}).
   * Default `application/json` for both. `metadataListerWatcher` asks for metadata with them.
   */
  readonly accept?: { readonly list: string; readonly watch: string };
  /**
   * Ask for gzip-compressed responses, lists and watches, as client-go does (default true):
   * `compression` of {@link list$} and {@link watch$}.
   */
  readonly compression?: boolean;
  /** When a list response is decoded as it arrives: `incrementalDecoding` of {@link list$}. */
  readonly incrementalDecoding?: IncrementalDecoding;
}

/**
 * The ListerWatcher of one resource in one scope, over HTTP: what an informer hands its reflector.
 *
 * The scope (namespace, selectors) is fixed here; each call adds the per-request options
 * (resourceVersion, limit, timeoutSeconds ...). A selector given in those options replaces the
 * scope's one.
 *
 * ## Example
 * ```ts
 * import type { KubeConfig } from '@kubernetes/client-node';
 * import { pods } from 'rx-informer';
 * import { kubeListerWatcher } from 'rx-informer/pipeline';
 *
 * declare const kubeConfig: KubeConfig;
 * const podsOfWeb = kubeListerWatcher(kubeConfig, pods, { namespace: 'default', labelSelector: 'app=web' });
 * podsOfWeb.list({ resourceVersion: '0' }).subscribe((page) => console.log(page.items.length));
 * podsOfWeb.watch({ resourceVersion: '10245', allowWatchBookmarks: true }).subscribe((event) => console.log(event.type));
 * ```
 * @param kubeConfig the cluster and credentials, as client-node loaded them.
 * @param resource the resource type.
 * @param scope one namespace (default all; ignored for cluster-scoped resources) and selectors.
 * @param options read-ahead and decoding of list pages, compression and error excerpts.
 */
export function kubeListerWatcher<T extends KubeObject = KubeObject>(
  kubeConfig: KubeConfig,
  resource: Resource<T>,
  scope: WatchScope = {},
  options: KubeListerWatcherOptions = {},
): ListerWatcher<T> {
  const scoped = <O extends ListOptions | WatchOptions>(request: O): O & WatchScope => ({
    ...request,
    namespace: scope.namespace,
    labelSelector: request.labelSelector ?? scope.labelSelector,
    fieldSelector: request.fieldSelector ?? scope.fieldSelector,
    shardSelector: request.shardSelector ?? scope.shardSelector,
  });
  const { withholdExcerpts, compression, incrementalDecoding } = options;
  return {
    supportsStreamingList: true,
    list: (listOptions: ListOptions): Observable<ListPage<T>> =>
      list$(kubeConfig, resource, { ...scoped(listOptions), readAhead: options.listReadAhead, withholdExcerpts, compression, incrementalDecoding, accept: options.accept?.list }),
    watch: (watchOptions: WatchOptions): Observable<WatchEvent<T>> => watch$(kubeConfig, resource, { ...scoped(watchOptions), withholdExcerpts, compression, accept: options.accept?.watch }),
  };
}
