/**
 * rx-informer/pipeline: the stages an informer is built from, to assemble your own or to feed an
 * informer from another source: the list and watch sources over a `KubeConfig`, the seam they
 * implement (`ListerWatcher`), the reflector (`reflect`, and `reflectorEvents` with its health and
 * request reports as data), the indexer (`indexer`) and `informerFrom`, the informer over any
 * `ListerWatcher`.
 *
 * This module only re-exports.
 */

export { informerFrom, informerFromNamespaces } from './informer/informer';
export type { InformerFromNamespacesOptions } from './informer/informer';
export { list$ } from './sources/list';
export type { ListStreamOptions } from './sources/list';
export { watch$ } from './sources/watch';
export type { WatchStreamOptions } from './sources/watch';
export { kubeListerWatcher } from './sources/kubeListerWatcher';
export type { KubeListerWatcherOptions } from './sources/kubeListerWatcher';
export { metadataListerWatcher } from './sources/metadataListerWatcher';
export type { ListerWatcher, ListOptions, ListPage, WatchOptions, WatchEvent } from './sources/listerWatcher';
export { reflect, reflectorEvents } from './reflector/reflect';
export type { ReflectConfig } from './reflector/reflectConfig';
export type { ReflectorEvent, ReflectorReport, HealthReport } from './reflector/reflectorEvent';
export type { RequestEvent, RequestOpened, RequestEnded, RequestOutcome, RequestSummary } from './reflector/requestEvent';
export { indexer } from './store/indexer';
export type { IndexerConfig, IndexerBatchConfig } from './store/indexerConfig';
