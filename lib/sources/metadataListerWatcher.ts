import type { KubeConfig } from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { map } from 'rxjs';
import type { Resource } from '../resources/resource';
import { kubeListerWatcher, type KubeListerWatcherOptions } from './kubeListerWatcher';
import type { ListerWatcher, WatchScope } from './listerWatcher';
import type { KubeObject } from '../base/object';
import { SharedMetadata } from './sharedMetadata';
import { METADATA_ACCEPT, METADATA_LIST_ACCEPT, toPartialObjectMetadata, type MetadataOnlyOptions, type PartialObjectMetadata } from './partialObjectMetadata';

/**
 * The ListerWatcher of one resource's metadata: lists and watches that ask the API server for
 * `PartialObjectMetadata` (client-go's `metadata` client and `metadatainformer`), and reduce what
 * comes back to {@link PartialObjectMetadata}, so that a server that answers whole objects (one
 * that cannot convert, answering the plain-JSON fallback clause) fills the cache the same way.
 *
 * Lists (and their continued pages) ask for `PartialObjectMetadataList`; watches, streaming lists
 * included, ask for `PartialObjectMetadata`, as each event carries one object. Bookmarks keep their
 * resourceVersion and annotations (the initial-events-end one). A server that refuses the
 * conversion outright answers 406 NotAcceptable: a `StatusError` with `code` 406, which the
 * informer retries with backoff and shows on `health$`, like any other refusal.
 *
 * Costs: the server still reads the whole object, but sends, and the client parses and keeps,
 * only its metadata. Here each object's metadata is copied (shallowly) to leave `managedFields`
 * out and to share equal `labels` and `ownerReferences` with the other objects of the cache
 * (`SharedMetadata`: one `JSON.stringify` of those two fields per object; the shared values are
 * frozen).
 *
 * ## Example
 * ```ts
 * import type { KubeConfig } from '@kubernetes/client-node';
 * import { informerFrom, metadataListerWatcher } from 'rx-informer/pipeline';
 * import { pods } from 'rx-informer';
 *
 * declare const kubeConfig: KubeConfig;
 * const podMetadata = metadataListerWatcher(kubeConfig, pods, { namespace: 'default' });
 * informerFrom(podMetadata, { name: 'pod metadata' }).informer$.subscribe((snapshot) => console.log(snapshot.size));
 * ```
 * @param kubeConfig the cluster and credentials, as client-node loaded them.
 * @param resource the resource whose objects' metadata to list and watch.
 * @param scope one namespace (default all) and selectors.
 * @param options what to keep of the metadata, read-ahead of list pages and error excerpts.
 */
export function metadataListerWatcher(
  kubeConfig: KubeConfig,
  resource: Resource<KubeObject>,
  scope: WatchScope = {},
  options: KubeListerWatcherOptions & MetadataOnlyOptions = {},
): ListerWatcher<PartialObjectMetadata> {
  const { keepManagedFields, dropAnnotations, ...transport } = options;
  const lean = { keepManagedFields, dropAnnotations };
  const whole = kubeListerWatcher(kubeConfig, resource, scope, { ...transport, accept: { list: METADATA_LIST_ACCEPT, watch: METADATA_ACCEPT } });
  // One table per informer: its objects share equal labels and owner references (sharedMetadata.ts).
  const shared = new SharedMetadata();
  const reduce = (object: KubeObject): PartialObjectMetadata => {
    const reduced = toPartialObjectMetadata(object, lean);
    const metadata = shared.share(reduced.metadata);
    return metadata === reduced.metadata ? reduced : { ...reduced, metadata };
  };
  return {
    supportsStreamingList: whole.supportsStreamingList,
    list: (listOptions) => whole.list(listOptions).pipe(map((page) => ({ ...page, items: page.items.map(reduce) }))),
    watch: (watchOptions) => whole.watch(watchOptions).pipe(map((event) => ({ type: event.type, object: reduce(event.object) }))),
  };
}
